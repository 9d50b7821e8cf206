import torch

MODEL = torch.nn.Linear(2, 2).eval()


def predict(values):
    with torch.no_grad():
        return MODEL(torch.tensor(values)).tolist()
