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
"""Rewrite a CUDA project for Ascend (same as `ascend-migrate migrate`); runs from a checkout."""
from _bootstrap import require_dependencies

require_dependencies(__file__)

from ascend_migrate.fix.cli import migrate_command  # noqa: E402

if __name__ == "__main__":
    migrate_command(prog_name="migrate_to_npu.py")
