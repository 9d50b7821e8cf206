"""Scan results for the report tests: one built by hand, one from a real scan of a small tree."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ascend_migrate.knowledge.base import load_knowledge
from ascend_migrate.scan.api import EntryPoint, FileNote, ScanResult, scan
from ascend_migrate.scan.finding import Edit, Finding, Fix, Position

TRAIN = textwrap.dedent('''\
    import torch
    import torch.distributed as dist
    from torch.cuda.amp import autocast, GradScaler


    def main():
        dist.init_process_group("nccl")
        major, minor = torch.cuda.get_device_capability()
        scaler = GradScaler()
        with autocast():
            x = torch.randn(2, 4, device="cuda")
        torch.cuda.synchronize()
        torch.cuda.synchronize()


    if __name__ == "__main__":
        main()
    ''')


def finding(rule: str, path: str, line: int, col: int = 0, **kw) -> Finding:
    kb = load_knowledge()
    sev = kb.rules[rule].severity if rule in kb.rules else "warning"
    defaults = dict(end_line=line, end_col=col + 5, message=f"{rule} at {path}:{line}", severity=sev,
                    snippet=f"call_{rule.lower()}()", symbol=f"sym.{rule.lower()}")
    defaults.update(kw)
    return Finding(rule=rule, path=path, line=line, col=col, **defaults)


@pytest.fixture(scope="session")
def kb():
    return load_knowledge()


@pytest.fixture
def hand_result() -> ScanResult:
    """Every shape the renderers must handle, with known counts."""
    capability_fix_t = Fix("transfer", (Edit(Position(8, 19), Position(8, 53), "(torch.cuda.get_device_capability() or (0, 0))"),),
                           "unsafe", "fall back to (0, 0)")
    capability_fix_a = Fix("agnostic", (Edit(Position(8, 19), Position(8, 53), "(0, 0)"),), "unsafe")
    nccl_fix = Fix("agnostic", (Edit(Position(7, 28), Position(7, 34), "backend"),), "safe",
                   "derive the backend from the device", ("device_type",))
    findings = [
        finding("CU101", "src/train.py", 8, 19, end_col=53, snippet="major, minor = torch.cuda.get_device_capability()",
                symbol="torch.cuda.get_device_capability", fixes=(capability_fix_t, capability_fix_a)),
        finding("DS001", "src/train.py", 7, 28, end_col=34, snippet='dist.init_process_group("nccl")',
                symbol="nccl", fixes=(nccl_fix,)),
        # the same code twice in one file: two distinct findings
        finding("CU001", "src/train.py", 12, 4, end_col=26, snippet="torch.cuda.synchronize()",
                symbol="torch.cuda.synchronize", fixes=(Fix("transfer", (), "none", "nothing to change"),)),
        finding("CU001", "src/train.py", 13, 4, end_col=26, snippet="torch.cuda.synchronize()",
                symbol="torch.cuda.synchronize"),
        # per-file effort: three EX001 in one file, one in another
        finding("EX001", "csrc/a.cu", 1),
        finding("EX001", "csrc/a.cu", 10),
        finding("EX001", "csrc/a.cu", 20),
        finding("EX001", "csrc/b.cu", 1),
        finding("PK001", "requirements.txt", 3, symbol="flash_attn"),
        finding("SC001", "src/bad.py", 1, end_col=0, snippet="",
                message='file could not be parsed (syntax error line 1: "a | b", then, "quotes")',
                symbol="syntax error line 1"),
        finding("DV001", "src/dir with space/m\u00fc.py", 2, 10, message="device string `cuda` | pipe\nnewline"),
    ]
    return ScanResult(
        root="/project",
        findings=findings,
        entry_points=[EntryPoint("src/train.py", 16, "main-guard", False, False)],
        notes=[FileNote("src/bad.py", "syntax error line 1: invalid syntax"),
               FileNote("big.py", "skipped: too big")],
        files_scanned=6,
        lines_scanned=1234,
        duration_s=0.25,
        torch_npu_version="2.13.0",
    )


@pytest.fixture
def make_finding():
    return finding


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "train.py").write_text(TRAIN, encoding="utf-8")
    (root / "pkg" / "util.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    (root / "pkg" / "broken.py").write_text("def f(:\n    torch.cuda.synchronize()\n", encoding="utf-8")
    (root / "requirements.txt").write_text("torch\nflash_attn==2.5.8\n", encoding="utf-8")
    return root


@pytest.fixture
def scan_tree(tmp_path: Path, monkeypatch):
    """scan() a directory without touching the user's cache."""
    monkeypatch.setenv("ASCEND_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))

    def run(root: Path) -> ScanResult:
        return scan(root, use_cache=False, jobs=1)

    return run
