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
"""Write the coverage file of a torch_npu release: same as `ascend-migrate kb sync`.

    python scripts/sync_kb.py --wheel torch_npu-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl
    python scripts/sync_kb.py --site-packages /usr/lib/python3.10/site-packages
"""
import sys

from _bootstrap import require_dependencies

require_dependencies(__file__)

from ascend_migrate.knowledge.sync_cli import kb_group  # noqa: E402

if __name__ == "__main__":
    kb_group(["sync", *sys.argv[1:]], prog_name="sync_kb.py")
