import torch

learning_rate = 3e-4
max_steps = 100
exec(open("overrides.py").read())

weights = torch.zeros(4, requires_grad=True, device="cuda")
optimizer = torch.optim.AdamW([weights], lr=learning_rate)
step = 0
while step < max_steps:
    loss = (weights - 1).pow(2).sum()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    step += 1
