"""What a model skill needs beyond its text: the gate on the validation report, and the replay
bundle (manual.patch, replay.json, the entry file, the golden file).

The gate refuses, each time saying what to do:
* a report whose checksum does not match its content (edited by hand);
* a report without provenance (written before provenance existed);
* a verdict that is not pass by the one verdict rule (`validate.verdict.decide`);
* a report without a numerical comparison against goldens;
* a report from a device that is not an NPU, unless --allow-cpu;
* a report whose tree hash differs from the tree as it is now (stale).
"""
from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ascend_migrate.scan.walk import skip_reason
from ascend_migrate.skillgen.errors import SkillGenError
from ascend_migrate.validate import provenance
from ascend_migrate.validate.verdict import decide

REPLAY_SCHEMA = "ascend-migrate/replay/1"
MAX_GOLDEN_BYTES = 256 * 1024 * 1024
MIGRATE_FLAGS = (("min_torch", "--min-torch"), ("torch_npu_version", "--torch-npu"))
MIGRATE_SWITCHES = (("annotate", "--annotate"), ("safe_only", "--safe-only"), ("inject_init", "--inject-init"))


def gate_report(data: dict[str, Any], path: Path, project: Path, allow_cpu: bool) -> dict[str, Any]:
    """Refuse a report that does not prove a port of this tree; return its provenance."""
    rerun = f"re-run `ascend-migrate validate {project} --device npu:0 --golden GOLDEN.pt`"
    problem = provenance.check_signature(data)
    if problem:
        raise SkillGenError(f"{path}: {problem}; refusing to write a model skill. Do not edit reports: {rerun} "
                            "to get a fresh one")
    prov = data.get("provenance")
    if not isinstance(prov, dict) or not isinstance(prov.get("tree"), dict):
        raise SkillGenError(f"{path}: the report records no provenance (device, goldens, tree hash); {rerun} "
                            "with this version of ascend-migrate")
    items = data.get("items") or []
    decision = decide(items)
    if decision.verdict != data.get("verdict"):
        raise SkillGenError(f"{path}: the report says {data.get('verdict')!r} but its items decide "
                            f"{decision.verdict!r}; {rerun}")
    if decision.verdict != "pass":
        raise SkillGenError(f"{path}: validation verdict is 'fail' ({'; '.join(decision.reasons[:3])}); "
                            "fix those items and re-run `ascend-migrate validate`")
    golden = prov.get("golden") or {}
    if not golden.get("compared"):
        raise SkillGenError(
            f"{path}: the port was not compared numerically ({golden.get('why_not') or 'no golden'}); a static pass "
            "does not show the model computes the same numbers. Capture goldens from the original on the reference "
            "machine (`ascend-migrate validate capture FILE.py:FUNCTION --device cuda:0 -o golden.pt`), then "
            f"{rerun.replace('GOLDEN.pt', 'golden.pt')}")
    kind = prov.get("device_kind")
    if kind == "emulated-npu" and not allow_cpu:
        raise SkillGenError(
            f"{path}: validated on {prov.get('device')!r}: an emulated npu that runs CPU kernels is not evidence of "
            f"a pass on Ascend. Validate on an NPU host (`ascend-migrate validate {project} --device npu:0 --golden "
            "golden.pt`), or pass --allow-cpu to write a skill marked as not validated on an NPU")
    if kind != "npu" and not allow_cpu:
        raise SkillGenError(
            f"{path}: validated on {prov.get('device')!r}, not an Ascend NPU, so it does not show the port runs on "
            f"Ascend. Validate on an NPU host (`ascend-migrate validate {project} --device npu:0 --golden golden.pt`), "
            "or pass --allow-cpu to write a skill that says it was validated on CPU only")
    tree = prov["tree"]
    now = provenance.tree_manifest(project, tree.get("excluded") or [])
    if provenance.manifest_hash(now) != tree.get("sha256"):
        recorded = tree.get("manifest") if isinstance(tree.get("manifest"), dict) else {}
        differ = provenance.diff_manifests(recorded, now) if recorded else []
        listing = ("; files: " + ", ".join(differ[:8]) + (f" and {len(differ) - 8} more" if len(differ) > 8 else "")
                   ) if differ else ""
        raise SkillGenError(f"{path}: stale report: the tree at {project} changed since it was validated{listing}. "
                            f"{rerun[0].upper() + rerun[1:]} on the tree as it is now")
    return prov


@dataclass
class Bundle:
    files: dict[str, bytes] = field(default_factory=dict)  # extra files of the skill folder
    replay: dict[str, Any] = field(default_factory=dict)
    patch_files: list[str] = field(default_factory=list)
    patch_added: int = 0
    patch_removed: int = 0
    source_name: str = ""


