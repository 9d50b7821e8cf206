"""Findings and fixes: how a family reports, and the pieces of replacement text the styles share."""
from __future__ import annotations

import ast
from heapq import heappush, heappushpop
from typing import Iterable, Optional

from ascend_migrate.knowledge.base import Rule, format_message
from ascend_migrate.scan.bounds import MAX_FINDINGS_PER_RULE
from ascend_migrate.scan.finding import Edit, Finding, Fix, Position
from ascend_migrate.scan.suppress import SUPPRESS

DEVICE_TYPE = "_device_type"  # the name the agnostic style binds to the run-time device type
ACCEL_TYPE = "_accel_type"  # the host's accelerator type, None without one (agnostic style)
# What the original's "cuda" means on this host: the accelerator; without one still "cuda", so a
# CUDA-only path (AMP, a device test, a torch.cuda call) stays off or fails as it did before.
CUDA_OR_ACCEL = f'{ACCEL_TYPE} or "cuda"'
# `case "cuda":` patterns exist from Python 3.10; older parsers never produce them.
MATCH_VALUE: tuple = tuple(getattr(ast, name) for name in ("MatchValue",) if hasattr(ast, name))

MATCH_PATTERN_NOTE = (" (in a match pattern, which cannot name a run-time value: not rewritten; "
                      "test `_accel_type or \"cuda\"` in an if/elif instead)")  # message suffix; such findings get no fix
# Message suffix of a finding that a branch for npu makes harmless; such findings get no fix.
# What is broken on NPU whatever branch it sits in (Rule.npu_branch_effect == "keep") never gets it.
NPU_HANDLED = (" (already handled: this code branches for npu; further CUDA uses in the branch that"
               " it makes harmless are not listed)")
# The same for an arm a device-agnostic port keeps for CUDA only (`if device == "cuda":` where the
# device is the run-time type, "npu" on an NPU host): it never runs there.
CUDA_ONLY_KEPT = (" (kept for CUDA only: this device-agnostic port never takes this branch on an NPU host;"
                  " further CUDA uses in it are not listed)")
# Every suffix that marks a finding as harmless on the NPU (validate and migrate read them).
OFF_NPU_SUFFIXES = (NPU_HANDLED, CUDA_ONLY_KEPT)


