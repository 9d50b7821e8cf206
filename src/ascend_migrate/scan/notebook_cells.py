"""The code cells of a Jupyter notebook, with IPython magics masked so that a cell parses as Python."""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass


# Cell magics whose body is Python run in the notebook's namespace; any other `%%` magic
# (%%writefile, %%bash, %%html, ...) makes the cell something else.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})


@dataclass(frozen=True)
class Cell:
    number: int  # 1-based position among all cells
    source: str  # the cell text as stored
    masked: str  # magics blanked line for line, for ast.parse
    in_kernel: bool  # its code runs in the notebook's namespace (not %%writefile, %%bash, ...)
    raw: object = None  # the stored `source` value (a list of lines or a string)


def cell_lines(text: str) -> list[str]:
    """Lines as Jupyter stores them: split after each newline only (not at \u2028, \x0c, ...)."""
    return [part for part in re.split(r"(?<=\n)", text) if part]


def _inside_statement(text: str) -> bool:
    """Does `text` end inside an open bracket, string or backslash continuation?"""
    try:
        for _ in tokenize.generate_tokens(io.StringIO(text).readline):
            pass
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return True
    return False


def mask_magics(source: str) -> str:
    """Blank IPython magic and shell lines (`%time`, `!pip`, `%%capture`) that start a logical line
    (an indented one becomes `pass`), keeping line endings, so every other line and every line number stays as stored; a magic or
    shell line ending with a backslash takes the following lines with it. A `%` that
    continues an expression (`n\n    %2`) is the modulo operator and stays."""
    out: list[str] = []
    continued = False  # the previous magic or shell line ended with a backslash
    for line in cell_lines(source):
        body = line.rstrip("\r\n")
        if continued:
            out.append(line[len(body):])
        elif line.lstrip().startswith(("%", "!")) and not (out and _inside_statement("".join(out))):
            indent = body[: len(body) - len(body.lstrip())]
            # an indented magic may be a block's whole body (`if x:\n    %pip install y`): `pass`
            # keeps the block valid; at the top level the line is blanked
            out.append((indent + "pass" if indent else "") + line[len(body):])
        else:
            out.append(line)
            continue
        continued = body.endswith("\\")  # `!pip install a \` goes on to the next line
    return "".join(out)


def cell_magic(source: str) -> str:
    """The name of the cell magic on the first line (`writefile` for `%%writefile x.py`), or ''."""
    first = source.lstrip().split("\n", 1)[0].strip()
    return first[2:].split(None, 1)[0] if first.startswith("%%") and len(first) > 2 else ""


def notebook_code_cells(text: str) -> list[Cell]:
    """Every code cell of a notebook, in order."""
    import json

    data = json.loads(text)
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise ValueError("not a notebook: no 'cells' list")
    out = []
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        raw = cell.get("source", "")
        source = "".join(str(s) for s in raw) if isinstance(raw, list) else str(raw)
        magic = cell_magic(source)
        out.append(Cell(number, source, mask_magics(source), not magic or magic in PYTHON_CELL_MAGICS, raw))
    return out


def notebook_cells(text: str) -> list[tuple[int, str]]:
    """(cell number, source with magics blanked) of each code cell."""
    return [(c.number, c.masked) for c in notebook_code_cells(text)]
