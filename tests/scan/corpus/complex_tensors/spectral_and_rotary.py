"""Rotary embeddings through complex numbers and a spectral loss, the way training code writes them."""
import numpy as np
import torch
import torch.nn.functional as F
from torch.fft import rfft, irfft


def precompute_freqs(dim, end, theta=10000.0, device="cpu"):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2).float() / dim))  # expect: none
    t = torch.arange(end, device=freqs.device)  # expect: none
    angles = torch.outer(t, freqs)  # expect: none
    return torch.polar(torch.ones_like(angles), angles).to(device)  # expect: PR005


def apply_rotary(xq, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))  # expect: PR005
    out = torch.view_as_real(xq_ * freqs_cis).flatten(3)  # expect: none
    return out.type_as(xq)  # expect: none


def spectral_loss(pred, target):
    p = torch.fft.rfft(pred, dim=-1)  # expect: PR005
    t = rfft(target, dim=-1)  # expect: PR005
    return F.l1_loss(p.abs(), t.abs())  # expect: none


def multi_resolution_stft(wave, n_fft=1024):
    window = torch.hann_window(n_fft, device=wave.device)  # expect: none
    spec = torch.stft(wave, n_fft, window=window, return_complex=True)  # expect: PR005
    return spec.abs()  # expect: none


def make_buffers(n, device):
    phase = torch.zeros(n, dtype=torch.complex64, device=device)  # expect: PR005
    kernel = torch.randn(n, n, device=device).cfloat()  # expect: PR005
    signal = torch.fft.irfft(phase, n=n)  # expect: none
    bins = torch.fft.fftfreq(n)  # expect: none
    return phase, kernel, signal, bins


def numpy_reference(x):
    z = np.fft.fft(x).astype(np.complex64)  # expect: none
    return np.abs(z), np.iscomplexobj(z)  # expect: none


def is_complex_input(x):
    return x.is_complex() or torch.is_complex(x)  # expect: none
