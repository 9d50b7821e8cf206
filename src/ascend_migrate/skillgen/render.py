"""Render a model skill (SKILL.md plus optional reference pages) from the generator inputs.

The Jinja templates live in this package (`templates/model-skill/`) so an installed toolkit
can render without a source checkout. Rendering is deterministic: the same inputs give the
same bytes (no timestamps), which keeps regenerated skills diffable.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional

import jinja2

from ascend_migrate import __version__
from ascend_migrate.printable import printable
from ascend_migrate.scan.own_outputs import is_own_output
from ascend_migrate.scan.walk import walk_tree
from ascend_migrate.skillgen.inputs import ChangeList, ScanSummary, ValidationReport
from ascend_migrate.skillgen.recipe import public_version, q as shell_quote, validate_command

HUAWEI_PIP_INDEX = "https://repo.huaweicloud.com/repository/pypi/simple/"
TEMPLATE_DIR = Path(__file__).parent / "templates" / "model-skill"
# Python packages torch_npu imports at run time but does not declare.
TORCH_NPU_RUNTIME_DEPS = ("decorator", "attrs", "psutil", "absl-py", "cloudpickle", "ml-dtypes", "scipy", "tornado")
PYG_EXTENSIONS = {
    "torch_scatter": "https://github.com/rusty1s/pytorch_scatter.git",
    "torch_sparse": "https://github.com/rusty1s/pytorch_sparse.git",
    "torch_cluster": "https://github.com/rusty1s/pytorch_cluster.git",
    "torch_spline_conv": "https://github.com/rusty1s/pytorch_spline_conv.git",
}
PYG_RE = re.compile(r"\btorch[_-](scatter|sparse|cluster|spline[_-]conv)\b", re.IGNORECASE)
VERSION_RE = re.compile(r"^[0-9][0-9A-Za-z.+_-]{0,40}$")
# Rendered inside single quotes in shell blocks, so no quotes, spaces or shell metacharacters.
URL_RE = re.compile(r"^https?://[A-Za-z0-9._~:/?#@&=%+-]+$")
INLINE_LIMITS = {"changes": 60, "items": 40, "findings_per_rule": 5}
MAX_WALK_FILES = 20000
MAX_READ_BYTES = 2 * 1024 * 1024


# --------------------------------------------------------------------------- Markdown helpers


def cell(value: Any) -> str:
    """Text safe inside a Markdown table cell."""
    text = re.sub(r"\s+", " ", printable(value, keep=" \t\n\r")).strip()
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    return text.replace("<", "&lt;").replace(">", "&gt;") or "-"


def inline_code(value: Any, table: bool = False) -> str:
    """An inline code span that survives backticks in the value (and pipes, in a table)."""
    text = re.sub(r"\s+", " ", printable(value, keep=" \t\n\r")).strip() or "-"
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    span = f"{ticks}{pad}{text}{pad}{ticks}"
    return span.replace("|", "\\|") if table else span


def fence_for(content: str) -> str:
    """A backtick fence longer than any backtick run inside `content`."""
    longest = max((len(m) for m in re.findall(r"`{3,}", content)), default=2)
    return "`" * max(3, longest + 1)


def wrap(text: str, width: int = 92) -> list[str]:
    words, lines, current = text.split(), [], ""
    for word in words:
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


def plain(text: str, limit: int = 400) -> str:
    """Single-line printable text for frontmatter: no control characters or angle brackets."""
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    text = text.replace("<", "").replace(">", "")
    return re.sub(r"\s+", " ", text).strip()[:limit]


# --------------------------------------------------------------------------- context


TORCH_FAMILY = ("torchvision", "torchaudio", "torchtext", "torchdata")


def build_recipe(inputs: "RenderInputs", replay: dict[str, Any], prov: dict[str, Any], requirements: list[str],
                 pyg: set[str], versions: dict[str, str]) -> dict[str, Any]:
    """The ordered install-and-replay steps of SKILL.md (skillgen.recipe has the why)."""
    from ascend_migrate.validate.precision import load_switches

    env = replay.get("environment") or {}
    vopts = (replay.get("validation") or {}).get("options") or {}
    golden = replay.get("golden") or {}
    npu = prov.get("device_kind") == "npu"
    # the NPU-host step's device: an npu (real or emulated) becomes npu:0 there; a CPU or CUDA
    # validation keeps the device it ran on (a string `--device` parses, never a label)
    device = ("npu:0" if npu or prov.get("device_kind") == "emulated-npu" else
              str(vopts.get("device") or inputs.report.device or "cpu").split(" ", 1)[0])
    host = prov.get("host") or {}
    # the report's versions (blank for a CPU-only port), else the validated host's torch
    torch_version = public_version(versions.get("torch") or env.get("torch") or str(host.get("torch") or ""))
    torch_specs = [f"torch=={torch_version}"] if VERSION_RE.match(torch_version or "") else []
    npu_version = versions.get("torch_npu") or (env.get("torch_npu") if npu else "")
    if npu_version and VERSION_RE.match(npu_version):
        torch_specs.append(f"torch_npu=={npu_version}")
    if versions.get("numpy") and VERSION_RE.match(versions["numpy"]):
        torch_specs.append(f"numpy=={versions['numpy']}")
    precision = str(vopts.get("precision") or "fp32")
    on = [f"`torch.{s.path}`" for s in load_switches() if s.value_for(precision) and "allow_" in s.id]
    precision_text = (f"{', '.join(on)} on (TF32/HF32), deterministic algorithms on." if on else
                      "TF32 and HF32 off (full fp32), deterministic algorithms on; the thresholds assume this mode.")
    venv_text = f"$HOME/.kernelcat/venvs/{inputs.slug}"
    skill_var = "${CLAUDE_SKILL_DIR}"
    capture = ["ascend-migrate", "validate", "capture", shell_quote(golden.get("entry_spec") or replay.get("entry", {}).get("spec") or ""),
               "--root", ".", "--device", shell_quote(golden.get("captured_on") or "cpu"),
               "--seed", shell_quote(golden.get("seed") or 0), "--precision", shell_quote(precision)]
    if golden.get("kind") == "train" and golden.get("steps"):
        capture += ["--steps", shell_quote(golden["steps"])]
    if golden.get("autocast"):
        capture += ["--autocast", shell_quote(golden["autocast"])]
    capture += ["-o", "golden.pt"]
    if vopts.get("command"):  # a command validation: the golden is captured from the same command
        capture = ["ascend-migrate", "validate", "capture", "--device",
                   shell_quote(str(golden.get("captured_on") or "cpu").replace("emulated-npu", "npu")),
                   "--seed", shell_quote(golden.get("seed") or 0), "--steps", shell_quote(golden.get("steps") or 5),
                   "-o", "golden.pt", "--", *(shell_quote(w) for w in golden.get("command") or vopts["command"])]
    return {
        "npu": npu,
        "device": device,
        "venv_text": venv_text,
        "venv_line": f'VENV="$HOME/.kernelcat/venvs/{inputs.slug}"',  # the slug is [a-z0-9-] (naming)
        "index_line": f'export PIP_INDEX_URL="${{PIP_INDEX_URL:-{inputs.pip_index}}}"',
        "wheel": env.get("tool_wheel") or "",
        "torch_specs": torch_specs,  # never a bare `torch`: an unpinned install pulls whatever is newest
        # torch itself comes from PyTorch's CPU index (torch_npu is built on the CPU build; PyPI's
        # x86_64 torch is a CUDA build of several GB); the rest from the package index
        "torch_spec": next((s for s in torch_specs if s.startswith("torch==")), ""),
        "other_specs": [s for s in torch_specs if not s.startswith("torch==")],
        "runtime_deps": env.get("torch_npu_runtime_deps") or [],
        "cuda_only": env.get("cuda_only_packages") or [],
        "requirements": requirements,
        "imports": [n for n in env.get("project_packages") or [] if n.replace("-", "_") not in pyg],
        # imported only by the project's tests: an optional block, never part of the recipe's path
        "test_imports": [n for n in env.get("test_packages") or [] if n.replace("-", "_") not in pyg],
        # PyTorch's own packages: their PyPI builds are CUDA builds that do not load beside a CPU
        # torch (torchvision::nms missing); step 6 imports them to prove the set works
        "torch_family": [n for n in env.get("project_packages") or [] if n.lower() in TORCH_FAMILY],
        "validate_cmd": validate_command('"$VENV/bin/ascend-migrate"', device, vopts, golden.get("file"),
                                         (replay.get("validation") or {}).get("thresholds_file"),
                                         (replay.get("validation") or {}).get("confirmed") or [], skill_var),
        "precision": precision,
        "precision_text": precision_text,
        "capture_cmd": " ".join(capture),
    }



@dataclass
class RenderInputs:
    slug: str
    display: str
    project_root: Path
    report: ValidationReport
    scan: ScanSummary
    changes: Optional[ChangeList]
    style: str
    pip_index: str
    notes: str = ""
    cpu_only: bool = False
    bundle: Any = None  # replaykit.Bundle
    provenance: Optional[dict] = None


def _env_lookup(env: dict[str, Any], *names: str) -> str:
    """Find a version-like value for any of `names`: in the stages of a host-check report
    (`{"stages": [{"id": "torch", "details": {"version": ...}}]}`), then as plain keys, one
    level into nested dicts."""
    wanted = {n.lower() for n in names}
    candidates: list[Any] = []
    stages = env.get("stages")
    if isinstance(stages, list):
        for stage in stages:
            if isinstance(stage, dict) and str(stage.get("id", "")).lower() in wanted:
                details = stage.get("details")
                if isinstance(details, dict):
                    candidates.extend(details.get(k) for k in ("version", *names) if k in details)
    for key, value in env.items():
        if str(key).lower() in wanted:
            candidates.append(value)
    for value in env.values():
        if isinstance(value, dict):
            for key, inner in value.items():
                if str(key).lower() in wanted:
                    candidates.append(inner)
    for value in candidates:
        if isinstance(value, dict):
            value = value.get("version")
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            text = str(value).strip()
            if VERSION_RE.match(text):
                return text
    return ""


def _project_files(root: Path) -> Iterable[Path]:
    """The project's files as the scanner sees them (`scan.walk`: no VCS folders, virtual
    environments or caches; `build/` and `dist/` are source), without this tool's outputs."""
    if root.is_file():
        yield root
        return
    count = 0
    for item in walk_tree(root).items:
        if item.kind != "file":
            continue
        path = root / item.rel
        if is_own_output(path):
            continue
        count += 1
        if count > MAX_WALK_FILES:
            return
        yield path


