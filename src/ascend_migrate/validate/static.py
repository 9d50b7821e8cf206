"""Static checklist items: decided from the scanner's ScanResult and a read-only look at the
ported tree. Each check is a function of a StaticContext returning a CheckResult."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from ascend_migrate.scan.api import ScanResult
from ascend_migrate.scan.finding import Finding
from ascend_migrate.scan.pyast.reporting import OFF_NPU_SUFFIXES
from ascend_migrate.validate.checklist import ChecklistItem
from ascend_migrate.validate.project import (
    Project,
    ancestors,
    call_name,
    dotted,
    guard_of,
    node_at,
    parent,
)
from ascend_migrate.validate.thresholds import Thresholds

MAX_EVIDENCE = 50  # per item; the rest is counted


@dataclass
class CheckResult:
    status: str  # pass | fail | manual-pending | skip
    evidence: list[dict[str, Any]] = field(default_factory=list)
    summary: str = ""


@dataclass
class StaticContext:
    scan: ScanResult
    project: Project
    thresholds: Thresholds
    item: Optional[ChecklistItem] = None

    @property
    def transfer(self) -> bool:
        """Every entry point imports transfer_to_npu (so its patches are active everywhere)."""
        eps = self.scan.entry_points
        return bool(eps) and all(ep.has_transfer_import for ep in eps)

    def findings(self, *rules: str) -> list[Finding]:
        wanted = set(rules)
        return sorted((f for f in self.scan.findings if f.rule in wanted), key=Finding.sort_key)

    def node_for(self, f: Finding) -> Optional[ast.AST]:
        if not f.path.endswith(".py"):
            return None
        tree = self.project.tree(f.path)
        if tree is None:
            return None
        return node_at(tree, f.line, f.col)


def finding_evidence(f: Finding, note: str = "") -> dict[str, Any]:
    ev: dict[str, Any] = {
        "rule": f.rule,
        "path": f.path,
        "line": f.line,
        "col": f.col,
        "message": f.message,
        "severity": f.severity,
    }
    if f.symbol:
        ev["symbol"] = f.symbol
    if note:
        ev["note"] = note
    return ev


def location(path: str, line: int, message: str, **extra: Any) -> dict[str, Any]:
    return {"path": path, "line": line, "message": message, **extra}


def _cap(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if len(evidence) <= MAX_EVIDENCE:
        return evidence
    rest = len(evidence) - MAX_EVIDENCE
    return evidence[:MAX_EVIDENCE] + [{"message": f"... and {rest} more"}]


def _result(bad: list[dict], good: list[dict], pass_summary: str, fail_summary: str) -> CheckResult:
    if bad:
        return CheckResult("fail", _cap(bad + good), fail_summary.format(n=len(bad)))
    return CheckResult("pass", _cap(good), pass_summary)


CHECKS: dict[str, Callable[[StaticContext], CheckResult]] = {}


def check(name: str):
    def register(fn: Callable[[StaticContext], CheckResult]):
        CHECKS[name] = fn
        return fn

    return register


def run_static(item: ChecklistItem, ctx: StaticContext) -> CheckResult:
    fn = CHECKS.get(item.check or "")
    if fn is None:
        raise KeyError(f"checklist item {item.id}: no static check named {item.check!r}")
    ctx.item = item
    return fn(ctx)


# --- items decided from scanner findings ----------------------------------------------------

# torch.cuda calls that are harmless on a host without CUDA: probes, and lazy seeding/cache calls
# that do nothing until CUDA is initialised.
_SAFE_PROBES = ("is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all",
                "seed", "seed_all", "empty_cache")


@check("entry_points")
def check_entry_points(ctx: StaticContext) -> CheckResult:
    eps = sorted(ctx.scan.entry_points, key=lambda e: (e.path, e.line))
    with_transfer = [e for e in eps if e.has_transfer_import]
    without = [e for e in eps if not e.has_transfer_import]
    ep_ev = [
        location(e.path, e.line, f"entry point ({e.kind}) "
                 + ("imports transfer_to_npu" if e.has_transfer_import else "does not import transfer_to_npu"))
        for e in eps
    ]
    if eps and not without:
        return CheckResult("pass", _cap(ep_ev), f"all {len(eps)} entry point(s) import transfer_to_npu")
    # Without transfer_to_npu everywhere, any CUDA-only call left must not be reachable on NPU.
    leftovers = []
    for f in ctx.findings("CU001", "DV001", "DV002", "DV003"):
        if not f.path.endswith(".py"):
            continue  # configuration files: launch-configs
        if f.rule == "CU001" and f.symbol.endswith(_SAFE_PROBES):
            continue
        node = ctx.node_for(f)
        if node is not None and _in_device_check(node):
            continue
        if node is not None and guard_of(node, catches=None, transfer=False):
            continue
        leftovers.append(f)
    if not leftovers:
        if not eps:
            return CheckResult("pass", [], "no entry point found and no CUDA-only call remains")
        style = "device-agnostic: no unguarded CUDA-only call remains"
        if with_transfer:
            style = "some entry points import transfer_to_npu and no unguarded CUDA-only call remains"
        return CheckResult("pass", _cap(ep_ev), style)
    bad = [
        location(e.path, e.line, f"entry point ({e.kind}) does not import torch_npu.contrib.transfer_to_npu")
        for e in without
    ]
    bad += [finding_evidence(f, "relies on transfer_to_npu") for f in leftovers]
    n_files = len({f.path for f in leftovers})
    summary = (
        f"{len(without)} entry point(s) without transfer_to_npu while {len(leftovers)} CUDA-only "
        f"call(s) remain in {n_files} file(s)"
    )
    return CheckResult("fail", _cap(bad), summary)


def _in_device_check(node: ast.AST) -> bool:
    """A 'cuda' string that is compared against (a device check), not used as a device."""
    for anc in ancestors(node):
        if isinstance(anc, ast.Compare):
            return True
        if isinstance(anc, ast.Call) and isinstance(anc.func, ast.Attribute) and anc.func.attr == "startswith":
            return True
        if isinstance(anc, ast.stmt):
            return False
    return False


@check("device_checks")
def check_device_checks(ctx: StaticContext) -> CheckResult:
    """A check that the code pairs with its own npu test (`'cuda' in d or 'npu' in d`, the manual
    fix the change list asks for) is evidence, not a warning: the scan calls it handled too."""
    found = [f for f in ctx.findings("DV004") if f.path.endswith(".py")]
    bad = [finding_evidence(f, "False on NPU: make sure the non-CUDA branch is right for NPU")
           for f in found if not _kept_off_npu(f)]
    good = [finding_evidence(f, "paired with the code's own npu test") for f in found if _kept_off_npu(f)]
    return _result(bad, good, f"{len(good)} device-type check(s), each with an npu test" if good
                   else "no CUDA-only device-type check", "{n} CUDA-only device-type check(s)")


_CATCH = {
    "CU101": {"TypeError"},       # returns None on NPU: indexing/unpacking raises TypeError
    "CU102": {"AttributeError"},  # NPU device properties have no major/minor
    "CU103": {"TypeError"},       # keyword-name mismatch
}


@check("device_capability")
def check_device_capability(ctx: StaticContext) -> CheckResult:
    bad, good = [], []
    for f in ctx.findings("CU101", "CU102", "CU103"):
        node = ctx.node_for(f)
        guard = guard_of(node, catches=_CATCH[f.rule], transfer=ctx.transfer) if node is not None else None
        if guard:
            good.append(finding_evidence(f, f"guarded by {guard}"))
        else:
            need = " or ".join(sorted(_CATCH[f.rule]))
            bad.append(finding_evidence(f, f"unguarded: wrap in try/except {need} or branch on the device type"))
    return _result(bad, good, f"{len(good)} guarded call(s), none unguarded" if good else "no device-capability query",
                   "{n} unguarded device-capability query(ies)")


@check("amp")
def check_amp(ctx: StaticContext) -> CheckResult:
    bad, good = [], []
    for f in ctx.findings("AM001", "AM002", "AM003", "AM004"):
        if f.rule == "AM004":
            bad.append(finding_evidence(f, "a positional fifth argument lands on `dynamic` on NPU"))
        elif ctx.transfer:
            good.append(finding_evidence(f, "mapped to torch.npu.amp by transfer_to_npu"))
        else:
            bad.append(finding_evidence(f, "torch.cuda.amp without transfer_to_npu"))
    return _result(bad, good, "no torch.cuda.amp left unmapped", "{n} AMP use(s) not adapted")


def _kept_off_npu(finding) -> bool:
    """The scanner found this where the code's own npu branch keeps it from running on the NPU
    (the `else` of `device == "npu"`): reported as information, harmless on Ascend."""
    return finding.severity == "info" and finding.message.endswith(OFF_NPU_SUFFIXES)


@check("dataparallel")
def check_dataparallel(ctx: StaticContext) -> CheckResult:
    bad, good = [], []
    for f in ctx.findings("DS003"):
        if _kept_off_npu(f):
            good.append(finding_evidence(f, "only where the code's npu branch does not run"))
        else:
            bad.append(finding_evidence(f, "not supported on NPU"))
    return _result(bad, good, "no nn.DataParallel reachable on NPU", "{n} nn.DataParallel use(s)")


@check("nccl")
def check_nccl(ctx: StaticContext) -> CheckResult:
    bad, good = [], []
    npu_path = _has_npu_backend_path(ctx.project)
    for f in ctx.findings("DS001"):
        if not f.path.endswith(".py"):
            continue  # configuration files: launch-configs
        if _kept_off_npu(f):
            good.append(finding_evidence(f, "only where the code's npu branch does not run"))
            continue
        node = ctx.node_for(f)
        guard = guard_of(node, transfer=ctx.transfer) if node is not None else None
        if guard and npu_path:
            good.append(finding_evidence(f, f"only on CUDA ({guard}); {npu_path}"))
        elif guard and not ctx.transfer:
            bad.append(finding_evidence(f, f"only on CUDA ({guard}), but no hccl path exists for NPU"))
        elif ctx.transfer:
            good.append(finding_evidence(f, "rewritten to hccl by transfer_to_npu"))
        else:
            bad.append(finding_evidence(f, "nccl is not available on NPU"))
    return _result(bad, good, "no nccl backend reachable on NPU", "{n} nccl backend use(s) without an hccl path on NPU")


def _has_npu_backend_path(project: Project) -> str:
    for rel, tree in project.modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "hccl" in node.value.lower():
                return f"hccl named at {rel}:{node.lineno}"
            if isinstance(node, (ast.Attribute, ast.Name)) and dotted(node).endswith(
                    ("get_default_backend_for_device", "Backend.HCCL")):
                return f"backend chosen per device at {rel}:{node.lineno}"
    return ""


_BUILD_GUARD = {"ImportError", "ModuleNotFoundError", "OSError", "RuntimeError", "Exception"}


@check("cuda_sources")
def check_cuda_sources(ctx: StaticContext) -> CheckResult:
    bad, good, pending = [], [], []
    builds = ctx.findings("EX002")
    for f in builds + ctx.findings("EX003"):
        node = ctx.node_for(f)
        guard = guard_of(node, catches=_BUILD_GUARD, any_condition=True) if node is not None else None
        if guard:
            good.append(finding_evidence(f, f"conditional, fallback possible: {guard}"))
        else:
            what = "built unconditionally" if f.rule == "EX002" else "Triton kernel without a fallback"
            bad.append(finding_evidence(f, what))
    sources = ctx.findings("EX001")
    for f in sources:
        if builds:
            good.append(finding_evidence(f, "source of a build listed above"))
        else:
            pending.append(finding_evidence(f, "not built from Python: a person decides (cuda-sources-unbuilt)"))
    if bad:
        return CheckResult("fail", _cap(bad + good + pending), f"{len(bad)} CUDA kernel build(s)/launch(es) without a fallback")
    if pending:
        return CheckResult("pass", _cap(good + pending),
                           f"no CUDA kernel built without a fallback; {len(pending)} source file(s) no Python "
                           "build uses are the manual item cuda-sources-unbuilt")
    return CheckResult("pass", _cap(good), "no CUDA kernel without a fallback" if good else "no CUDA kernels")


@check("cuda_sources_unbuilt")
def check_cuda_sources_unbuilt(ctx: StaticContext) -> CheckResult:
    """Whether the manual question arises: .cu/.cuh sources left that no Python build uses."""
    if ctx.findings("EX002"):
        return CheckResult("skip", [], "not asked: the CUDA sources belong to a build checked by cuda-sources-handled")
    pending = [finding_evidence(f, "not built from Python; confirm it is unused, rewritten, or built only "
                                   "with a fallback") for f in ctx.findings("EX001")]
    if not pending:
        return CheckResult("skip", [], "not asked: no CUDA sources left")
    return CheckResult("manual-pending", _cap(pending),
                       f"{len(pending)} CUDA source file(s) no Python build uses; a person confirms how they are handled")


@check("cuda_packages")
def check_cuda_packages(ctx: StaticContext) -> CheckResult:
    bad, good = [], []
    for f in ctx.findings("PK001", "PK002"):
        if f.rule == "PK002":
            node = ctx.node_for(f)
            guard = guard_of(node, catches={"ImportError", "ModuleNotFoundError"}, any_condition=True) if node else None
            if guard:
                good.append(finding_evidence(f, f"optional import: {guard}"))
                continue
        bad.append(finding_evidence(f))
    return _result(bad, good, "no CUDA-only package required", "{n} CUDA-only package use(s)")


@check("cuda_only_apis")
def check_cuda_only_apis(ctx: StaticContext) -> CheckResult:
    bad, good = [], []
    for f in ctx.findings("CU002", "CU105", "CU106", "CU107", "CU110"):
        if f.rule == "CU110":
            note = ("scripting is a no-op under transfer_to_npu; scripted-module APIs (.save, .code, .graph) break"
                    if ctx.transfer else "not affected without transfer_to_npu")
            good.append(finding_evidence(f, note))
            continue
        node = ctx.node_for(f)
        guard = guard_of(node, catches={"AttributeError", "RuntimeError", "AssertionError"},
                         transfer=ctx.transfer) if node is not None else None
        if guard:
            good.append(finding_evidence(f, f"guarded by {guard}"))
        else:
            bad.append(finding_evidence(f, "no NPU counterpart"))
    return _result(bad, good, "no CUDA-only API reachable on NPU", "{n} CUDA-only API use(s)")


@check("env_vars")
def check_env_vars(ctx: StaticContext) -> CheckResult:
    bad = [finding_evidence(f, "not translated by transfer_to_npu")
           for f in ctx.findings("DV006", "DS002") if f.path.endswith(".py")]
    return _result(bad, [], "no CUDA/NCCL environment variable in code", "{n} CUDA/NCCL environment variable use(s)")


@check("fp64")
def check_fp64(ctx: StaticContext) -> CheckResult:
    bad = [finding_evidence(f, "computed as fp32 on Ascend 910") for f in ctx.findings("PR003")]
    return _result(bad, [], "no float64", "{n} float64 use(s)")


# --- items decided by reading the tree ------------------------------------------------------

_CONFIG_PATTERNS = [
    (re.compile(r"""(?i)(?<![\w-])accelerator["']?\s*[:=]\s*["']?(gpu|cuda)\b"""), "GPU accelerator selected"),
    (re.compile(r"""(?i)--accelerator[=\s]+["']?(gpu|cuda)\b"""), "GPU accelerator selected"),
    (re.compile(r"""(?i)distributed_type["']?\s*[:=]\s*["']?multi_gpu\b"""), "accelerate distributed_type MULTI_GPU (use MULTI_NPU)"),
    (re.compile(r"""(?<![\w-])--gpus\b|(?<![\w-])["']?gpus["']?\s*[:=]\s*["']?\d"""), "GPU count option"),
    (re.compile(r"""(?i)backend["']?\s*[:=]\s*["']?nccl\b"""), "nccl backend"),
    (re.compile(r"""(?i)(--|\b)(dist[_-]?backend|ddp[_-]?backend)[=\s:]+["']?nccl\b"""), "nccl backend"),
    (re.compile(r"""\bCUDA_VISIBLE_DEVICES\b"""), "CUDA_VISIBLE_DEVICES (use ASCEND_RT_VISIBLE_DEVICES)"),
]


