import torch

dev = "cuda" if torch.cuda.is_available() else "cpu"
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
stop = torch.tensor([1, 3, 5], device=dev)
data = torch.randn(64, 8)  # prepared on the CPU: not counted
for step in range(20):
    x = data[step % 8 * 8:(step % 8 + 1) * 8].to(dev)
    ids = torch.randint(0, 8, (8,), device=dev)
    keep = torch.isin(ids, stop)
    loss = model(x).pow(2).mean() + keep.float().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
