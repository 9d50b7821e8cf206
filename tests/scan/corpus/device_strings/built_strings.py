"""Device strings assembled at run time, and prefix tests on them."""
import logging  # expect: none
import os  # expect: none

import torch  # expect: none

log = logging.getLogger(__name__)  # expect: none


def device_for(rank: int, args):
    a = torch.device("cuda:{}".format(rank))  # expect: DV001
    b = torch.device("cuda:{0}".format(rank))  # expect: DV001
    c = "cuda:{rank}".format(rank=rank)  # expect: DV001
    d = "cuda:%d" % rank  # expect: DV001
    e = 'cuda:%s' % (args.gpu,)  # expect: DV001
    f = "cuda:" + str(rank)  # expect: DV001
    g = f"cuda:{rank}"  # expect: DV001
    h = torch.device("cuda", rank)  # expect: DV001
    i = "cuda:" + os.environ["LOCAL_RANK"]  # expect: DV001
    return a, b, c, d, e, f, g, h, i


def checks(device, name: str):
    if str(device).startswith("cuda:"):  # expect: DV004
        pass
    on_gpu = name.startswith("cuda")  # expect: DV004
    if not args_device(name).startswith("cuda:"):  # expect: DV004
        pass
    same = device.type == "cuda"  # expect: DV004
    other = "cuda" != device.type  # expect: DV004
    return on_gpu, same, other


def args_device(name):
    return name  # expect: none


def not_device_strings(rank):
    log.info("moving to cuda:{}".format(rank))  # expect: none
    print("cuda:%d" % rank)  # expect: none
    label = "cudagraph:{}".format(rank)  # expect: none
    path = "cuda_kernels/%s.so" % rank  # expect: none
    key = "device" + ":" + str(rank)  # expect: none
    fmt = "{}:{}".format("npu", rank)  # expect: none
    text = "use cuda: it is fast"  # expect: none
    raise_msg = f"no cuda:{rank} here"  # expect: none
    return label, path, key, fmt, text, raise_msg


def messages(rank):
    raise RuntimeError("cuda:{} is busy".format(rank))  # expect: none
