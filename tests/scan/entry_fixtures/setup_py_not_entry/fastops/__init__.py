from fastops.kernels import scaled_add