class Reporting:
    """Mixin of the analyser: `report` a finding with its fixes; the edits' building blocks.

    Needs `path`, `cell`, `findings`, `_source_text`, `_stack`, the npu-branch state of `Context`
    and the positions of `SourceText`."""

    # ----------------------------------------------------------------- reporting
    def report(self, rule: Rule, node: ast.AST, symbol: str, fixes: Iterable[Fix] = (),
               confidence: Optional[str] = None, severity: Optional[str] = None,
               start: Optional[Position] = None, end: Optional[Position] = None, suffix: str = "",
               **values: str) -> None:
        start = start or self.start(node)
        end = end or self.end(node)
        message = format_message(rule, symbol=symbol, **values) + suffix
        sev = severity or rule.severity
        fixes = tuple(fixes)
        if self._npu_table_depth:
            return  # {"cuda": torch.cuda.current_device, "npu": torch.npu.current_device}: ready as it is
        if self._bnb_test_depth and rule.match.get("quiet_in_bitsandbytes_tests"):
            return  # a test of the bitsandbytes integration: skipped where bitsandbytes is absent
        if self._npu_depth and (rule.npu_branch_effect == "info" or self._off_npu_depth):
            # Reported once per branch, as information: the code already has its npu path.
            # What no branch makes harmless is reported as anywhere else, and does not use up
            # the branch's one finding.
            branch = id(self._npu_nodes[0]) if self._npu_nodes else 0
            if branch in self._npu_reported:
                return
            self._npu_reported.add(branch)
            sev = "info"
            message += CUDA_ONLY_KEPT if branch in self._cuda_only_nodes else NPU_HANDLED
            fixes = ()
        if fixes and self._in_match_pattern():
            # A `case` pattern matches literal values; it cannot name a run-time value such as
            # the accelerator type, so nothing inside a pattern is ever rewritten.
            fixes = ()
            if MATCH_PATTERN_NOTE not in message:
                message += MATCH_PATTERN_NOTE
        if self.cell is not None:
            message = f"cell {self.cell}: {message}"
        self.findings.append(Finding(
            rule=rule.id, path=self.path, line=start.line, col=start.col,
            end_line=end.line, end_col=end.col, message=message, severity=sev,
            confidence=confidence or rule.confidence, snippet=self._snippet(start.line),
            symbol=symbol, fixes=fixes,
        ))
        if self.cell is None and not self._suppressed(start.line, rule.id):
            heap = self._kept_positions.setdefault(rule.id, [])
            if len(heap) < MAX_FINDINGS_PER_RULE:
                heappush(heap, (-start.line, -start.col))
            else:
                heappushpop(heap, (-start.line, -start.col))

    def _room(self, rule: Rule, at: Position) -> bool:
        """Can a finding of `rule` at `at` still be one the file keeps? `engine.cap_findings`
        keeps the first MAX_FINDINGS_PER_RULE of a rule by position; a finding placed after the
        last of the first that many seen so far never is, so its fixes are not built (a
        generated line of 50,000 CUDA calls builds 500 sets of fixes, not 50,000). Notebook
        cells, whose findings are placed later, always have room."""
        heap = self._kept_positions.get(rule.id)
        if self.cell is not None or heap is None or len(heap) < MAX_FINDINGS_PER_RULE:
            return True
        return (at.line, at.col) <= (-heap[0][0], -heap[0][1])

    def _suppressed(self, line: int, rule_id: str) -> bool:
        """Is a finding of `rule_id` on `line` dropped by an ignore comment (`scan.suppress.SUPPRESS`)?"""
        if self._suppressions is None:
            self._suppressions = {}
            if "ascend-migrate" in self._source_text:
                for number, text in enumerate(self._source_text.splitlines(), 1):  # numbered as the engine does
                    m = SUPPRESS.search(text) if "ascend-migrate" in text else None
                    if m:
                        self._suppressions[number] = (None if m.group(1) is None else
                                                      {r.strip().upper() for r in m.group(1).split(",")})
        if line not in self._suppressions:
            return False
        rules = self._suppressions[line]
        return rules is None or rule_id in rules

    def _in_match_pattern(self) -> bool:
        """Is the node being visited part of a `case` pattern (not its guard or body)?"""
        if not MATCH_VALUE:  # Python < 3.10 has no match statements
            return False
        for node in reversed(self._stack):
            if isinstance(node, ast.pattern):
                return True
            if isinstance(node, (ast.match_case, ast.stmt)):
                return False
        return False

    def _fix(self, style: str, rule: Rule, edits: Iterable[Edit], description: str,
             requires: Iterable[str] = ()) -> Fix:
        return Fix(style=style, edits=tuple(edits), safety=rule.fix_kind(style), description=description,
                   requires=tuple(requires))

    def _replace(self, node: ast.AST, text: str) -> Edit:
        return Edit(self.start(node), self.end(node), text)

    def _cuda_or_accel(self) -> str:
        """`_accel_type or "cuda"`, quoted so that it also fits inside an f-string being visited
        (before Python 3.12 a replacement field cannot reuse the f-string's quote)."""
        for node in reversed(self._stack):
            if isinstance(node, ast.JoinedStr):
                text = self.seg(node).lstrip("rRbBfFuU")
                if text[:1] == '"':
                    return CUDA_OR_ACCEL.replace('"', "'")
                break
        return CUDA_OR_ACCEL

    def _torch_prefixed(self, qual: str) -> str:
        name = self.torch_name() or "torch"
        return name + qual[len("torch"):] if qual.startswith("torch") else qual

    def _guarded(self, call: ast.Call, func: ast.AST, replacement: str, idle: str) -> list[Edit]:
        """`f(args)` -> `new(args) if _accel_type else IDLE`, as separate edits so that fixes inside
        the arguments still apply; parenthesised unless the call is a statement of its own."""
        parent = self.parent(call)
        bare = isinstance(parent, (ast.Expr, ast.Assign, ast.Return)) and parent.value is call
        start, end = self.start(call), self.end(call)
        edits = [self._replace(func, replacement), Edit(end, end, f" if {ACCEL_TYPE} else {idle}" + ("" if bare else ")"))]
        if not bare:
            edits.insert(0, Edit(start, start, "("))
        return edits


def _first_arg_start(call: ast.Call, an: "Reporting") -> Optional[Position]:
    nodes = [*call.args, *call.keywords]
    if not nodes:
        return None
    first = min(nodes, key=lambda n: (n.lineno, n.col_offset))
    return an.start(first)


def _call_close(an: "Reporting", call: ast.Call) -> Position:
    end = an.end(call)
    return Position(end.line, end.col - 1)


def _remove_argument(an: "Reporting", call: ast.Call, kw: ast.keyword) -> Optional[Edit]:
    nodes = sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))
    idx = next(i for i, n in enumerate(nodes) if n is kw)
    if idx > 0:
        return Edit(an.end(nodes[idx - 1]), an.end(kw), "")
    if len(nodes) > 1:
        return Edit(an.start(kw), an.start(nodes[1]), "")
    return Edit(an.start(kw), an.end(kw), "")