def _project_facts(root: Path) -> tuple[list[str], set[str]]:
    """Top-level requirement files and PyG extensions the project mentions (text only)."""
    requirements: list[str] = []
    pyg: set[str] = set()
    base = root if root.is_dir() else root.parent
    for path in _project_files(root):
        name = path.name
        is_req = name.startswith("requirements") and name.endswith((".txt", ".in"))
        if is_req and path.parent == base:
            requirements.append(name)
        if not (is_req or name.endswith(".py") or name in ("setup.cfg", "pyproject.toml", "environment.yml")):
            continue
        try:
            if path.is_symlink() or path.stat().st_size > MAX_READ_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for match in PYG_RE.finditer(text):
            pyg.add("torch_" + match.group(1).lower().replace("-", "_"))
    return sorted(requirements), pyg


def operators_context(section: Any) -> Optional[dict[str, Any]]:
    """The report's `operators` section (validate.operators) as the template reads it; None for
    a report made before validation recorded operators."""
    if not isinstance(section, dict):
        return None
    rows = [r for r in section.get("fallback") or [] if isinstance(r, dict)]
    src = section.get("op_data") if isinstance(section.get("op_data"), dict) else {}
    return {
        "checked": bool(section.get("checked")),
        "why": str(section.get("why") or "not recorded"),
        "release": str(section.get("release") or "?"),
        "release_choice": str(section.get("release_choice") or ""),
        "release_known": bool(section.get("release_known")),
        "op_plugin": str(src.get("op_plugin_commit") or "")[:10],
        "steps": section.get("steps") or 0,
        "supported": section.get("supported") or 0,
        "fallback": [{"op": str(r.get("op")), "count": r.get("count", 0), "per_step": r.get("per_step", "-"),
                      "site": str(r.get("site") or "-"), "fails": bool(r.get("fails")),
                      "dtypes": ", ".join(str(d) for d in r.get("dtypes") or []) or "-"} for r in rows[:40]],
        "more": max(0, len(rows) - 40),
        "wide": [{"op": str(r.get("op")), "dtypes": ", ".join(str(d) for d in r.get("dtypes") or [])}
                 for r in (section.get("wide_dtypes") or [])[:20] if isinstance(r, dict)],
    }


