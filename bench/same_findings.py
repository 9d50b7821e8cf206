#!/usr/bin/env python3
"""Check that two versions of the scanner report the same findings on real trees.

A speed change must not change what is reported. Runs `scan(tree, use_cache=False)` with the
package from each source folder (a fresh interpreter each) over every tree and compares the
findings (rule, place, message, severity, fixes), the entry-point decisions and the notes.
With --migrate it also compares a dry-run migrate of each tree in both styles: the rewritten
bytes of every file, the manual items and the notes.

    python bench/same_findings.py --base /path/to/old/src --new src /work/realrepos/*
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from ascend_migrate.scan.api import scan
from ascend_migrate.report import render
t = time.perf_counter()
result = scan(sys.argv[2], use_cache=False)
elapsed = time.perf_counter() - t
data = json.loads(render(result, "json"))
for key in ("duration_s", "generated_at", "tool"):
    data.pop(key, None)
data.get("summary", {}).pop("duration_s", None)
if sys.argv[3] == "1":
    import hashlib, os, tempfile
    os.environ["ASCEND_MIGRATE_CACHE_DIR"] = tempfile.mkdtemp()
    from ascend_migrate.fix.api import migrate
    for style in ("transfer", "agnostic"):
        m = migrate(sys.argv[2], style=style)
        data["migrate-" + style] = {
            "files": {f.path: hashlib.sha256(f.new).hexdigest() if f.new is not None else f.error for f in m.files},
            "manual": sorted([c.file, c.start_line, c.rule] for c in m.manual),
            "notes": sorted(m.notes)}
print(json.dumps({"elapsed": elapsed, "report": data}, sort_keys=True))
"""


def run(src: Path, tree: Path, with_migrate: bool = False) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(src), str(tree), "1" if with_migrate else "0"],
                          capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(f"scan failed with {src} on {tree}:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


def _show(base: dict, new: dict, limit: int = 6) -> None:
    """The differing findings and migrated files, a few of each, so a log explains itself."""
    def key(f: dict) -> str:
        return f"{f['path']}:{f['line']} {f['rule']} {f['severity']} fixes={len(f.get('fixes') or [])}"

    old_f = {key(f) for f in base.get("findings", [])}
    new_f = {key(f) for f in new.get("findings", [])}
    for sign, items in (("-", sorted(old_f - new_f)), ("+", sorted(new_f - old_f))):
        for item in items[:limit]:
            print(f"      {sign} {item}")
        if len(items) > limit:
            print(f"      {sign} ... {len(items) - limit} more")
    for style in ("migrate-transfer", "migrate-agnostic"):
        a, b = base.get(style, {}).get("files", {}), new.get(style, {}).get("files", {})
        changed = sorted(p for p in set(a) | set(b) if a.get(p) != b.get(p))
        if changed:
            print(f"      {style}: files that differ: {', '.join(changed[:limit])}"
                  + (f" and {len(changed) - limit} more" if len(changed) > limit else ""))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, required=True, help="src/ folder of the reference version")
    ap.add_argument("--new", type=Path, default=Path(__file__).resolve().parents[1] / "src",
                    help="src/ folder of the version under test (default: this checkout)")
    ap.add_argument("--migrate", action="store_true", help="also compare dry-run migrations (both styles)")
    ap.add_argument("trees", nargs="+", type=Path)
    args = ap.parse_args(argv)
    differing = 0
    for tree in args.trees:
        if not tree.is_dir():
            continue
        base, new = run(args.base, tree, args.migrate), run(args.new, tree, args.migrate)
        same = base["report"] == new["report"]
        differing += not same
        count = len(new["report"].get("findings", []))
        print(f"{tree.name:32} {'same' if same else 'DIFFERENT':9} {count:6} findings  "
              f"base {base['elapsed']:6.2f} s  new {new['elapsed']:6.2f} s", flush=True)
        if not same:
            for key in sorted(set(base["report"]) | set(new["report"])):
                if base["report"].get(key) != new["report"].get(key):
                    print(f"    differs in {key!r}")
            _show(base["report"], new["report"])
    print(f"{differing} of {len(args.trees)} trees differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