@check("launch_configs")
def check_launch_configs(ctx: StaticContext) -> CheckResult:
    bad: list[dict] = []
    seen: set[tuple[str, int]] = set()
    # NV002: container files and docker lines (a Dockerfile FROM a CUDA image, `--gpus all`,
    # nvidia-docker), in scripts and in a README's usage steps alike
    for f in ctx.findings("DS001", "DV006", "DV001", "DS002", "NV002"):
        if f.path.endswith((".py", ".ipynb")):
            continue  # code (a notebook's cells are Python): the code items decide it, not this one
        seen.add((f.path, f.line))
        if f.rule == "DV006" and f.severity == "info":
            continue  # set beside its Ascend twin (an agnostic launcher): the CUDA host keeps its own
        bad.append(finding_evidence(f))
    for rel in ctx.project.config_files:
        text = ctx.project.text(rel)
        if not text:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            if (rel, lineno) in seen or line.lstrip().startswith(("#", "//")):
                continue
            for pattern, what in _CONFIG_PATTERNS:
                if pattern.search(line):
                    seen.add((rel, lineno))
                    bad.append(location(rel, lineno, what, text=line.strip()[:160]))
                    break
    bad.sort(key=lambda e: (e["path"], e["line"]))
    n = len(ctx.project.config_files)
    return _result(bad, [], f"{n} configuration file(s) name no GPU-only setting",
                   "{n} GPU-only setting(s) in launch configurations")


