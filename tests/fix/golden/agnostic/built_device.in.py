import torch


def device_for(rank, gpu):
    a = torch.device("cuda:{}".format(rank))
    b = "cuda:%d" % gpu
    c = "cuda:" + str(rank)
    d = 'cuda:{r}'.format(r=rank)
    return a, b, c, d
