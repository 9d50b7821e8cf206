#!/usr/bin/env python3
"""Validate a port from a checkout, without installing the package.

    python scripts/run_validation.py PATH [--device npu:0] [--golden golden.pt] ...
    python scripts/run_validation.py capture ENTRY --device cuda:0 -o golden.pt
    python scripts/run_validation.py compare golden.pt --device npu:0

Same options and exit codes as `ascend-migrate validate` (0 pass, 1 fail, 2 usage error).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from ascend_migrate.validate.cli import validate_command  # noqa: E402

if __name__ == "__main__":
    validate_command(prog_name="run_validation.py")
