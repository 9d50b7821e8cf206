"""`kb sync --wheel` on crafted wheels: bounded inflation, one clear line and exit 2 when refused.

Bounds stated here: a member that inflates past sync.MAX_MEMBER_BYTES (32 MiB), or members
that together pass sync.MAX_TOTAL_BYTES, stop the read with exit 2; the Python heap
(tracemalloc) peaks under MAX_PEAK_MB while refusing a 64 MB zero-filled member (before the
cap a 120 KB wheel took 384 MB).
"""
from __future__ import annotations

import tracemalloc
import zipfile
from pathlib import Path

from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.knowledge import sync
from kbsync_wheelkit import modern_files, write_wheel

MAX_PEAK_MB = 48
BOMB = "torch_npu/contrib/transfer_to_npu.py"


def run(*args):
    return CliRunner().invoke(cli, list(args))


def _bomb_wheel(tmp_path: Path, size: int) -> Path:
    wheel = tmp_path / "torch_npu-9.9.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, text in modern_files().items():
            if name != BOMB:
                zf.writestr(name, text if isinstance(text, bytes) else text.encode())
        with zf.open(BOMB, "w", force_zip64=True) as fh:
            line = b"#" * 1023 + b"\n"
            for _ in range(size // (1 << 20)):
                fh.write(line * 1024)
    return wheel


def _refused(result) -> str:
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "refused" in lines[0] and "internal error" not in result.output, result.output
    return lines[0]


def test_member_inflating_past_the_cap_is_refused_with_bounded_memory(tmp_path):
    wheel = _bomb_wheel(tmp_path, 64 << 20)
    assert wheel.stat().st_size < 1 << 20  # under a megabyte on disk
    tracemalloc.start()
    try:
        result = run("kb", "sync", "--wheel", str(wheel), "--out", str(tmp_path / "kb"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "inflates past" in _refused(result)
    assert peak < MAX_PEAK_MB << 20, peak
    assert not (tmp_path / "kb").exists()


def test_total_inflation_is_capped(tmp_path, monkeypatch):
    monkeypatch.setattr(sync, "MAX_TOTAL_BYTES", 2_000)  # the fixture's members add up to more
    wheel = write_wheel(tmp_path, modern_files())
    assert "inflates past" in _refused(run("kb", "sync", "--wheel", str(wheel), "--out", str(tmp_path / "kb")))


def _patch_member(wheel: Path, local_at: int, central_at: int, value: int) -> None:
    """Set one 2-byte field of BOMB's local header and central directory entry (zipfile
    writes neither encrypted members nor unknown methods, so the bytes are edited)."""
    data = bytearray(wheel.read_bytes())
    with zipfile.ZipFile(wheel) as zf:
        info = zf.getinfo(BOMB)
    data[info.header_offset + local_at:info.header_offset + local_at + 2] = value.to_bytes(2, "little")
    central = data.find(b"PK\x01\x02")
    while central != -1:
        name_len = int.from_bytes(data[central + 28:central + 30], "little")
        if data[central + 46:central + 46 + name_len] == BOMB.encode():
            data[central + central_at:central + central_at + 2] = value.to_bytes(2, "little")
            break
        central = data.find(b"PK\x01\x02", central + 4)
    else:
        raise AssertionError("central directory entry not found")
    wheel.write_bytes(bytes(data))


def test_encrypted_member_is_refused(tmp_path):
    wheel = write_wheel(tmp_path, modern_files())
    _patch_member(wheel, 6, 8, 0x1)  # general purpose flags: bit 0, encrypted
    assert "encrypted" in _refused(run("kb", "sync", "--wheel", str(wheel), "--out", str(tmp_path / "kb")))


def test_unknown_compression_method_is_refused(tmp_path):
    wheel = write_wheel(tmp_path, modern_files())
    _patch_member(wheel, 8, 10, 99)  # compression method
    assert "compression method 99" in _refused(run("kb", "sync", "--wheel", str(wheel), "--out", str(tmp_path / "kb")))
