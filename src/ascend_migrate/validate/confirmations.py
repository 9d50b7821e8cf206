"""A person's decisions on manual checklist items, bound to the tree and the host they were made on.

Only evidence clears an automatic item: `--confirm` is accepted for items the checklist defines
as `manual` (a question no tool can answer, such as whether the host is the production one) and
for nothing else. A confirmation records the hash of the tree as validated and the host it was
made on; when either differs at the next validation, it is dropped and says why, so a decision
made on a laptop never travels to an NPU host, and an edit of the port asks for it again.

The file is `.ascend-migrate/validation-confirmations.json` in the validated tree:

    {"schema": "ascend-migrate/validation-confirmations/2",
     "confirmed": {ITEM: {"at": ISO time, "note": TEXT, "tree_sha256": HEX, "host": {...}}},
     "run_outputs": [paths a validation run wrote into the tree]}

`run_outputs` are left out of the tree hash a confirmation is bound to: a run that writes logs
or checkpoints into the tree does not, by that, invalidate the decisions made before it.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import platform
import socket
from pathlib import Path
from typing import Any, Iterable, Optional

SCHEMA = "ascend-migrate/validation-confirmations/2"
CONFIRM_FILE = Path(".ascend-migrate") / "validation-confirmations.json"
MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")


class ConfirmationRefused(ValueError):
    """`--confirm` named an item that only evidence can clear."""


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def host_identity() -> dict[str, str]:
    """Who this host is: its name and a digest of its name, machine id and architecture."""
    name = socket.gethostname()
    machine_id = ""
    for candidate in MACHINE_ID_FILES:
        try:
            machine_id = Path(candidate).read_text(encoding="ascii", errors="replace").strip()
        except OSError:
            continue
        if machine_id:
            break
    digest = hashlib.sha256("\0".join((name, machine_id, platform.machine())).encode()).hexdigest()
    return {"name": name, "id": digest[:32]}


def confirmable_ids() -> list[str]:
    from ascend_migrate.validate.checklist import default_checklist

    return [i.id for i in default_checklist() if i.kind == "manual"]


def check_confirmable(ids: Iterable[str]) -> None:
    """Raise KeyError for an unknown id, ConfirmationRefused for an automatic item."""
    from ascend_migrate.validate.checklist import default_checklist

    items = {i.id: i for i in default_checklist()}
    unknown = [i for i in ids if i not in items]
    if unknown:
        raise KeyError(", ".join(unknown))
    automatic = [items[i] for i in ids if items[i].kind != "manual"]
    if automatic:
        names = ", ".join(f"{i.id} ({i.kind})" for i in automatic)
        raise ConfirmationRefused(
            f"{names}: decided by the tool from evidence, not by a confirmation; only manual items "
            f"({', '.join(confirmable_ids())}) can be confirmed. Fix what the item reports, or produce "
            "the evidence it names, and run validate again")


def _state_file(root: Path) -> Path:
    return Path(root) / CONFIRM_FILE


def load_state(root: Path) -> dict[str, Any]:
    """The confirmations file of the tree at `root` ({} when absent, unreadable or reached
    through a link: a record that is not ours is ignored)."""
    from ascend_migrate.safe_paths import UnsafePathError, no_link_below

    file = _state_file(root)
    try:
        no_link_below(Path(root), file, "confirmations")
    except UnsafePathError:
        return {}
    if not file.is_file():
        return {}
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load_confirmations(root: Path) -> dict[str, dict[str, Any]]:
    confirmed = load_state(root).get("confirmed")
    return confirmed if isinstance(confirmed, dict) else {}


def run_outputs(root: Path) -> list[str]:
    outputs = load_state(root).get("run_outputs")
    return [p for p in outputs if isinstance(p, str)] if isinstance(outputs, list) else []


def _write(root: Path, state: dict[str, Any]) -> Path:
    from ascend_migrate.fix.result import write_atomic
    from ascend_migrate.safe_paths import state_path

    file = state_path(Path(root), CONFIRM_FILE.name)  # a linked .ascend-migrate raises UnsafePathError
    body = {"schema": SCHEMA, "confirmed": state.get("confirmed") or {},
            "run_outputs": sorted(set(state.get("run_outputs") or []))}
    write_atomic(file, (json.dumps(body, indent=2) + "\n").encode("utf-8"))
    return file


def binding_hash(manifest: dict[str, str], root: Path) -> str:
    """The tree hash a confirmation is bound to: the validated tree minus what runs wrote."""
    from ascend_migrate.validate.provenance import manifest_hash

    outputs = set(run_outputs(root))
    return manifest_hash({rel: digest for rel, digest in manifest.items() if rel not in outputs})


def record(root: Path, ids: list[str], note: str, manifest: dict[str, str]) -> Path:
    """Record a person's decision on manual items, bound to this tree and this host."""
    check_confirmable(ids)
    if not note.strip():
        raise ConfirmationRefused("a confirmation needs a reason: --note 'why this item is acceptable'")
    state = load_state(root)
    confirmed = dict(load_confirmations(root))
    bound = binding_hash(manifest, root)
    host = host_identity()
    for item_id in ids:
        confirmed[item_id] = {"at": _now(), "note": note, "tree_sha256": bound, "host": host}
    state["confirmed"] = confirmed
    return _write(root, state)


def remember_run_outputs(root: Path, written: Iterable[str]) -> None:
    """Add the files a validation run wrote to the list the binding hash leaves out."""
    written = [w for w in written if not w.startswith(".ascend-migrate/")]
    if not written:
        return
    state = load_state(root)
    known = set(run_outputs(root))
    if known.issuperset(written):
        return
    state["run_outputs"] = sorted(known.union(written))
    try:
        _write(root, state)
    except Exception:  # a read-only tree keeps no record; its confirmations then need the same tree
        pass


def why_stale(confirmation: dict[str, Any], bound: str) -> Optional[str]:
    """None when the confirmation holds for this tree and host, else why it was dropped."""
    if not isinstance(confirmation, dict):
        return "the record is malformed"
    if confirmation.get("tree_sha256") != bound:
        return ("the tree changed since it was confirmed (or the record predates binding): "
                "check the item again and confirm it anew")
    host = confirmation.get("host") if isinstance(confirmation.get("host"), dict) else {}
    here = host_identity()
    if host.get("id") != here["id"]:
        return (f"it was confirmed on another host ({host.get('name') or 'unknown'}); a person "
                f"confirms it again on this one ({here['name']})")
    return None
