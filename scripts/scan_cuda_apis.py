#!/usr/bin/env python3
"""Scan a project for CUDA-only code (same as `ascend-migrate scan`); runs from a checkout."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ascend_migrate.scan.cli import scan_command  # noqa: E402

if __name__ == "__main__":
    scan_command(prog_name="scan_cuda_apis.py")
