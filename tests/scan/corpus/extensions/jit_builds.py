"""JIT extension builds: CUDA ones are reported, C++-only ones are not."""
from torch.utils import cpp_extension  # expect: none
from torch.utils.cpp_extension import CUDAExtension, load, load_inline  # expect: none

CPP_SRC = "int twice(int x) { return 2 * x; }"  # expect: none
CUDA_SRC = "__global__ void k(float* x) { x[0] = 1.f; }"  # expect: none
SOURCES = ["ops.cpp", "ops_kernel.cu"]  # expect: none


def build_all(sources):
    a = load_inline(name="cpp_only", cpp_sources=[CPP_SRC], functions=["twice"])  # expect: none
    b = load_inline("cpp_only_pos", [CPP_SRC])  # expect: none
    c = load_inline("cpp_none", CPP_SRC, None)  # expect: none
    d = load_inline("cpp_empty", CPP_SRC, cuda_sources=[])  # expect: none
    e = load_inline(name="with_cuda", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC)  # expect: EX002
    f = load_inline("pos_cuda", CPP_SRC, [CUDA_SRC])  # expect: EX002
    g = load_inline("forced", CPP_SRC, with_cuda=True)  # expect: EX002
    h = load(name="cpu_ops", sources=["ops.cpp", "helpers.cpp"])  # expect: none
    i = load("gpu_ops", ["ops.cpp", "ops_kernel.cu"])  # expect: EX002
    j = load("unknown", sources)  # expect: EX002
    k = cpp_extension.load(name="cpu_again", sources=["a.cpp"], with_cuda=False)  # expect: none
    m = cpp_extension.load_inline(name="gpu_again", cpp_sources="", cuda_sources=CUDA_SRC)  # expect: EX002
    builder = load_inline  # expect: EX002
    ext = CUDAExtension("fused", SOURCES)  # expect: EX002
    return a, b, c, d, e, f, g, h, i, j, k, m, builder, ext
