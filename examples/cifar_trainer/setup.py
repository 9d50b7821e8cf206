"""Optional build of the fused bias+ReLU CUDA extension."""
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="cifar-trainer",
    version="0.1.0",
    py_modules=["train", "model", "data"],
    install_requires=["torch>=2.1", "numpy"],
    ext_modules=[CUDAExtension("bias_relu_ext", ["csrc/bias_relu.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
