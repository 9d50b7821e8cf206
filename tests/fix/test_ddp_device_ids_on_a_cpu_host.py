"""`DistributedDataParallel(model, device_ids=[rank])` in a device-agnostic port on a host without
an accelerator: the module falls back to the CPU, where DDP accepts no device index and raises a
ValueError. The original only ever ran with a CUDA module, so the port passes the index only when
there is an accelerator (a public single-file trainer's two-process check on a CPU host stopped here)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap

import pytest

from ascend_migrate.fix.rewrite import Options, rewrite_python
from ascend_migrate.knowledge.base import load_knowledge
from ascend_migrate.scan.api import scan

SOURCE = '''import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
rank = int(os.environ["LOCAL_RANK"])
device = f"cuda:{rank}"
model = torch.nn.Linear(2, 2).to(device)
model = DDP(model, device_ids=[rank], output_device=rank)
loss = model(torch.ones(1, 2, device=device)).sum()
loss.backward()
dist.destroy_process_group()
'''


def _port(source: str, style: str = "agnostic") -> str:
    return rewrite_python(load_knowledge(), "train.py", source, Options(style=style)).text


def test_the_index_is_passed_only_with_an_accelerator():
    out = _port(SOURCE)
    assert "DDP(model, device_ids=([rank] if _accel_type else None), output_device=(rank if _accel_type else None))" in out, out


def test_positional_device_ids_and_explicit_none():
    source = textwrap.dedent('''\
        import torch
        model = torch.nn.Linear(2, 2).to("cuda")
        a = torch.nn.parallel.DistributedDataParallel(model, [0])
        b = torch.nn.parallel.DistributedDataParallel(model, device_ids=None)
        ''')
    out = _port(source)
    assert "DistributedDataParallel(model, ([0] if _accel_type else None))" in out, out
    assert "DistributedDataParallel(model, device_ids=None)" in out, out


def test_the_transfer_style_keeps_the_index():
    assert "DDP(model, device_ids=[rank], output_device=rank)" in _port(SOURCE, "transfer")


def _ds006(tmp_path, source: str) -> list:
    (tmp_path / "train.py").write_text(source)
    return [f for f in scan(tmp_path, use_cache=False).findings if f.rule == "DS006"]


def test_the_port_is_not_reported_again(tmp_path):
    assert len(_ds006(tmp_path, SOURCE)) == 1
    assert not _ds006(tmp_path, _port(SOURCE))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_one_rank(tmp_path, source: str) -> subprocess.CompletedProcess:
    script = tmp_path / "train.py"
    script.write_text(source)
    env = {**os.environ, "LOCAL_RANK": "0", "RANK": "0", "WORLD_SIZE": "1",
           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port())}
    return subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.needs_torch
def test_the_port_runs_on_a_cpu_only_host(tmp_path):
    pytest.importorskip("torch")
    done = _run_one_rank(tmp_path, _port(SOURCE))
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.needs_torch
def test_without_the_guard_ddp_refuses_a_cpu_module(tmp_path):
    """The control: the same port with the index passed unconditionally stops where the trainer did."""
    pytest.importorskip("torch")
    unguarded = _port(SOURCE).replace("([rank] if _accel_type else None)", "[rank]").replace(
        "(rank if _accel_type else None)", "rank")
    done = _run_one_rank(tmp_path, unguarded)
    assert done.returncode != 0 and "device_ids" in done.stderr, done.stderr[-2000:]


def test_a_choice_the_author_made_per_device_is_kept_and_a_second_pass_changes_nothing():
    source = textwrap.dedent('''\
        import torch
        device = torch.device("cuda")
        model = torch.nn.Linear(2, 2).to(device)
        a = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
        b = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0] if device.index is None else [device.index])
        ''')
    once = _port(source)
    assert 'device_ids=[device.index] if device.type == (_accel_type or "cuda") else None)' in once, once
    assert "device_ids=(([0] if device.index is None else [device.index]) if _accel_type else None))" in once, once
    assert _port(once) == once
