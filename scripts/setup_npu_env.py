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
"""Runnable from a checkout without installing: same as `ascend-migrate env`."""
from _bootstrap import require_dependencies

require_dependencies(__file__)

from ascend_migrate.envsetup.cli import env_command  # noqa: E402

if __name__ == "__main__":
    env_command.main(prog_name="setup_npu_env.py")