def _is_dataloader(node: ast.Call) -> bool:
    return call_name(node).rsplit(".", 1)[-1] == "DataLoader"


def _arg(node: ast.Call, name: str, position: int) -> tuple[bool, Optional[ast.AST]]:
    """(known, value): known is False when **kwargs may set it and the dict cannot be followed.

    A `**loader_args` whose dict is built in the same function or module (`dict(...)`, a `{...}`
    literal, later `.update(...)` calls and `args["key"] = ...` items) is read like keywords."""
    for kw in node.keywords:
        if kw.arg == name:
            return True, kw.value
    if len(node.args) > position and not any(isinstance(a, ast.Starred) for a in node.args[: position + 1]):
        return True, node.args[position]
    if any(isinstance(a, ast.Starred) for a in node.args):
        return False, None
    complete = True
    for kw in node.keywords:
        if kw.arg is not None:
            continue
        entries = _dict_entries(kw.value, node)
        if entries is None:
            complete = False
            continue
        items, whole = entries
        if name in items:
            return True, items[name]
        complete = complete and whole
    return (True, None) if complete else (False, None)


_MAX_FOLLOW = 4  # names followed to their value, dicts into the dicts they spread


def _scope_of(node: ast.AST) -> Optional[ast.AST]:
    for anc in ancestors(node):
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)):
            return anc
    return None


