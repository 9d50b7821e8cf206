"""Hostile trees: scan, migrate and validate never trace back, hang, write outside their target
or leave a half-written tree, and say what they skipped.

Each case builds its tree in a temporary folder and runs the real command line in a
subprocess with a timeout (a hang fails the test instead of blocking the suite).
"""
from __future__ import annotations

import csv
import io
import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli

ROOT = Path(__file__).resolve().parents[2]
BAD_NAME = os.fsdecode(b"caf\xe9_model.py")  # not valid UTF-8: a surrogate-escaped str
TIMEOUT = 60
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
posix_only = pytest.mark.skipif(os.name != "posix", reason="FIFOs, sockets and symlinks need POSIX")

TRAIN = "import torch\n\ndef main():\n    x = torch.zeros(2).cuda()\n    torch.cuda.synchronize()\n\n" \
        "if __name__ == '__main__':\n    main()\n"


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))


def _drop_permission_override() -> None:
    """In the child, before exec: take CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH out of the
    bounding set, so a root process obeys file modes as any other user does."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def _modes_bind_root() -> bool:
    """Can a child of this (root) process be made to obey file modes? Probed, not assumed."""
    import tempfile

    if os.name != "posix" or not sys.platform.startswith("linux"):
        return False
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, 0o555)
        try:
            probe = subprocess.run([sys.executable, "-c", f"open({os.path.join(folder, 'x')!r}, 'w')"],
                                   preexec_fn=_drop_permission_override, capture_output=True, timeout=TIMEOUT)
        except (OSError, subprocess.SubprocessError):
            return False
        finally:
            os.chmod(folder, 0o755)
    return probe.returncode != 0 and b"PermissionError" in probe.stderr


# Read-only trees are tested as a user the modes bind: any non-root user, or root without the
# capabilities that override them (CI runs as root).
MODES_BIND = not IS_ROOT or _modes_bind_root()
modes_bind = pytest.mark.skipif(os.name != "posix" or not MODES_BIND,
                                reason="file modes cannot be made to bind this process")


def run(*args: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1"}
    env.pop("ASCEND_MIGRATE_DEBUG", None)
    proc = subprocess.run([sys.executable, "-m", "ascend_migrate", *args], capture_output=True,
                          timeout=timeout, env=env,
                          preexec_fn=_drop_permission_override if IS_ROOT and MODES_BIND else None)
    proc.out = proc.stdout.decode("utf-8", "replace")  # type: ignore[attr-defined]
    proc.err = proc.stderr.decode("utf-8", "replace")  # type: ignore[attr-defined]
    assert "Traceback" not in proc.err and "Traceback" not in proc.out, proc.err
    return proc


def write(root: Path, files: dict) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return root


def snapshot(folder: Path) -> dict[str, object]:
    """Every entry under folder: file bytes, link text, or the kind of a special file."""
    out: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, folder)
            mode = os.lstat(full).st_mode
            if stat.S_ISLNK(mode):
                out[rel] = ("link", os.readlink(full))
            elif stat.S_ISREG(mode):
                out[rel] = Path(full).read_bytes()
            elif stat.S_ISDIR(mode):
                out[rel] = "dir"
            else:
                out[rel] = "special"
    return out


def outside(tmp_path: Path, *targets: Path) -> dict[str, object]:
    """Snapshot of tmp_path without the targets a command may write to (and the result cache)."""
    skip = {str(t.relative_to(tmp_path)) for t in targets} | {"cache"}
    return {k: v for k, v in snapshot(tmp_path).items() if k.split(os.sep)[0] not in skip}


def assert_modules_compile(folder: Path) -> int:
    """Every Python module in folder compiles, and names the agnostic rewrite uses are bound."""
    count = 0
    for path in folder.rglob("*.py"):
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        compile(data, str(path), "exec")  # from bytes, as import does
        if b"_device_type" in data:
            assert b"_device_type =" in data or b"import _device_type" in data, path
        count += 1
    return count


def notes_of(report_json: str) -> dict[str, str]:
    return {n["path"]: n["reason"] for n in json.loads(report_json)["notes"]}


# --------------------------------------------------------------------------- special files, links
@posix_only
def test_link_loops_fifos_and_sockets_are_skipped_with_a_note(tmp_path):
    src = write(tmp_path / "src", {"train.py": TRAIN})
    os.symlink("loop_b.py", src / "loop_a.py")
    os.symlink("loop_a.py", src / "loop_b.py")
    os.symlink(".", src / "self_dir")  # a directory link back to its own folder
    os.symlink("missing.py", src / "dangling.py")
    os.mkfifo(src / "pipe.py")  # opening it would block forever
    os.mkfifo(src / "pipe.data")
    sock = socket.socket(socket.AF_UNIX)
    sock_path = src / "daemon.sock"
    try:
        sock.bind(str(sock_path))
    except OSError:  # pragma: no cover - path too long for AF_UNIX on some hosts
        sock_path = None
    try:
        before = outside(tmp_path, src)
        proc = run("scan", str(src), "--format", "json", "--no-cache")
        assert proc.returncode == 0, proc.err
        notes = notes_of(proc.out)
        for skipped in ("loop_a.py", "loop_b.py", "dangling.py", "pipe.py", "pipe.data"):
            assert skipped in notes, (skipped, notes)
        assert "loop" in notes["loop_a.py"] and "FIFO" in notes["pipe.py"]
        if sock_path:
            assert "socket" in notes["daemon.sock"]
        assert {f["path"] for f in json.loads(proc.out)["findings"]} == {"train.py"}

        dry = run("migrate", str(src))
        assert dry.returncode == 0 and "+++ b/train.py" in dry.out
        out = tmp_path / "out"
        proc = run("migrate", str(src), "--style", "agnostic", "--output", str(out))
        assert proc.returncode == 0, proc.err
        assert "pipe.py" in proc.err and "loop_a.py" in proc.err  # noted, not copied
        assert not (out / "pipe.py").exists() and not (out / "pipe.data").exists()
        assert os.readlink(out / "self_dir") == "."  # an in-tree link is recreated as a link
        assert assert_modules_compile(out) == 1
        assert outside(tmp_path, src, out) == before
        proc = run("migrate", str(src), "--write")
        assert proc.returncode == 0, proc.err
        assert stat.S_ISFIFO(os.lstat(src / "pipe.py").st_mode)
    finally:
        sock.close()


@posix_only
def test_links_inside_the_tree_are_recreated_and_links_out_are_noted(tmp_path):
    src = write(tmp_path / "src", {"train.py": TRAIN, "scripts/run.sh": "python train.py\n"})
    write(tmp_path / "elsewhere", {"secret.py": "import torch\nx = torch.cuda.is_available()\n"})
    os.symlink("scripts/run.sh", src / "run.sh")
    os.symlink(str(src / "train.py"), src / "absolute_train.py")  # absolute, but inside the tree
    os.symlink(str(tmp_path / "elsewhere" / "secret.py"), src / "outside.py")
    out = tmp_path / "out"
    proc = run("migrate", str(src), "--output", str(out))
    assert proc.returncode == 0, proc.err
    assert os.readlink(out / "run.sh") == "scripts/run.sh"
    assert (out / "absolute_train.py").is_symlink()
    assert (out / "absolute_train.py").resolve() == (out / "train.py").resolve()
    assert not (out / "outside.py").exists() and "outside.py" in proc.err
    assert (tmp_path / "elsewhere" / "secret.py").read_bytes().startswith(b"import torch\nx")


def test_migrate_one_file_with_output_copies_only_that_file(tmp_path):
    src = write(tmp_path / "src", {"train.py": TRAIN, "other.py": "x = 1\n", "data/big.bin": b"\0" * 1000})
    out = tmp_path / "out"
    proc = run("migrate", str(src / "train.py"), "--output", str(out))
    assert proc.returncode == 0, proc.err
    copied = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    records = [c for c in copied if c.startswith(".ascend-migrate/")]  # this run's own change list
    assert records and all(c.startswith((".ascend-migrate/runs/", ".ascend-migrate/last-changes")) for c in records)
    assert [c for c in copied if c not in records] == [
        "ascend-migrate-changes.csv", "ascend-migrate-changes.json", "train.py"]
    assert b"transfer_to_npu" in (out / "train.py").read_bytes()
    assert_modules_compile(out)


# --------------------------------------------------------------------------- folders
def test_only_provably_non_source_folders_are_skipped_and_each_is_listed(tmp_path):
    src = write(tmp_path / "src", {
        "train.py": TRAIN,
        "env/setup_env.py": "import torch\nDEVICE = torch.device('cuda')\n",
        "build/gen.py": "import torch\ny = torch.zeros(1).cuda()\n",
        "dist/launch.py": "import torch\nz = torch.cuda.device_count()\n",
        ".cache/helpers.py": "import torch\nw = torch.cuda.is_available()\n",
        "venv/pyvenv.cfg": "home = /usr/bin\n",
        "venv/lib/python3.11/site-packages/pkg/mod.py": "import torch\nq = torch.cuda.current_device()\n",
        "vendor/site-packages/dep.py": "import torch\nr = torch.cuda.current_device()\n",
        ".git/hooks/hook.py": "import torch\ns = torch.cuda.current_device()\n",
        ".pytest_cache/CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n",
        ".pytest_cache/v/x.py": "import torch\nt = torch.cuda.current_device()\n",
    })
    proc = run("scan", str(src), "--format", "json", "--no-cache")
    report = json.loads(proc.out)
    found = {f["path"] for f in report["findings"]}
    assert {"env/setup_env.py", "build/gen.py", "dist/launch.py", ".cache/helpers.py"} <= found
    assert not any(p.startswith(("venv/", "vendor/site-packages", ".git/", ".pytest_cache/")) for p in found)
    notes = notes_of(proc.out)
    for folder in ("venv/", "vendor/site-packages/", ".git/", ".pytest_cache/"):
        assert folder in notes and notes[folder].startswith("folder skipped"), (folder, notes)
    out = tmp_path / "out"
    proc = run("migrate", str(src), "--output", str(out))
    assert proc.returncode == 0, proc.err
    for kept in ("env/setup_env.py", "build/gen.py", "dist/launch.py", ".cache/helpers.py"):
        assert (out / kept).is_file(), kept
    assert not (out / "venv").exists() and not (out / ".git").exists()
    assert_modules_compile(out)


# --------------------------------------------------------------------------- encodings
@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="the file system must accept any bytes in names")
def test_non_utf8_file_names_are_reported_readably_in_every_format(tmp_path):
    src = write(tmp_path / "src", {"train.py": TRAIN})
    (src / BAD_NAME).write_bytes(b"import torch\nx = torch.zeros(1).cuda()\n")
    for fmt in ("json", "sarif", "csv", "md", "text"):
        report = tmp_path / f"report.{fmt}"
        proc = run("scan", str(src), "--format", fmt, "-o", str(report), "--no-cache")
        assert proc.returncode == 0, (fmt, proc.err)
        text = report.read_text(encoding="utf-8")  # valid UTF-8, not empty
        if fmt == "json":
            text = " ".join(f["path"] for f in json.loads(text)["findings"])
        elif fmt == "sarif":  # the URI percent-encodes the name's real bytes
            uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    for r in json.loads(text)["runs"][0]["results"]}
            assert "caf%E9_model.py" in uris
            continue
        assert "caf\\xe9_model.py" in text or "caf\\\\xe9_model.py" in text, fmt
    rows = list(csv.DictReader(io.StringIO((tmp_path / "report.csv").read_text(encoding="utf-8"))))
    assert "caf\\xe9_model.py" in {r["path"] for r in rows}
    json.loads((tmp_path / "report.sarif").read_text(encoding="utf-8"))
    out = tmp_path / "out"
    proc = run("migrate", str(src), "--style", "agnostic", "--output", str(out))
    assert proc.returncode == 0, proc.err
    moved = (out / BAD_NAME).read_bytes()  # the same undecodable name, round-tripped
    assert b".to(_device_type)" in moved
    changes = json.loads((out / "ascend-migrate-changes.json").read_text(encoding="utf-8"))
    assert "caf\\xe9_model.py" in {c["file"] for c in changes["changes"]}
    assert "caf\\xe9_model.py" in (out / "ascend-migrate-changes.csv").read_text(encoding="utf-8")
    assert_modules_compile(out)


def test_non_utf8_bytes_in_shell_and_yaml_configs(tmp_path):
    sh = b"#!/bin/bash\n# r\xe9glages\nexport CUDA_VISIBLE_DEVICES=0,1\ntorchrun --nproc_per_node 2 train.py --backend nccl \xff\n"
    yml = b"distributed:\n  backend: nccl\n  note: \"caf\xe9\"\n"
    src = write(tmp_path / "src", {"train.py": TRAIN, "run.sh": sh, "launch.yaml": yml})
    dry = run("migrate", str(src))
    assert dry.returncode == 0, dry.err
    assert "+export ASCEND_RT_VISIBLE_DEVICES=0,1" in dry.out
    proc = run("migrate", str(src), "--write")
    assert proc.returncode == 0, proc.err
    assert (src / "run.sh").read_bytes() == sh.replace(b"CUDA_VISIBLE_DEVICES", b"ASCEND_RT_VISIBLE_DEVICES") \
        .replace(b"nccl", b"hccl")
    assert (src / "launch.yaml").read_bytes() == yml.replace(b"nccl", b"hccl")


def test_stray_bytes_in_comments_are_scanned_and_kept(tmp_path):
    data = b"import torch\n# caf\xe9 na\xefve comment\nx = torch.zeros(1).cuda()  # d\xe9j\xe0\n"
    compile(data, "m.py", "exec")  # CPython accepts it, as import does
    src = write(tmp_path / "src", {"m.py": data, "bad_string.py": b"s = '\xe9'\ny = torch.cuda.current_device()\n"})
    proc = run("scan", str(src), "--format", "json", "--no-cache")
    report = json.loads(proc.out)
    assert ("m.py", "DV002") in {(f["path"], f["rule"]) for f in report["findings"]}
    assert "m.py" not in notes_of(proc.out) and "bad_string.py" in notes_of(proc.out)
    out = tmp_path / "out"
    assert run("migrate", str(src), "--style", "agnostic", "--output", str(out)).returncode in (0, 1)
    moved = (out / "m.py").read_bytes()
    assert b"# caf\xe9 na\xefve comment\n" in moved and b".to(_device_type)  # d\xe9j\xe0\n" in moved
    compile(moved, "m.py", "exec")


def test_notebook_shell_lines_with_backslash_continuations(tmp_path):
    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["!pip install torch \\\n", "    torchvision \\\n", "    --quiet\n", "import torch\n",
                    "x = torch.zeros(1).cuda()\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["if logger == 'tb':\n", "    %load_ext tensorboard\n", "else:\n", "    %pip install -q \\\n",
                    "        wandb\n", "y = torch.ones(1).cuda()\n"]},
    ]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    src = write(tmp_path / "src", {"demo.ipynb": json.dumps(nb, indent=1) + "\n"})
    proc = run("scan", str(src), "--format", "json", "--no-cache")
    assert "demo.ipynb" not in notes_of(proc.out)
    assert any(f["rule"] == "DV002" for f in json.loads(proc.out)["findings"])
    out = tmp_path / "out"
    proc = run("migrate", str(src), "--style", "agnostic", "--output", str(out))
    assert proc.returncode == 0, proc.err
    source = "".join(json.loads((out / "demo.ipynb").read_text())["cells"][0]["source"])
    assert source.startswith("!pip install torch \\\n    torchvision \\\n    --quiet\n")
    assert ".to(_device_type)" in source
    second = "".join(json.loads((out / "demo.ipynb").read_text())["cells"][1]["source"])
    assert "    %load_ext tensorboard\n" in second and "y = torch.ones(1).to(_device_type)" in second


# --------------------------------------------------------------------------- our own outputs
def test_own_outputs_are_never_inputs_and_data_files_are_left_alone(tmp_path):
    src = write(tmp_path / "src", {
        "train.py": TRAIN,
        "ds_config.json": '{"train_micro_batch_size_per_gpu": 4, "communication": {"backend": "nccl"}}\n',
        "data/samples.json": '{"rows": [{"text": "trained with nccl on cuda:0", "device": "cuda"}]}\n',
        "data/labels.yaml": "notes:\n  - nccl backend was used\n",
        "run.sh": "torchrun --nproc_per_node 2 train.py --deepspeed ds_config.json\n",
    })
    first = run("scan", str(src), "--format", "json", "-o", str(src / "scan.json"), "--no-cache")
    assert first.returncode == 0, first.err
    run("scan", str(src), "--format", "sarif", "-o", str(src / "scan.sarif.json"), "--no-cache")
    second = run("scan", str(src), "--format", "json", "--no-cache")
    saved = json.loads((src / "scan.json").read_text())
    again = json.loads(second.out)
    assert again["findings"] == saved["findings"]
    assert "skipped: written by ascend-migrate" in notes_of(second.out)["scan.json"]
    assert not any(f["path"].startswith("data/") for f in again["findings"])
    assert "ds_config.json" in {f["path"] for f in again["findings"]}
    before = {p: (src / p).read_bytes() for p in ("scan.json", "scan.sarif.json", "data/samples.json",
                                                   "data/labels.yaml")}
    proc = run("migrate", str(src), "--write")
    assert proc.returncode == 0, proc.err
    assert {p: (src / p).read_bytes() for p in before} == before
    assert b'"backend": "hccl"' in (src / "ds_config.json").read_bytes()
    changes = (src / "ascend-migrate-changes.json").read_bytes()
    assert run("migrate", str(src), "--write").returncode == 0  # the change list is not an input either
    assert (src / "scan.json").read_bytes() == before["scan.json"]
    assert json.loads(changes)["schema"] == "ascend-migrate/changes/1"


def test_nccl_is_rewritten_only_as_a_whole_value_and_build_scripts_are_not_launch_scripts(tmp_path):
    src = write(tmp_path / "src", {
        "pretrain.py": TRAIN,
        "setup.py": "from setuptools import setup\nsetup(name='demo')\n",
        "launch.sh": "torchrun --nproc_per_node 8 pretrain.py --use-nccl-ub --distributed-backend nccl \\\n"
                     "    --ddp-pad-buckets-for-high-nccl-busbw\npip install nvidia-nccl-cu12\n",
        "scripts/install_rocm.sh": "export CUDA_VISIBLE_DEVICES=0\npython setup.py install\n",
        "scripts/make_wheels.sh": "if [ \"$CPU\" = 1 ]; then export CUDA_VISIBLE_DEVICES=''; fi\n"
                                  "python setup.py bdist_wheel\n",
    })
    proc = run("migrate", str(src), "--write")
    assert proc.returncode == 0, proc.err
    launch = (src / "launch.sh").read_text()
    assert "--use-nccl-ub" in launch and "--distributed-backend hccl" in launch
    assert "--ddp-pad-buckets-for-high-nccl-busbw" in launch and "nvidia-nccl-cu12" in launch
    assert "CUDA_VISIBLE_DEVICES=0" in (src / "scripts/install_rocm.sh").read_text()
    assert "CUDA_VISIBLE_DEVICES=''" in (src / "scripts/make_wheels.sh").read_text()
    assert "transfer_to_npu" not in (src / "setup.py").read_text()
    assert "transfer_to_npu" in (src / "pretrain.py").read_text()


# --------------------------------------------------------------------------- errors and all-or-nothing
def test_an_internal_error_exits_2_names_the_file_and_the_others_are_migrated(tmp_path, monkeypatch):
    import ascend_migrate.fix.migrate as mig

    src = write(tmp_path / "src", {"a.py": TRAIN, "b.py": TRAIN})
    real = mig.rewrite_python

    def broken(kb, rel, *args, **kwargs):
        if rel == "a.py":
            raise RuntimeError("simulated bug")
        return real(kb, rel, *args, **kwargs)

    monkeypatch.setattr(mig, "rewrite_python", broken)
    result = CliRunner().invoke(cli, ["migrate", str(src), "--write"])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "a.py" in lines[0] and "simulated bug" in lines[0]
    assert b"transfer_to_npu" in (src / "b.py").read_bytes()
    assert (src / "a.py").read_text() == TRAIN


def test_a_scan_internal_error_exits_2_and_the_rest_is_scanned(tmp_path, monkeypatch):
    import ascend_migrate.scan.engine as engine

    src = write(tmp_path / "src", {"a.py": TRAIN, "b.py": TRAIN})
    real = engine.analyse

    def broken(job, *args, **kwargs):
        if job.rel == "a.py":
            raise RuntimeError("simulated bug")
        return real(job, *args, **kwargs)

    monkeypatch.setattr(engine, "analyse", broken)
    result = CliRunner().invoke(cli, ["scan", str(src), "--no-cache", "--format", "json"])
    assert result.exit_code == 2
    assert [line for line in result.output.splitlines() if line.startswith("error:")] == [
        "error: a.py: internal error while analysing: RuntimeError: simulated bug"]
    assert '"path": "b.py"' in result.output


def test_a_failure_while_committing_restores_the_tree(tmp_path, monkeypatch):
    """Simulated with a rename that fails half way (works as root, which ignores permissions)."""
    import ascend_migrate.fix.commit as commit

    files = {f"m{i}.py": TRAIN for i in range(4)}
    src = write(tmp_path / "src", files)
    before = snapshot(src)
    calls = {"n": 0}
    real_replace = os.replace

    def flaky(a, b):
        if not os.fspath(b).startswith(os.fspath(src)):  # the scan cache, kept outside the tree
            return real_replace(a, b)
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        return real_replace(a, b)

    monkeypatch.setattr(commit.os, "replace", flaky)
    result = CliRunner().invoke(cli, ["migrate", str(src), "--write"])
    assert result.exit_code == 2
    assert "No space left on device" in result.output and "nothing was written" in result.output
    assert snapshot(src) == before  # the two files already renamed were put back, no temporaries


@modes_bind
def test_read_only_tree_write_fails_cleanly(tmp_path):
    src = write(tmp_path / "src", {"a.py": TRAIN, "sub/b.py": TRAIN})
    for path in (src / "sub", src):
        path.chmod(0o555)
    try:
        before = outside(tmp_path)
        proc = run("migrate", str(src), "--write")
        assert proc.returncode == 2 and "error:" in proc.err and "nothing was written" in proc.err
        assert outside(tmp_path) == before
        proc = run("validate", str(src))
        assert proc.returncode == 2 and "--report-dir" in proc.err
        assert outside(tmp_path) == before
    finally:
        for path in (src, src / "sub"):
            path.chmod(0o755)


@modes_bind
def test_output_under_an_unwritable_parent_fails_cleanly(tmp_path):
    src = write(tmp_path / "src", {"a.py": TRAIN})
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        proc = run("migrate", str(src), "--output", str(locked / "out" / "deeper"))
        assert proc.returncode == 2 and "error:" in proc.err
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o755)


def test_output_staging_failure_leaves_no_partial_output(tmp_path, monkeypatch):
    """The unwritable parent, simulated for root: the second staged file cannot be created."""
    import ascend_migrate.fix.commit as commit

    src = write(tmp_path / "src", {"a.py": TRAIN, "pkg/b.py": TRAIN, "pkg/c.txt": "data\n"})
    out = tmp_path / "out"
    real = commit.tempfile.mkstemp
    calls = {"n": 0}

    def failing(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise PermissionError(13, "Permission denied")
        return real(*args, **kwargs)

    monkeypatch.setattr(commit.tempfile, "mkstemp", failing)
    result = CliRunner().invoke(cli, ["migrate", str(src), "--output", str(out)])
    assert result.exit_code == 2 and "Permission denied" in result.output
    assert not out.exists()


def test_validate_on_an_unwritable_tree_exits_2_with_a_message(tmp_path, monkeypatch):
    """The read-only tree, simulated for root: no report file can be created in it."""
    import ascend_migrate.fix.commit as commit

    src = write(tmp_path / "src", {"a.py": "import torch\n"})
    before = outside(tmp_path)

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(commit.tempfile, "mkstemp", denied)
    result = CliRunner().invoke(cli, ["validate", str(src)])
    assert result.exit_code == 2, result.output
    assert "Permission denied" in result.output and "--report-dir" in result.output
    assert outside(tmp_path) == before


@pytest.mark.skipif(sys.version_info < (3, 10), reason="builds a match statement (Python 3.10+)")
def test_every_rewritten_module_compiles(tmp_path):
    """The parser accepts code the compiler rejects (an irrefutable `case` before others); a
    rewrite that would produce it is not written."""
    src = write(tmp_path / "src", {
        "dispatch.py": "import torch\n\ndef props(device_type):\n    match device_type:\n"
                       "        case \"cuda\":\n            return torch.cuda.get_device_properties(0)\n"
                       "        case _:\n            return None\n",
        "train.py": TRAIN,
        "late_import.py": '"""Prelude."""\nimport os\nimport sys\nsys.path.insert(0, os.getcwd())\nimport torch\n\n'
                          'x = torch.zeros(1).cuda()\n',
        "decorated_first.py": "@staticmethod\ndef f():\n    pass\nimport torch\ny = torch.ones(1).cuda()\n",
        "nested.py": 'import torch\nd = torch.device("cuda", torch.cuda.current_device())\n',
    })
    out = tmp_path / "out"
    proc = run("migrate", str(src), "--style", "agnostic", "--output", str(out))
    assert proc.returncode in (0, 1), proc.err
    assert assert_modules_compile(out) == 5
    assert b"to(_device_type)" in (out / "train.py").read_bytes()


def test_validate_does_not_read_own_outputs_and_lists_them(tmp_path):
    from ascend_migrate.validate.project import load_project

    src = write(tmp_path / "src", {"train.py": TRAIN, "launch.json": '{"dist_backend": "hccl"}\n'})
    assert run("scan", str(src), "--format", "json", "-o", str(src / "reports" / "scan.json")).returncode == 0
    assert run("migrate", str(src), "--write").returncode == 0
    project = load_project(src)
    assert project.config_files == ["launch.json"]
    skipped = dict(project.skipped)
    assert skipped["reports/scan.json"] == "written by ascend-migrate (scan report)"
    assert skipped["ascend-migrate-changes.json"] == "written by ascend-migrate"
