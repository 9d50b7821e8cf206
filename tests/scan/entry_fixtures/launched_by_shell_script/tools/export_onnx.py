import torch

model = torch.nn.Linear(2, 2)
torch.onnx.export(model, torch.ones(1, 2), "model.onnx")
