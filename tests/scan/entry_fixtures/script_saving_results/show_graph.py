import torch

traced = torch.jit.trace(torch.nn.Linear(4, 2), torch.zeros(1, 4))
print(traced.graph)
