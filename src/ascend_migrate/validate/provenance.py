"""Provenance of a validation report: what was validated, where, against which goldens, and a
checksum over the report so a hand edit is detected.

* `tree_hash(root)`: SHA-256 over the sorted (path, content hash) pairs of every file that
  matters in the tree. The tree is what the scanner's walker sees (`scan.walk`: version-control
  folders, virtual environments found by their `pyvenv.cfg`, tagged caches, installed packages
  and our own folders are left out; `build/`, `dist/`, `env/` are source like any folder), minus
  our own outputs (`scan.own_outputs`: change lists, and JSON/SARIF reports recognised by their
  schema id), minus what running or installing the project writes into it (`__pycache__/`,
  `*.pyc`, `*.egg-info/`), minus any path listed in `extra_exclude`.
* `file_sha256(path)`: the golden file's hash.
* `sign(report)` / `check_signature(report)`: SHA-256 over the canonical JSON of the report
  without its `checksum` field. This is integrity, not security: anyone with the tool can
  re-sign, but an edit by hand (a status flipped to pass) no longer matches.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from ascend_migrate.scan.own_outputs import is_own_output
from ascend_migrate.scan.walk import walk_tree

__all__ = ["is_own_output", "iter_tree", "tree_hash", "tree_manifest", "file_sha256", "sign", "check_signature"]

TREE_HASH_ALGO = "sha256/files-v1"
CHECKSUM_ALGO = "sha256/canonical-json-v1"
# Written into the tree by running or installing the project (validation runs it): not content.
RUNTIME_DIRS = ("__pycache__",)
RUNTIME_DIR_SUFFIXES = (".egg-info",)
SKIP_SUFFIXES = (".pyc", ".pyo")


def _runtime_output(rel: str) -> bool:
    parts = rel.split("/")
    return rel.endswith(SKIP_SUFFIXES) or any(
        p in RUNTIME_DIRS or p.endswith(RUNTIME_DIR_SUFFIXES) for p in parts[:-1])


def iter_tree(root: Path, extra_exclude: Iterable[str] = ()) -> Iterator[tuple[str, Path]]:
    """(relative POSIX path, absolute path) of every file counted in the tree hash, sorted."""
    root = Path(root)
    patterns = [p.strip("/") for p in extra_exclude if p.strip("/")]
    found: list[tuple[str, Path]] = []
    for item in walk_tree(root, patterns).items:
        full = root / item.rel
        if _runtime_output(item.rel) or (item.kind == "file" and is_own_output(full)):
            continue
        found.append((item.rel, full))
    return iter(sorted(found))


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _entry_hash(full: Path) -> str:
    if full.is_symlink():
        return "symlink:" + hashlib.sha256(os.readlink(full).encode("utf-8", "surrogateescape")).hexdigest()
    return file_sha256(full)


def tree_manifest(root: Path, extra_exclude: Iterable[str] = ()) -> dict[str, str]:
    """{relative path: content hash} of the files that matter."""
    return {rel: _entry_hash(full) for rel, full in iter_tree(root, extra_exclude)}


def manifest_hash(manifest: dict[str, str]) -> str:
    h = hashlib.sha256()
    for rel in sorted(manifest):
        h.update(rel.encode("utf-8", "surrogateescape") + b"\0" + manifest[rel].encode() + b"\n")
    return h.hexdigest()


def tree_hash(root: Path, extra_exclude: Iterable[str] = ()) -> str:
    return manifest_hash(tree_manifest(root, extra_exclude))


def diff_manifests(expected: dict[str, str], actual: dict[str, str]) -> list[str]:
    """Lines naming every file that differs: '+ path' (extra), '- path' (missing), '~ path' (changed)."""
    lines = []
    for rel in sorted(set(expected) | set(actual)):
        if rel not in actual:
            lines.append(f"- {rel} (missing)")
        elif rel not in expected:
            lines.append(f"+ {rel} (not in the validated tree)")
        elif expected[rel] != actual[rel]:
            lines.append(f"~ {rel} (content differs)")
    return lines


# --- report checksum ---------------------------------------------------------------------

def _canonical(report: dict[str, Any]) -> bytes:
    body = {k: v for k, v in report.items() if k != "checksum"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str).encode("utf-8")


def sign(report: dict[str, Any]) -> dict[str, Any]:
    """Set report["checksum"] from the report's content (JSON-normalised first)."""
    normal = json.loads(json.dumps({k: v for k, v in report.items() if k != "checksum"}, default=str))
    report["checksum"] = {"algorithm": CHECKSUM_ALGO, "value": hashlib.sha256(_canonical(normal)).hexdigest()}
    return report


def check_signature(report: dict[str, Any]) -> Optional[str]:
    """None when the checksum matches the content; otherwise what is wrong."""
    checksum = report.get("checksum")
    if not isinstance(checksum, dict) or not isinstance(checksum.get("value"), str):
        return "the report has no checksum (it was not written by `ascend-migrate validate`, or predates checksums)"
    if checksum.get("algorithm") != CHECKSUM_ALGO:
        return f"unknown checksum algorithm {checksum.get('algorithm')!r}"
    if hashlib.sha256(_canonical(report)).hexdigest() != checksum["value"]:
        return "the checksum does not match the content: the report was edited after `ascend-migrate validate` wrote it"
    return None


# --- host record ---------------------------------------------------------------------------

def _npu_model(npu_smi: Any) -> Optional[str]:
    chips = npu_smi.get("chips") if isinstance(npu_smi, dict) else None
    names = sorted({str(c.get("name")) for c in chips or [] if isinstance(c, dict) and c.get("name")})
    return ", ".join(names) or None


def host_record(environment: dict[str, Any]) -> dict[str, Any]:
    """The versions that define a host, from `ascend-migrate check --json`."""
    record: dict[str, Any] = {}
    stages = environment.get("stages") if isinstance(environment, dict) else None
    if isinstance(stages, list):
        by_id = {s.get("id"): s for s in stages if isinstance(s, dict)}

        def detail(stage: str, *keys: str) -> Any:
            d = (by_id.get(stage) or {}).get("details") or {}
            for key in keys:
                if d.get(key) not in (None, ""):
                    return d[key]
            return None

        record = {
            "python": detail("python", "python", "version"),
            "machine": detail("python", "machine"),
            "torch": detail("torch", "version"),
            "torch_npu": detail("torch_npu", "version"),
            "cann": detail("cann", "version", "cann_version"),
            "driver": detail("driver", "driver_version", "version", "driver"),
            "npu_model": _npu_model(detail("driver", "npu_smi")),
        }
        if not record["driver"]:
            smi = detail("driver", "npu_smi")
            record["driver"] = smi.get("version") or None if isinstance(smi, dict) else None
    elif isinstance(environment, dict):
        for key in ("python", "machine", "torch", "torch_npu", "cann", "driver", "npu_model"):
            if environment.get(key) is not None:
                record[key] = environment[key]
    if isinstance(environment, dict) and environment.get("error"):
        record["error"] = environment["error"]
    return record