def _binding(name: str, at: ast.AST) -> Optional[tuple[ast.AST, ast.AST]]:
    """(value, scope) of the one plain assignment `name = value` that binds `name` where `at`
    reads it: in the enclosing function, else (the function binds it nowhere) in the module.
    None when it is a parameter, is bound more than once, or in any other way."""
    scope = _scope_of(at)
    while scope is not None:
        stores: list[ast.AST] = []
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            params = scope.args
            if any(a.arg == name for a in (*params.posonlyargs, *params.args, *params.kwonlyargs,
                                          *(x for x in (params.vararg, params.kwarg) if x is not None))):
                return None
        for n in _own_nodes(scope):
            if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
                stores.append(n)
            elif isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
                return None
        if stores:
            if len(stores) != 1:
                return None
            holder = parent(stores[0])
            if isinstance(holder, ast.Assign) and holder.targets == [stores[0]]:
                return holder.value, scope
            return None
        if isinstance(scope, ast.Module):
            return None
        scope = _scope_of(scope)
    return None


def _value(node: Optional[ast.AST], depth: int = 0) -> Optional[ast.AST]:
    """`node`, or for a local name bound once, the value it was bound to (`workers = 4`)."""
    while isinstance(node, ast.Name) and depth < _MAX_FOLLOW:
        bound = _binding(node.id, node)
        if bound is None:
            return node
        node, depth = bound[0], depth + 1
    return node


