#!/usr/bin/env python3
"""Runnable from a checkout without installing: same as `ascend-migrate check`."""
import os
import sys

_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "src")
if os.path.isdir(_SRC):
    sys.path.insert(0, os.path.abspath(_SRC))

from ascend_migrate.check.cli import check_command  # noqa: E402

if __name__ == "__main__":
    check_command.main(prog_name="check_npu_basics.py")
