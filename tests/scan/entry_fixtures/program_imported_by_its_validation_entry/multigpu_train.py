"""Data-parallel training launched with torchrun; the model factory lives here too."""
import argparse

import torch
import torch.distributed as dist


def load_train_objs(width=16):
    model = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, 2))
    return model, torch.optim.SGD(model.parameters(), lr=0.01)


def main(total_epochs):
    dist.init_process_group("nccl")
    torch.cuda.set_device(0)
    model, optimizer = load_train_objs()
    model = model.to("cuda")
    for _ in range(total_epochs):
        optimizer.zero_grad()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="simple distributed training job")
    parser.add_argument("total_epochs", type=int)
    main(parser.parse_args().total_epochs)
