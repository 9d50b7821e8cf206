#!/usr/bin/env python3
"""Write the coverage file of a torch_npu release: same as `ascend-migrate kb sync`.

    python scripts/sync_kb.py --wheel torch_npu-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl
    python scripts/sync_kb.py --site-packages /usr/lib/python3.10/site-packages
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ascend_migrate.knowledge.sync_cli import kb_group  # noqa: E402

if __name__ == "__main__":
    kb_group(["sync", *sys.argv[1:]], prog_name="sync_kb.py")