def _dict_entries(expr: ast.AST, at: ast.AST, depth: int = 0) -> Optional[tuple[dict[str, ast.AST], bool]]:
    """(key -> value, complete) of a dict expression `**` spreads into a call at `at`: a `{...}`
    literal, `dict(...)`, a name bound once to either (with the `.update(...)` calls and
    `name["key"] = value` items of its scope merged in, wherever they sit), or `{...} if c else {}`.
    `complete` is False when some keys cannot be known. None: not a dict this can follow."""
    if depth > _MAX_FOLLOW:
        return None
    entries: dict[str, ast.AST] = {}
    complete = True

    def spread(value: ast.AST) -> None:
        nonlocal complete
        inner = _dict_entries(value, at, depth + 1)
        if inner is None:
            complete = False
        else:
            entries.update(inner[0])
            complete = complete and inner[1]

    def merge_arguments(call: ast.Call) -> None:
        """`dict(a, k=v, **b)` and `name.update(a, k=v, **b)` add their arguments alike."""
        for arg in call.args:
            spread(arg)
        for kw in call.keywords:
            if kw.arg is None:
                spread(kw.value)
            else:
                entries[kw.arg] = kw.value

    if isinstance(expr, ast.Dict):
        for key, value in zip(expr.keys, expr.values):
            if key is None:
                spread(value)
            elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                entries[key.value] = value
            else:
                complete = False
        return entries, complete
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "dict":
        if len(expr.args) > 1 or any(isinstance(a, ast.Starred) for a in expr.args):
            return None
        merge_arguments(expr)
        return entries, complete
    if isinstance(expr, ast.IfExp):
        sides = [_dict_entries(side, at, depth + 1) for side in (expr.body, expr.orelse)]
        if any(side is None for side in sides):
            return None
        empty = [side for side in sides if side is not None and not side[0] and side[1]]
        if empty and len(empty) < 2:  # `{...} if use_cuda else {}`: the settings that may apply
            return next(side for side in sides if side is not None and (side[0] or not side[1]))
        return None if not empty else ({}, True)
    if isinstance(expr, ast.Name):
        bound = _binding(expr.id, expr)
        if bound is None:
            return None
        value, scope = bound
        base = _dict_entries(value, at, depth + 1)
        if base is None:
            return None
        entries, complete = dict(base[0]), base[1]
        for n in _own_nodes(scope):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "update"
                    and isinstance(n.func.value, ast.Name) and n.func.value.id == expr.id):
                merge_arguments(n)
            elif (isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)
                  and isinstance(n.value, ast.Name) and n.value.id == expr.id):
                key = n.slice
                holder = parent(n)
                if (isinstance(key, ast.Constant) and isinstance(key.value, str)
                        and isinstance(holder, ast.Assign) and len(holder.targets) == 1):
                    entries[key.value] = holder.value
                else:
                    complete = False
        return entries, complete
    return None


