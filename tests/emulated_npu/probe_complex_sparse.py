"""Complex and sparse tensors on the emulated npu, each case against the same computation on CPU.

Run in a process that imports the emulated torch_npu; prints one JSON object: case -> "equal",
"differs", or "<ExceptionType>: <first line>" for a case that raised.
"""
from __future__ import annotations

import json

import torch

import torch_npu  # noqa: F401  (the emulated one: registers the npu device)


def _seeded(make):
    torch.manual_seed(0)
    return make()


def _same(fn) -> str:
    """Run fn(device) on cpu and on npu from the same seed; compare every tensor it returns."""
    cpu = _seeded(lambda: fn("cpu"))
    npu = _seeded(lambda: fn("npu"))
    cpu = cpu if isinstance(cpu, tuple) else (cpu,)
    npu = npu if isinstance(npu, tuple) else (npu,)
    ok = all(b.device.type == "npu" and torch.equal(a, b.cpu()) for a, b in zip(cpu, npu))
    return "equal" if ok else "differs"


def randn_complex(d):
    return torch.randn(4, dtype=torch.complex64, device=d)


def arithmetic_with_conj(d):
    x = torch.randn(4, dtype=torch.complex64).to(d)
    return (x * x.conj() + 1j * x).abs(), x.conj().resolve_conj(), x.conj().imag * 1


def view_as_complex_and_back(d):
    r = torch.randn(4, 2).to(d)
    c = torch.view_as_complex(r)
    return c, torch.view_as_real(c)


def write_through_view_as_real(d):
    c = torch.zeros(3, dtype=torch.complex64, device=d)
    torch.view_as_real(c).add_(torch.randn(3, 2).to(d))
    return c


def write_through_view_as_complex(d):
    r = torch.randn(3, 2).to(d)
    torch.view_as_complex(r).mul_(2 + 1j)
    return r


def fft_family(d):
    s = torch.randn(64).to(d)
    f = torch.fft.fft(s)
    window = torch.hann_window(16, device=d)
    return f, torch.fft.ifft(f), torch.fft.rfft(s), torch.stft(s, 16, window=window, return_complex=True)


def rotary_embedding(d):
    q = torch.randn(2, 4, 8).to(d)
    freqs = torch.polar(torch.ones(4, 4), torch.randn(4, 4)).to(d)
    qc = torch.view_as_complex(q.reshape(2, 4, 4, 2))
    return torch.view_as_real(qc * freqs).flatten(-2)


def complex_backward_and_adam(d):
    p = torch.randn(8, dtype=torch.complex64).to(d).requires_grad_()
    opt = torch.optim.Adam([p], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        p.abs().pow(3).sum().backward()
        opt.step()
    return p.detach(), p.grad


def complex_linear_sgd(d):
    layer = torch.nn.Linear(4, 4, dtype=torch.complex64).to(d)
    x = torch.randn(8, 4, dtype=torch.complex64).to(d)
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = layer(x).abs().pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack(losses), layer.weight.detach()


def _raises(fn) -> str:
    try:
        fn()
    except Exception as exc:  # the outcome recorded is the exception itself
        first = str(exc).splitlines()[0].split(" This could be because")[0]
        return f"{type(exc).__name__}: {first}"
    return "no error"


INDICES = torch.tensor([[0, 1, 1], [2, 0, 2]])
VALUES = torch.tensor([3.0, 4.0, 5.0])

SPARSE = {
    "sparse_coo_tensor on npu": lambda: torch.sparse_coo_tensor(INDICES, VALUES, (2, 3), device="npu"),
    "sparse cpu tensor .to(npu)": lambda: torch.sparse_coo_tensor(INDICES, VALUES, (2, 3)).to("npu"),
    "dense npu .to_sparse()": lambda: torch.eye(2, device="npu").to_sparse(),
    "Embedding(sparse=True) backward": lambda: torch.nn.Embedding(10, 3, sparse=True).to("npu")(
        torch.tensor([1, 2], device="npu")).sum().backward(),
    "dense npu .to_sparse_csr().to_dense()": lambda: torch.eye(2, device="npu").to_sparse_csr().to_dense(),
}

if __name__ == "__main__":
    results = {name: _same(fn) for name, fn in [
        ("randn complex64", randn_complex), ("arithmetic with conj", arithmetic_with_conj),
        ("view_as_complex / view_as_real", view_as_complex_and_back),
        ("write through view_as_real", write_through_view_as_real),
        ("write through view_as_complex", write_through_view_as_complex),
        ("fft, ifft, rfft, stft", fft_family), ("rotary embedding", rotary_embedding),
        ("complex backward + Adam", complex_backward_and_adam), ("complex Linear + SGD", complex_linear_sgd),
    ]}
    results.update({name: _raises(fn) for name, fn in SPARSE.items()})
    print(json.dumps(results, indent=1))
