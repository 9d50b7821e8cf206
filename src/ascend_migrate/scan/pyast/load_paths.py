"""Paths handed to `torch.load` and `from_file` (DV008): transfer_to_npu's wrapper replaces
"cuda" with "npu" in every positional str argument, so a file name that contains it names
another file in the port; a `pathlib.Path` is left alone."""
from __future__ import annotations

import ast
import re
from typing import Optional

from ascend_migrate.knowledge.base import Rule
from ascend_migrate.scan.finding import Edit
from ascend_migrate.scan.pyast.registry import on

DEVICE_STRING = re.compile(r"cuda(?::\d+)?")  # a whole device string, not a path that contains one


class LoadPaths:
    """Mixin of the analyser: the load-path family."""

    @on("call", 55)
    def _call_path_argument(self, node: ast.Call, func: ast.AST, qual: Optional[str]) -> None:
        if qual is None:
            return
        for rule in self.kb.rules_of_kind("path-argument"):
            if qual in rule.match["names"]:
                self._check_path_argument(rule, node, qual)

    def _check_path_argument(self, rule: Rule, node: ast.Call, qual: str) -> None:
        """`torch.load("ckpt/cuda_run.pt")`: transfer_to_npu's wrapper of torch.load (and
        from_file) replaces "cuda" with "npu" in every positional str argument, the file name
        included, so the port opens another file. A pathlib.Path is not a str: the wrapper leaves
        it alone and torch opens the same file. Device strings (`map_location` given as "cuda:0")
        are what the wrapper is for, and are left as they are."""
        for arg in node.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                text = arg.value
            elif isinstance(arg, ast.JoinedStr):
                text = "".join(v.value for v in arg.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
            else:
                continue
            if "cuda" not in text or DEVICE_STRING.fullmatch(text):
                continue
            if self.lookup("pathlib") == "pathlib":
                path, requires = "pathlib.Path", ()
            else:
                bound = next((name for scope in reversed(self.scopes) for name, q in scope.names.items()
                              if q == "pathlib.Path" and self.lookup(name) == "pathlib.Path"), None)
                path, requires = (bound, ()) if bound else ("pathlib.Path", ("pathlib",))
            fix = self._fix("transfer", rule, [Edit(self.start(arg), self.start(arg), f"{path}("),
                                               Edit(self.end(arg), self.end(arg), ")")],
                            "pass the path as a pathlib.Path, which transfer_to_npu leaves as it is",
                            requires=requires)
            self._claim_device_names(arg)
            self.report(rule, arg, qual, fixes=[fix])
