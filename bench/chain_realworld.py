"""The whole chain on a fetched public project, adapted only by an entry file.

scan (report written inside the tree, twice) -> migrate -> validate against a golden captured
from the original -> model skill (temporary HOME) -> replay into an untouched checkout (no entry
file) -> the replayed tree's hash must equal the validated one and its validation must pass.

Each step is a separate `python -m ascend_migrate` process of the interpreter given with
--python (it needs torch and whatever the project imports); the project stays outside this
repository. Results go to a JSON file and, with --md, between the markers of a Markdown file.

    python bench/chain_realworld.py --project /path/to/minGPT --entry bench/chain/minGPT/validation_entry.py \\
        --python /tmp/rwvenv/bin/python --out bench/chain.json --md bench/chain.md
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS = 4
MODEL = "real-chain"


def run(python: str, args: list[str], cwd: Path, home: Path, log: list[dict]) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home), "NO_COLOR": "1", "TORCH_DEVICE_BACKEND_AUTOLOAD": "0",
           "ASCEND_MIGRATE_CACHE_DIR": str(home / "cache")}
    start = time.perf_counter()
    proc = subprocess.run([python, "-m", "ascend_migrate", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=1800)
    log.append({"args": args, "rc": proc.returncode, "seconds": round(time.perf_counter() - start, 2),
                "traceback": "Traceback" in proc.stderr or "Traceback" in proc.stdout})
    return proc


def findings_of(report: Path) -> list:
    data = json.loads(report.read_text())
    return [(f["path"], f["line"], f["rule"]) for f in data["findings"]]


def chain(project: Path, entry: Path, python: str, work: Path) -> dict:
    log: list[dict] = []
    home = work / "home"
    home.mkdir(parents=True)
    original, ported, upstream = work / "original", work / "ported", work / "upstream"
    shutil.copytree(project, original, symlinks=True)
    shutil.copytree(project, upstream, symlinks=True)
    shutil.copyfile(entry, original / entry.name)
    out: dict = {"project": project.name, "entry_file": entry.name}

    # scan twice, the report inside the tree as the skill suggests: the second scan must not read the first
    first = run(python, ["scan", ".", "--format", "json", "-o", "scan.json", "--no-cache"], original, home, log)
    one = findings_of(original / "scan.json")
    second = run(python, ["scan", ".", "--format", "json", "-o", "scan.json", "--no-cache"], original, home, log)
    two = findings_of(original / "scan.json")
    scan_bytes = (original / "scan.json").read_bytes()
    out["scan"] = {"rc": [first.returncode, second.returncode], "findings": len(one), "identical_twice": one == two}

    res = run(python, ["migrate", ".", "--style", "agnostic", "--output", str(ported)], original, home, log)
    changes = json.loads((ported / "ascend-migrate-changes.json").read_text())
    out["migrate"] = {"rc": res.returncode, "edits": sum(1 for c in changes["changes"] if c["operation"] != "manual"),
                      "manual": sum(1 for c in changes["changes"] if c["operation"] == "manual"),
                      "files": sorted({c["file"] for c in changes["changes"]}),
                      "scan_json_untouched": (ported / "scan.json").read_bytes() == scan_bytes}

    golden = work / "golden.pt"
    res = run(python, ["validate", "capture", f"{entry.name}:train_steps", "--root", str(original), "--device", "cpu",
                       "--steps", str(STEPS), "-o", str(golden)], original, home, log)
    out["capture"] = {"rc": res.returncode, "sha256": hashlib.sha256(golden.read_bytes()).hexdigest()
                      if golden.is_file() else None}

    res = run(python, ["validate", str(ported), "--device", "cpu", "--golden", str(golden)], work, home, log)
    report = json.loads((ported / ".ascend-migrate" / "validation-report.json").read_text())
    out["validate"] = {"rc": res.returncode, "verdict": report.get("verdict"),
                       "items": {i["id"]: i["status"] for i in report.get("items", [])},
                       "tree_sha256": report["provenance"]["tree"]["sha256"]}

    res = run(python, ["skill", str(ported), "--model", MODEL, "--allow-cpu"], work, home, log)
    skill_dir = home / ".kernelcat" / "skills" / MODEL
    record = json.loads((skill_dir / "replay.json").read_text()) if (skill_dir / "replay.json").is_file() else {}
    out["skill"] = {"rc": res.returncode, "files": sorted(p.relative_to(skill_dir).as_posix()
                                                          for p in skill_dir.rglob("*") if p.is_file()),
                    "manual_patch_files": (record.get("manual_patch") or {}).get("files"),
                    "refusal": res.stderr.strip().splitlines()[-1:] if res.returncode else []}

    res = run(python, ["replay", str(skill_dir), str(upstream), "--device", "cpu"], work, home, log)
    replayed = upstream / ".ascend-migrate" / "validation-report.json"
    again = json.loads(replayed.read_text()) if replayed.is_file() else {}
    out["replay"] = {"rc": res.returncode, "verdict": again.get("verdict"),
                     "tree_sha256": ((again.get("provenance") or {}).get("tree") or {}).get("sha256"),
                     "tree_equal": ((again.get("provenance") or {}).get("tree") or {}).get("sha256")
                     == out["validate"]["tree_sha256"],
                     "entry_added": "added the validation entry" in res.stdout + res.stderr}
    for step in log:  # the scratch folder's name changes from run to run
        step["args"] = [a.replace(str(work), "$WORK") for a in step["args"]]
    out["steps"] = log
    out["tracebacks"] = sum(1 for s in log if s["traceback"])
    return out


def markdown(result: dict, commit: str) -> str:
    v, r = result["validate"], result["replay"]
    rows = [
        ("scan, report in the tree, twice", f"{result['scan']['findings']} findings; identical both times: "
                                            f"{result['scan']['identical_twice']}"),
        ("migrate --style agnostic", f"{result['migrate']['edits']} edits, {result['migrate']['manual']} manual items "
                                     f"in {', '.join(result['migrate']['files'])}; scan.json untouched: "
                                     f"{result['migrate']['scan_json_untouched']}"),
        ("validate capture (original, cpu)", f"exit {result['capture']['rc']}, golden sha256 "
                                             f"{(result['capture']['sha256'] or '')[:12]}"),
        ("validate (port, cpu, golden)", f"exit {v['rc']}, verdict {v['verdict']}; " + ", ".join(
            f"{k} {s}" for k, s in sorted(v["items"].items()) if k in ("golden-outputs", "loss-curve", "ddp-smoke"))),
        ("skill --allow-cpu (temp HOME)", f"exit {result['skill']['rc']}, {len(result['skill']['files'])} files"),
        ("replay into an untouched checkout", f"exit {r['rc']}, entry added: {r['entry_added']}, tree hash equal: "
                                              f"{r['tree_equal']}, verdict {r['verdict']}"),
    ]
    lines = [f"Project: `{result['project']}` at {commit}, adapted only by `{result['entry_file']}`; "
             f"{result['tracebacks']} tracebacks in {len(result['steps'])} steps.", "",
             "| step | result |", "|---|---|"]
    lines += [f"| {a} | {b} |" for a, b in rows]
    lines += ["", "| command | exit | s |", "|---|---:|---:|"]
    lines += [f"| `ascend-migrate {' '.join(s['args'])}` | {s['rc']} | {s['seconds']} |" for s in result["steps"]]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--project", type=Path, required=True, help="an untouched checkout of the public project")
    ap.add_argument("--entry", type=Path, required=True, help="the validation entry file to add to it")
    ap.add_argument("--python", default=sys.executable, help="interpreter with torch and ascend_migrate")
    ap.add_argument("--commit", default="", help="the commit measured, for the record")
    ap.add_argument("--out", type=Path, help="write the result JSON here")
    ap.add_argument("--md", type=Path, help="refresh the table between <!-- chain:begin/end --> in this file")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="chain-bench-") as tmp:
        result = chain(args.project.resolve(), args.entry.resolve(), args.python, Path(tmp))
    result["commit"] = args.commit
    text = json.dumps(result, indent=1, sort_keys=True) + "\n"
    if args.out:
        args.out.write_text(text)
    if args.md:
        md = args.md.read_text()
        begin, end = "<!-- chain:begin -->", "<!-- chain:end -->"
        head, rest = md.split(begin, 1)
        args.md.write_text(head + begin + "\n\n" + markdown(result, args.commit) + "\n\n" + end + rest.split(end, 1)[1])
    print(markdown(result, args.commit))
    ok = (result["scan"]["identical_twice"] and result["validate"]["verdict"] == "pass" and result["replay"]["tree_equal"]
          and result["replay"]["verdict"] == "pass" and result["tracebacks"] == 0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
