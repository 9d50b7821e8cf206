"""Device strings in the places real training scripts put them."""
import argparse  # expect: none

import torch  # expect: none
from torch.utils.data import DataLoader  # expect: none

parser = argparse.ArgumentParser()  # expect: none
parser.add_argument("--device", default="cuda")  # expect: DV001
parser.add_argument("--dtype", default="bfloat16")  # expect: none
parser.add_argument("--gpu", type=int, default=0)  # expect: none


def place(model, batch, args, rank):
    model.to("cuda")  # expect: DV001
    batch = batch.to(device="cuda:0", non_blocking=True)  # expect: DV001
    model.cuda()  # expect: DV002
    batch = batch.cuda(rank)  # expect: DV002
    state = torch.load("ckpt.pt", map_location="cuda:{}".format(rank))  # expect: DV001
    state2 = torch.load("ckpt.pt", map_location=lambda s, loc: s.cuda(rank))  # expect: DV002
    device = torch.device("cuda:%d" % args.gpu if torch.cuda.is_available() else "cpu")  # expect: DV001, CU001
    loader = DataLoader([], pin_memory=True, pin_memory_device="cuda")  # expect: DV005
    flag = batch.is_cuda  # expect: DV003
    return state, state2, device, loader, flag


def compare(device, args):
    use_amp = args.device.startswith("cuda")  # expect: DV004
    cpu = device.type == "cpu"  # expect: none
    npu = device.type == "npu"  # expect: none
    name = "model_cuda.pt"  # expect: none
    col = "cuda_time_total"  # expect: none
    return use_amp, cpu, npu, name, col
