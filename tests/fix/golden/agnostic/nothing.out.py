"""Nothing CUDA-specific here: the output is byte-identical."""
import math


def area(r):
    return math.pi * r * r
