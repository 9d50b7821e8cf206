#!/usr/bin/env python3
"""Rewrite a CUDA project for Ascend (same as `ascend-migrate migrate`); runs from a checkout."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ascend_migrate.fix.cli import migrate_command  # noqa: E402

if __name__ == "__main__":
    migrate_command(prog_name="migrate_to_npu.py")
