"""CUDA switches the NPU ignores (the qualname rules with `ports`, PR006):
`torch.backends.cudnn.deterministic = True` gets, after it, the statement that carries its
intent on an NPU, run only on an NPU so that CUDA and CPU hosts do what the original did."""
from __future__ import annotations

import ast
from typing import Optional

from ascend_migrate.knowledge.base import Rule
from ascend_migrate.scan.finding import Edit, Fix, Position
from ascend_migrate.scan.pyast.reporting import ACCEL_TYPE


class Switches:
    """Mixin of the analyser: the switch family (reported through `Names`, whose qualname rule
    names the switch)."""

    def _switch_port_fixes(self, rule: Rule, node: ast.AST, port: dict) -> Optional[list[Fix]]:
        """A CUDA switch that the NPU ignores, set on a line of its own
        (`torch.backends.cudnn.deterministic = True`): insert after it, in each style, the
        statement that carries its intent on an NPU, run only on an NPU so that CUDA and CPU
        hosts do what the original did. The switch is read back rather than its value repeated
        (the value may be a call). [] when the assignment has another shape (a manual item);
        None when the inserted statement already follows (a ported file: nothing to report)."""
        stmt = self.parent(node)
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is node
                and isinstance(node, ast.Attribute)):
            return []
        torch = self.torch_name() or "torch"
        value = self.seg(node)
        when = port.get("when", "").format(value=value, torch=torch)
        then = port["then"].format(value=value, torch=torch)
        tests = {"transfer": f'hasattr({torch}, "npu")', "agnostic": f'{ACCEL_TYPE} == "npu"'}
        blocks = {style: (f"if {test} and {when}:" if when else f"if {test}:", then) for style, test in tests.items()}
        following = self._next_statement(stmt)
        if following is not None:
            seen = ast.dump(following)
            if any(seen == ast.dump(ast.parse(f"{head}\n    {body}").body[0]) for head, body in blocks.values()):
                return None
        start, end = self.start(stmt), self.end(stmt)
        lines = self.lines
        if end.line > len(lines) or start.line > len(lines):
            return []
        first, last = lines[start.line - 1], lines[end.line - 1]
        indent = first[:start.col]
        rest = last[end.col:].rstrip("\r\n")
        if indent.strip() or (rest.strip() and not rest.lstrip().startswith("#")) or self.cell is not None:
            return []  # shares its line with other code (`if x: a = 1`, `a = 1; b = 2`)
        newline = "\r\n" if last.endswith("\r\n") else "\n"
        step = "\t" if "\t" in indent else "    "
        at = Position(end.line, len(last.rstrip("\r\n")))
        fixes = []
        for style, (head, body) in blocks.items():
            text = f"{newline}{indent}{head}{newline}{indent}{step}{body}"
            requires = ("torch", "device_type") if style == "agnostic" else ("torch",)
            fixes.append(self._fix(style, rule, [Edit(at, at, text)], port["says"], requires=requires))
        return fixes

    def _next_statement(self, stmt: ast.stmt) -> Optional[ast.stmt]:
        """The statement right after `stmt` in its block, if any."""
        block = self.parent(stmt)
        for name in ("body", "orelse", "finalbody"):
            seq = getattr(block, name, None)
            if isinstance(seq, list):
                for i, s in enumerate(seq):
                    if s is stmt:
                        return seq[i + 1] if i + 1 < len(seq) else None
        return None