def _literal(node: Optional[ast.AST]) -> Any:
    node = _value(node)
    if isinstance(node, ast.Constant):
        return node.value
    return None


# Calls whose value is the host's CPU count: a worker count built from one grows with the host.
_CPU_COUNTS = {"os.cpu_count", "cpu_count", "multiprocessing.cpu_count", "mp.cpu_count",
               "psutil.cpu_count", "torch.multiprocessing.cpu_count"}


def _grows_with_cores(node: Optional[ast.AST], depth: int = 0) -> bool:
    """Does the value scale with the host's CPU count (`os.cpu_count()`, `cpu_count() // 2`,
    `max(1, os.cpu_count() - 1)`)? `min(8, os.cpu_count())` is bounded by its other argument."""
    if node is None or depth > _MAX_FOLLOW:
        return False
    if isinstance(node, ast.Name):
        value = _value(node)
        return value is not node and _grows_with_cores(value, depth + 1)
    if isinstance(node, ast.Call):
        name = call_name(node)
        if name in _CPU_COUNTS:
            return True
        if name == "len" and len(node.args) == 1 and isinstance(node.args[0], ast.Call) \
                and call_name(node.args[0]).endswith("sched_getaffinity"):
            return True
        if name in ("int", "round", "math.floor", "math.ceil", "floor", "ceil") and len(node.args) == 1:
            return _grows_with_cores(node.args[0], depth + 1)
        if name == "min":
            return bool(node.args) and all(_grows_with_cores(a, depth + 1) for a in node.args)
        if name == "max":
            return any(_grows_with_cores(a, depth + 1) for a in node.args)
        return False
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, (ast.Add, ast.Mult)):
            return _grows_with_cores(node.left, depth + 1) or _grows_with_cores(node.right, depth + 1)
        if isinstance(node.op, (ast.Sub, ast.FloorDiv, ast.Div, ast.RShift)):
            return _grows_with_cores(node.left, depth + 1)
        return False
    if isinstance(node, ast.BoolOp):
        return any(_grows_with_cores(v, depth + 1) for v in node.values)
    return False


def _dataloaders(ctx: StaticContext) -> Iterable[tuple[str, ast.Call]]:
    for rel, tree in ctx.project.modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _is_dataloader(node):
                yield rel, node


def _shown(node: ast.Call, name: str, value: ast.AST) -> str:
    """`value` as the evidence shows it: with the dict it came through when not a keyword."""
    text = ast.unparse(value)
    if any(kw.arg == name for kw in node.keywords):
        return text
    spreads = [ast.unparse(kw.value) for kw in node.keywords if kw.arg is None]
    return f"{text} (through **{spreads[0]})" if spreads else text


@check("dataloader_workers")
def check_dataloader_workers(ctx: StaticContext) -> CheckResult:
    limit = ctx.thresholds.dataloader_max_literal_workers
    bad, good = [], []
    for rel, node in _dataloaders(ctx):
        known, value = _arg(node, "num_workers", 5)
        lit = _literal(value)
        if isinstance(lit, int) and not isinstance(lit, bool) and lit > limit:
            bad.append(location(rel, node.lineno, f"DataLoader hard-codes num_workers={lit} (limit {limit})"))
        elif value is not None and _grows_with_cores(value):
            bad.append(location(rel, node.lineno, f"DataLoader num_workers={_shown(node, 'num_workers', value)} "
                                f"starts one worker per CPU core or so: on an Ascend server (often 192 cores) "
                                f"far above the limit of {limit}"))
        else:
            shown = "default (0)" if known and value is None else (_shown(node, "num_workers", value) if value is not None
                                                                  else "set via **kwargs")
            good.append(location(rel, node.lineno, f"DataLoader num_workers: {shown}"))
    return _result(bad, good, f"{len(good)} DataLoader(s), worker counts within limits" if good else "no DataLoader",
                   "{n} DataLoader(s) hard-code too many workers")


