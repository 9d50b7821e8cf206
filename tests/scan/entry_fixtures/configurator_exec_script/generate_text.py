import torch

temperature = 1.0
exec(open("overrides.py").read())

with torch.no_grad():
    print(torch.softmax(torch.randn(5, device="cuda") / temperature, dim=0))
