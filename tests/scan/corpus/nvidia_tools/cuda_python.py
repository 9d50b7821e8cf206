"""NVIDIA's cuda-python bindings."""
from cuda import cudart  # expect: PK002
from cuda.bindings import driver  # expect: PK002
import cuda.bindings.runtime as rt  # expect: PK002


def optional():
    try:
        import cuda.core  # expect: PK002
    except ImportError:
        return None  # expect: none
    return cuda.core  # expect: none


def device_count():
    err, count = cudart.cudaGetDeviceCount()  # expect: none
    return count, driver, rt  # expect: none
