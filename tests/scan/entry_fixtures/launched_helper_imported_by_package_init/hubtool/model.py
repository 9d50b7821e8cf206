import torch


class TinyClassifier(torch.nn.Module):
    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, classes))

    def forward(self, x):
        return self.net(x)
