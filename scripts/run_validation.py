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
"""Validate a port from a checkout, without installing the package.

    python scripts/run_validation.py PATH [--device npu:0] [--golden golden.pt] ...
    python scripts/run_validation.py capture ENTRY --device cuda:0 -o golden.pt
    python scripts/run_validation.py compare golden.pt --device npu:0

Same options and exit codes as `ascend-migrate validate` (0 pass, 1 fail, 2 usage error).
"""
from _bootstrap import require_dependencies

require_dependencies(__file__)

from ascend_migrate.validate.cli import validate_command  # noqa: E402

if __name__ == "__main__":
    validate_command(prog_name="run_validation.py")