@check("pin_memory")
def check_pin_memory(ctx: StaticContext) -> CheckResult:
    bad, good = [], []
    for f in ctx.findings("DV005"):
        bad.append(finding_evidence(f, "pins memory for the CUDA device"))
    for rel, node in _dataloaders(ctx):
        known_pin, pin = _arg(node, "pin_memory", 7)
        if _literal(pin) is not True:
            continue
        known_w, workers = _arg(node, "num_workers", 5)
        if not known_w:
            continue
        where = "" if any(kw.arg == "pin_memory" for kw in node.keywords) else \
            next((f" (through **{ast.unparse(kw.value)})" for kw in node.keywords if kw.arg is None), "")
        if workers is None or _literal(workers) == 0:
            bad.append(location(rel, node.lineno, f"DataLoader pin_memory=True{where} without worker processes"))
        else:
            good.append(location(rel, node.lineno, f"pin_memory=True with num_workers={_shown(node, 'num_workers', workers)}"))
    return _result(bad, good, "pin_memory is used with workers" if good else "no pinned DataLoader",
                   "{n} pin_memory problem(s)")


_CLOCKS = {"time.time", "time.perf_counter", "time.monotonic", "perf_counter", "monotonic",
           "time.perf_counter_ns", "time.time_ns", "perf_counter_ns"}


def _scopes(tree: ast.Module) -> Iterable[ast.AST]:
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _own_nodes(scope: ast.AST) -> Iterable[ast.AST]:
    """Nodes of a scope, not descending into nested functions or classes."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _imports_torch(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            return True
    return False


@check("sync_timing")
def check_sync_timing(ctx: StaticContext) -> CheckResult:
    bad, good = [], []
    for rel, tree in ctx.project.modules():
        if not _imports_torch(tree):
            continue
        for scope in _scopes(tree):
            own = list(_own_nodes(scope))
            calls = [n for n in own if isinstance(n, ast.Call)]
            clocks = sorted((n for n in calls if call_name(n) in _CLOCKS), key=lambda n: n.lineno)
            if len(clocks) < 2 or not _measures_interval(own, clocks):
                continue  # stamps that only label log lines time nothing
            name = getattr(scope, "name", "<module>")
            if any(isinstance(n.func, ast.Attribute) and n.func.attr == "synchronize" for n in calls):
                good.append(location(rel, clocks[0].lineno, f"{name}: timed with synchronize()"))
            else:
                bad.append(location(rel, clocks[0].lineno,
                                    f"{name}: reads the clock {len(clocks)} times without synchronize()"))
    return _result(bad, good, "timings synchronize the device" if good else "no timing code",
                   "{n} timing(s) without device synchronization")


def _measures_interval(nodes: list[ast.AST], clocks: list[ast.Call]) -> bool:
    """Does the scope subtract clock readings (`time.time() - start`, `end - start` where either
    name, or attribute, was bound to a clock reading)? Only an interval is a timing."""
    clock_ids = {id(c) for c in clocks}
    bound: set[str] = set()
    for n in nodes:
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None and id(n.value) in clock_ids:
            for target in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                if isinstance(target, (ast.Name, ast.Attribute)):
                    bound.add(ast.dump(target, annotate_fields=False).replace("Store()", "Load()"))

    def reading(e: ast.AST) -> bool:
        return id(e) in clock_ids or ast.dump(e, annotate_fields=False) in bound

    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub) and (reading(n.left) or reading(n.right))
               for n in nodes)


def _method_calls(tree: ast.AST, attr: str) -> list[ast.Call]:
    return [n for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == attr]


@check("train_eval")
def check_train_eval(ctx: StaticContext) -> CheckResult:
    bad, good = [], []
    for rel, tree in ctx.project.modules():
        evals = [c for c in _method_calls(tree, "eval") if not c.args and not c.keywords]
        trains = _method_calls(tree, "backward")
        if not evals or not trains:
            continue
        if _method_calls(tree, "train"):
            good.append(location(rel, evals[0].lineno, "calls eval() and train()"))
        else:
            bad.append(location(rel, evals[0].lineno,
                                "calls eval() and trains (backward) but never calls train()"))
    return _result(bad, good, "models return to train mode" if good else "no train/eval switching",
                   "{n} file(s) may train in eval mode")


_SCHEDULERS = {
    "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
    "OneCycleLR", "CyclicLR", "LambdaLR", "MultiplicativeLR", "LinearLR", "ConstantLR",
    "SequentialLR", "ChainedScheduler", "PolynomialLR", "ReduceLROnPlateau",
}


def _stateful_names(tree: ast.Module) -> dict[str, str]:
    """Expressions (as source) bound to a GradScaler or an LR scheduler -> 'GradScaler'/'scheduler'."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            name = call_name(node.value)
            last = name.rsplit(".", 1)[-1]
            kind = None
            if last.endswith("GradScaler"):
                kind = "GradScaler"
            elif last in _SCHEDULERS or ".lr_scheduler." in f".{name}.":
                kind = "LR scheduler"
            if kind:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    out[ast.unparse(t)] = kind
    return out