def build_context(inputs: RenderInputs, compact: bool) -> dict[str, Any]:
    report, scan, changes = inputs.report, inputs.scan, inputs.changes
    env = report.raw_environment
    versions = {
        "python": _env_lookup(env, "python", "python_version"),
        "torch": _env_lookup(env, "torch", "torch_version", "pytorch"),
        "torch_npu": _env_lookup(env, "torch_npu", "torch_npu_version", "torch-npu"),
        "cann": _env_lookup(env, "cann", "cann_version"),
        "numpy": _env_lookup(env, "numpy", "numpy_version"),
    }
    if inputs.cpu_only:
        # a CPU box's torch is not the NPU host's: pin nothing that was not measured on an NPU
        versions.update(torch="", torch_npu="", cann="")
    requirements, pyg = _project_facts(inputs.project_root)
    text_blobs = [f.symbol for f in scan.findings] + [f.message for f in scan.findings] + scan.packages
    for blob in text_blobs:
        for match in PYG_RE.finditer(blob):
            pyg.add("torch_" + match.group(1).lower().replace("-", "_"))
    pyg_list = [(name, PYG_EXTENSIONS[name]) for name in sorted(pyg) if name in PYG_EXTENSIONS]

    recorded_manual = {
        (c.file, c.start_line, c.rule) for c in (changes.changes if changes else []) if c.operation == "manual"
    }
    by_rule: dict[str, list] = defaultdict(list)
    for finding in scan.findings:
        by_rule[finding.rule].append(finding)
    rule_rows = []
    manual_groups = []
    for rule in sorted(by_rule):
        group = by_rule[rule]
        severities = Counter(f.severity for f in group)
        auto = all(inputs.style in f.styles_with_fix for f in group)
        rule_rows.append(
            {
                "rule": rule,
                "count": len(group),
                "severity": ", ".join(f"{k} {v}" for k, v in sorted(severities.items())),
                "auto": "yes" if auto else "no",
                "message": group[0].message,
            }
        )
        manual = [
            f for f in group
            if inputs.style not in f.styles_with_fix
            and f.severity in ("error", "warning")
            and (f.path, f.line, f.rule) not in recorded_manual
        ]
        if manual:
            limit = INLINE_LIMITS["findings_per_rule"]
            manual_groups.append(
                {
                    "rule": rule,
                    "message": manual[0].message,
                    "count": len(manual),
                    "locations": [f"{f.path}:{f.line}" for f in manual[:limit]],
                    "more": max(0, len(manual) - limit),
                }
            )
    if compact:
        rule_rows = rule_rows[:40]
        manual_groups = manual_groups[:25]

    all_changes = changes.changes if changes else []
    change_list = [c for c in all_changes if c.operation != "manual"]
    manual_changes = [c for c in all_changes if c.operation == "manual"]
    per_file: dict[str, list] = defaultdict(list)
    for change in change_list:
        per_file[change.file].append(change)
    file_groups = [{"file": f, "changes": per_file[f]} for f in sorted(per_file)]
    changes_inline = bool(change_list) and not compact and len(change_list) <= INLINE_LIMITS["changes"]
    items_inline = not compact and len(report.items) <= INLINE_LIMITS["items"]
    status_counts = Counter(item.status for item in report.items)

    display = inputs.display
    cpu_prefix = ("CPU-ONLY VALIDATION, NOT RUN ON AN ASCEND NPU: the numbers of this port were checked on "
                  "CPU; re-validate on an NPU before trusting it. " if inputs.cpu_only else "")
    description = plain(
        cpu_prefix +
        f"Replays the validated Huawei Ascend NPU port of {display} (skill {inputs.slug}) - the "
        "verified environment, pip installs, the exact code changes and the validation "
        f"thresholds it passed. Use when setting up, porting again, re-validating or debugging "
        f"{display} on Ascend NPUs with torch_npu, or when a new checkout of the {display} "
        "project has to run on an NPU host.",
        limit=1000,
    )
    compat_parts = ["Huawei Ascend NPU host with CANN"]
    if versions["cann"]:
        compat_parts[0] += f" {versions['cann']}"
    for key, label in (("python", "Python"), ("torch", "torch"), ("torch_npu", "torch_npu")):
        if versions[key]:
            compat_parts.append(f"{label} {versions[key]}")
    compat_parts.append("the ascend-migrate wheel stored in the skill's tools folder")
    compatibility = plain(", ".join(compat_parts) + ".", limit=480)

    bundle = inputs.bundle
    replay = bundle.replay if bundle is not None else {}
    prov = inputs.provenance or {}
    host = prov.get("host") or {}
    recipe = build_recipe(inputs, replay, prov, requirements, {name for name, _ in pyg_list}, versions)
    return {
        "recipe": recipe,
        "cpu_only": inputs.cpu_only,
        "replay": replay,
        "bundle": bundle,
        "host_rows": [(k, str(v)) for k, v in host.items() if v],
        "validated_device": prov.get("device") or report.device,
        "source_name": plain((bundle.source_name if bundle is not None else "") or inputs.project_root.resolve().name
                             or "project", 80),
        "slug": inputs.slug,
        "display": display,
        "generator_version": __version__,
        "description_lines": wrap(description),
        "compatibility_lines": wrap(compatibility),
        "project_name": plain(inputs.project_root.resolve().name or "project", 80),
        "style": inputs.style,
        "pip_index": inputs.pip_index,
        "versions": versions,
        "runtime_deps": TORCH_NPU_RUNTIME_DEPS,
        "requirements": requirements,
        "pyg": pyg_list,
        "scan": scan,
        "rule_rows": rule_rows,
        "manual_groups": manual_groups,
        "manual_changes": manual_changes[: (25 if compact else 80)],
        "manual_more": max(0, len(manual_changes) - (25 if compact else 80)),
        "notes": inputs.notes.strip(),
        "changes_given": changes is not None,
        "change_count": len(change_list),
        "file_groups": file_groups,
        "changes_inline": changes_inline,
        "report": report,
        "items_inline": items_inline,
        "status_counts": sorted(status_counts.items()),
        "operators": operators_context(report.raw.get("operators")),
    }


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        # file names, notes and messages come from the ported tree: every value is written with
        # its control characters escaped (`printable`); line breaks and tabs of multi-line text
        # are the template's layout (a name's line break is collapsed by `cell` and `code`)
        finalize=lambda value: printable(value, keep="\n\t"),
    )
    env.filters["cell"] = cell
    env.filters["code"] = inline_code
    env.filters["shq"] = shell_quote
    env.globals["fence_for"] = fence_for
    return env


