#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = [
#     "pyyaml>=5.4",
#     "jinja2>=3.0",
#     "click>=8.0",
#     "markdown-it-py>=2.0",
#     "tomli>=1.1; python_version < '3.11'",
# ]
# ///
"""Scan a project for CUDA-only code (same as `ascend-migrate scan`); runs from a checkout."""
from _bootstrap import require_dependencies

require_dependencies(__file__)

from ascend_migrate.scan.cli import scan_command  # noqa: E402

if __name__ == "__main__":
    scan_command(prog_name="scan_cuda_apis.py")