def _dict_bindings(tree: ast.Module) -> dict[str, ast.Dict]:
    out: dict[str, ast.Dict] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            for t in node.targets:
                out[ast.unparse(t)] = node.value
    return out


@check("checkpoint_state")
def check_checkpoint_state(ctx: StaticContext) -> CheckResult:
    bad, good = [], []
    for rel, tree in ctx.project.modules():
        stateful = _stateful_names(tree)
        if not stateful:
            continue
        dicts = _dict_bindings(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and call_name(node).rsplit(".", 1)[-1] == "save" and node.args):
                continue
            if not call_name(node).startswith(("torch.", "save")):
                continue
            saved = node.args[0]
            if isinstance(saved, ast.Name) and saved.id in dicts:
                saved = dicts[saved.id]
            if not isinstance(saved, ast.Dict):
                continue
            owners = {dotted(c.func.value) for c in _method_calls(saved, "state_dict")}
            missing = [f"{kind} `{expr}`" for expr, kind in sorted(stateful.items()) if expr not in owners]
            if missing:
                bad.append(location(rel, node.lineno, "checkpoint saves no state of " + ", ".join(missing)))
            else:
                good.append(location(rel, node.lineno, "checkpoint includes GradScaler/scheduler state"))
    return _result(bad, good, "checkpoints carry scaler/scheduler state" if good else "no checkpoint with a scaler or scheduler",
                   "{n} checkpoint(s) miss scaler/scheduler state")


def _source_roots(project: Project) -> list[str]:
    roots = [""]
    if "src" in project.dirs:
        roots.append("src")
    return roots


@check("init_files")
def check_init_files(ctx: StaticContext) -> CheckResult:
    project = ctx.project
    py = set(project.python_files)
    roots = _source_roots(project)
    missing: dict[str, dict] = {}
    importers: dict[str, list[str]] = {}  # every file that imports the directory, not only the first
    packages_ok: set[str] = set()

    def need(dir_rel: str, rel: str, line: int, why: str) -> None:
        init = f"{dir_rel}/__init__.py" if dir_rel else "__init__.py"
        if init in py:
            packages_ok.add(dir_rel)
            return
        if dir_rel not in missing:
            missing[dir_rel] = location(rel, line, f"{dir_rel or '.'}/ has no __init__.py ({why})",
                                        directory=dir_rel or ".")
        importers.setdefault(dir_rel, []).append(f"{rel}:{line}")

    for rel, tree in project.modules():
        here = rel.rsplit("/", 1)[0] if "/" in rel else ""
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    d = here
                    for _ in range(node.level):
                        need(d, rel, node.lineno, f"relative import in {rel}")
                        if not d:
                            break
                        d = d.rsplit("/", 1)[0] if "/" in d else ""
                    continue
                if node.module:
                    names = [f"{node.module}.{a.name}" for a in node.names if a.name != "*"] or [node.module]
            for name in names:
                parts = name.split(".")
                for src_root in roots:
                    prefix = src_root
                    if not parts or (f"{prefix}/{parts[0]}" if prefix else parts[0]) not in project.dirs:
                        continue
                    for part in parts:
                        d = f"{prefix}/{part}" if prefix else part
                        if d not in project.dirs or f"{d}.py" in py:
                            break
                        need(d, rel, node.lineno, f"imported as a package: {name}")
                        prefix = d
    for d, where in importers.items():
        seen = list(dict.fromkeys(where))
        if len(seen) > 1:
            shown = ", ".join(seen[:6]) + (f" and {len(seen) - 6} more" if len(seen) > 6 else "")
            missing[d]["message"] += f"; imported at {shown}"
    bad = sorted(missing.values(), key=lambda e: e["directory"])
    good = [{"message": f"{d or '.'}/ is a package"} for d in sorted(packages_ok)]
    return _result(bad, good, f"{len(packages_ok)} imported package(s), all with __init__.py",
                   "{n} imported director(ies) without __init__.py")
