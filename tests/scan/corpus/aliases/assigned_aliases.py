"""Aliases made by assignment and attribute chains."""
import torch  # expect: none

cuda = torch.cuda  # expect: none
nvtx = torch.cuda.nvtx  # expect: CU107
lazy = torch.cuda._lazy_call  # expect: CU112


def step(model, batch):
    cuda.synchronize()  # expect: CU001
    nvtx.mark("step")  # expect: CU107
    lazy(lambda: None)  # expect: CU112
    props = cuda.get_device_properties(0)  # expect: CU001
    free, total = cuda.mem_get_info()  # expect: CU001
    cuda.cudart().cudaProfilerStart()  # expect: CU108
    return model(batch), props, free, total  # expect: none