def migrate_command(options: dict[str, Any], target: str = ".") -> str:
    parts = ["ascend-migrate", "migrate", shlex.quote(target), "--write", "--style",
             shlex.quote(str(options.get("style") or "transfer"))]
    for key, flag in MIGRATE_FLAGS:
        if options.get(key):
            parts += [flag, shlex.quote(str(options[key]))]
    for key, flag in MIGRATE_SWITCHES:
        if options.get(key):
            parts.append(flag)
    for key, flag in (("entry", "--entry"), ("no_entry", "--no-entry")):
        for path in options.get(key) or ():
            parts += [flag, shlex.quote(str(path))]
    return " ".join(parts)


def _copy_original(original: Path, dest: Path) -> None:
    def ignore(dirpath: str, names: list[str]) -> set[str]:
        skipped = set()
        for name in names:
            full = Path(dirpath) / name
            if full.is_dir() and not full.is_symlink() and skip_reason(str(full), name):
                skipped.add(name)  # VCS, virtual environments, caches, our own folders: as the walker decides
            elif full.is_file() and provenance.is_own_output(full):
                skipped.add(name)
        return skipped

    shutil.copytree(original, dest, symlinks=True, ignore=ignore)


def build_bundle(project: Path, original: Path, report: dict[str, Any], prov: dict[str, Any],
                 options: dict[str, Any], slug: str, pip_index: str, allow_cpu: bool,
                 versions: dict[str, str]) -> Bundle:
    """Migrate a copy of `original` with the recorded flags and diff it against the validated tree."""
    from ascend_migrate.fix.api import migrate
    from ascend_migrate.patchfile import diff_trees

    excluded = prov["tree"].get("excluded") or []
    with tempfile.TemporaryDirectory(prefix="ascend-migrate-skill-") as tmp:
        base = Path(tmp) / "migrated"
        _copy_original(original, base)
        try:
            migrate(base, write=True, style=options.get("style") or "transfer",
                    min_torch=options.get("min_torch") or "2.6", annotate=bool(options.get("annotate")),
                    safe_only=bool(options.get("safe_only")), inject_init=bool(options.get("inject_init")),
                    torch_npu_version=options.get("torch_npu_version"),
                     entry=options.get("entry") or (), no_entry=options.get("no_entry") or ())
        except Exception as exc:  # noqa: BLE001 - reported with what to do
            raise SkillGenError(f"cannot re-run the migration on a copy of {original}: {type(exc).__name__}: {exc}")
        base_files = dict(provenance.iter_tree(base, excluded))
        final_files = dict(provenance.iter_tree(project, excluded))
        same = {rel: rel in base_files and base_files[rel].read_bytes() == final_files[rel].read_bytes()
                for rel in final_files}
        diff = diff_trees(base, base_files, project, final_files, same)
        bundle = Bundle(patch_files=diff.files, patch_added=diff.added, patch_removed=diff.removed,
                        source_name=original.resolve().name)
        bundle.files["manual.patch"] = diff.patch.encode("utf-8", errors="surrogateescape")
        for rel in diff.binary:
            bundle.files[f"files/{rel}"] = final_files[rel].read_bytes()

    golden = prov.get("golden") or {}
    golden_file = None
    gpath = Path(golden.get("path") or "")
    if golden.get("path") and gpath.is_file() and gpath.stat().st_size <= MAX_GOLDEN_BYTES:
        data = gpath.read_bytes()
        now = hashlib.sha256(data).hexdigest()
        if golden.get("sha256") and now != golden["sha256"]:
            # re-captured after the validation: the bundle would carry a reference the port never passed
            raise SkillGenError(f"{gpath}: the golden file changed since the validation (sha256 {now}, the report "
                                f"recorded {golden['sha256']}); restore the golden the port was validated against "
                                "or re-run `ascend-migrate validate` with this one")
        golden_file = f"golden/{gpath.name}"
        bundle.files[golden_file] = data
    entry_spec = golden.get("entry") or (report.get("options") or {}).get("entry") or ""
    entry_file = unported_entry = None
    target = entry_spec.rpartition(":")[0]
    if target.endswith(".py") and (project / target).is_file():
        entry_file = f"entry/{target}"
        bundle.files[entry_file] = (project / target).read_bytes()
        # An upstream checkout lacks the entry the port was validated with; the replay puts this
        # copy (as written, before migrating) in place first, so migrate sees the same tree.
        if (original / target).is_file():
            unported_entry = f"entry/unported/{target}"
            bundle.files[unported_entry] = (original / target).read_bytes()
    vopts = dict(report.get("options") or {})
    thresholds_file = None
    if vopts.get("thresholds_file"):
        tpath = Path(vopts["thresholds_file"])
        if not tpath.is_file():
            raise SkillGenError(f"the validation used --thresholds {tpath}, which no longer exists; the skill must "
                                "store the thresholds that passed. Restore the file or re-run `ascend-migrate validate`")
        thresholds_file = "thresholds.yaml"
        bundle.files[thresholds_file] = tpath.read_bytes()
    # command lines made from names in the tree: every value is shell-quoted
    q = lambda value: shlex.quote(str(value))  # noqa: E731
    capture = (f"ascend-migrate validate capture {q(entry_spec)} --root UNPORTED_CHECKOUT "
               f"--device {q(golden.get('captured_on') or 'cpu')} "
               f"--seed {q(golden.get('seed') or 0)}"
               + (f" --steps {q(golden['steps'])}" if golden.get("kind") == "train" and golden.get("steps") else "")
               + (f" --autocast {q(golden['autocast'])}" if golden.get("autocast") else "")
               + " -o golden.pt")
    validate_cmd = "ascend-migrate validate . --device npu:0 --golden golden.pt"
    for key, flag in (("entry", "--entry"), ("autocast", "--autocast"), ("dtype", "--dtype"),
                      ("ddp_entry", "--ddp-entry"), ("ddp_steps", "--ddp-steps")):
        if vopts.get(key):
            validate_cmd += f" {flag} {q(vopts[key])}"
    if vopts.get("precision"):
        validate_cmd += f" --precision {q(vopts['precision'])}"
    if vopts.get("ddp") is False:
        validate_cmd += " --no-ddp"
    if thresholds_file:
        validate_cmd += f" --thresholds SKILL_DIR/{thresholds_file}"
    if vopts.get("command"):  # validated with the project's own command: the replay runs it too
        words = " ".join(q(w) for w in vopts["command"])
        validate_cmd += f" -- {words}"
        capture = (f"ascend-migrate validate capture --device "
                   f"{q(str(golden.get('captured_on') or 'cpu').replace('emulated-npu', 'npu'))} "
                   f"--seed {q(golden.get('seed') or 0)} --steps {q(golden.get('steps') or 5)} -o golden.pt -- "
                   + " ".join(q(w) for w in golden.get("command") or vopts["command"]))
    bundle.replay = {
        "schema": REPLAY_SCHEMA,
        "model": slug,
        "project": bundle.source_name,
        "validated_on": {"device": prov.get("device"), "kind": prov.get("device_kind"), "allow_cpu": allow_cpu,
                         "host": prov.get("host")},
        "environment": {**versions, "pip_index": pip_index},
        "migrate": {"options": options, "command": migrate_command(options)},
        "manual_patch": {"file": "manual.patch", "files": diff.files, "added": diff.added, "removed": diff.removed,
                         "binary_files": [f"files/{r}" for r in diff.binary], "deleted_binary": diff.deleted_binary},
        "tree": {"algorithm": prov["tree"].get("algorithm"), "sha256": prov["tree"].get("sha256"),
                 "excluded": excluded, "manifest": prov["tree"].get("manifest")},
        "entry": {"spec": entry_spec, "file": entry_file, "unported_file": unported_entry,
                  "path": target if entry_file else None},
        "golden": {"sha256": golden.get("sha256"), "file": golden_file, "kind": golden.get("kind"),
                   "seed": golden.get("seed"), "steps": golden.get("steps"), "dtype": golden.get("dtype"),
                   "captured_on": golden.get("captured_on"), "capture_command": capture,
                   "command": golden.get("command"), "emulated": bool(golden.get("emulated"))},
        "validation": {"options": vopts, "command": validate_cmd, "thresholds_file": thresholds_file,
                       "thresholds": (report.get("thresholds") or {}).get("used"),
                       "report_checksum": (report.get("checksum") or {}).get("value"),
                       "verdict": report.get("verdict"),
                       "confirmed": [{"id": i["id"], "note": (i.get("confirmed") or {}).get("note", "")}
                                     for i in report.get("items", []) if i.get("status") == "confirmed"],
                       "open_warnings": report.get("open_warnings") or []},
    }
    bundle.files["replay.json"] = (json.dumps(bundle.replay, indent=2, sort_keys=False) + "\n").encode("utf-8")
    return bundle


def find_original(project: Path, original: Optional[Path]) -> Path:
    """The unported checkout the port started from: --original, else the migrate run's source."""
    if original is not None:
        if not original.is_dir():
            raise SkillGenError(f"--original {original}: not a folder")
        return original
    from ascend_migrate.fix.runs import run_record

    record = run_record(project) or {}
    source = record.get("source")
    if record.get("mode") == "output" and source and Path(source).is_dir() and Path(source).resolve() != project.resolve():
        return Path(source)
    raise SkillGenError(
        f"{project}: cannot tell which unported checkout this port started from (the manual work is stored as a "
        "diff against the migrate output of it). Pass --original PATH: a clean checkout of the project before "
        "`ascend-migrate migrate` (with the validation entry file added)")


def migrate_options(project: Path, style: Optional[str]) -> dict[str, Any]:
    from ascend_migrate.fix.runs import run_record

    record = run_record(project) or {}
    options = dict(record.get("options") or {})
    if style:
        if options.get("style") and options["style"] != style:
            raise SkillGenError(f"--style {style} disagrees with the last migrate run, which used "
                                f"--style {options['style']}")
        options["style"] = style
    options.setdefault("style", "transfer")
    return options
