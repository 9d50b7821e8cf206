import torch

from dataloader import make_loader


def main() -> None:
    model = torch.nn.Linear(32, 1).cuda()
    opt = torch.optim.Adam(model.parameters())
    for batch in make_loader():
        loss = model(batch).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