def render_files(inputs: RenderInputs, compact: bool = False) -> dict[str, str]:
    """Return {relative path: text} for the skill folder; SKILL.md is always present."""
    env = _environment()
    context = build_context(inputs, compact)
    files = {"SKILL.md": _tidy(env.get_template("SKILL.md.j2").render(**context))}
    if context["change_count"] and not context["changes_inline"]:
        files["references/code-changes.md"] = _tidy(env.get_template("code-changes.md.j2").render(**context))
    if not context["items_inline"]:
        files["references/validation-items.md"] = _tidy(
            env.get_template("validation-items.md.j2").render(**context)
        )
    return files


def _tidy(text: str) -> str:
    """Collapse runs of blank lines outside code fences; end with exactly one newline."""
    out: list[str] = []
    fence = ""
    for line in text.split("\n"):
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence) and stripped.strip("`") == "":
                fence = ""
            out.append(line)
            continue
        match = re.match(r"(`{3,})", stripped)
        if match:
            fence = match.group(1)
        elif not line.strip() and out and not out[-1].strip():
            continue
        out.append(line)
    return "\n".join(out).strip("\n") + "\n"


def check_pip_index(url: str) -> str:
    from ascend_migrate.skillgen.errors import SkillGenError

    if not URL_RE.match(url or ""):
        raise SkillGenError(f"--pip-index {url!r} is not an http(s) URL")
    return url
