"""`x.startswith("cuda")` is a device test only when x is the running device. Whether a string
holds stored data is not decidable in general; the fix says so when the receiver is not evidently
a device, and a map_location's saved location is never rewritten."""
from pathlib import Path

from ascend_migrate.fix.rewrite import Options, rewrite_python
from ascend_migrate.knowledge.base import load_knowledge

SOURCE = (Path(__file__).parent / "golden" / "agnostic" / "startswith_cuda_on_stored_strings.in.py").read_text()
LINES = SOURCE.splitlines()


def _line_of(fragment):
    return next(i for i, line in enumerate(LINES, 1) if fragment in line)


def test_descriptions_flag_receivers_that_are_not_evidently_devices():
    for style in ("agnostic", "transfer"):
        result = rewrite_python(load_knowledge(), "s.py", SOURCE, Options(style=style, inject=False))
        described = {c.start_line: c.message for c in result.changes if c.rule == "DV004"}
        for fragment in ("opts.device.startswith", "str(device).startswith", "batch.device.type.startswith"):
            assert "not evidently the running device" not in described[_line_of(fragment)]
        for fragment, receiver in (("str(n).startswith", "str(n)"), ("k.startswith", "k")):
            assert f"`{receiver}` is not evidently the running device" in described[_line_of(fragment)]


def test_saved_location_in_map_location_is_manual_not_rewritten():
    line = _line_of("map_location=lambda")
    for style in ("agnostic", "transfer"):
        result = rewrite_python(load_knowledge(), "s.py", SOURCE, Options(style=style, inject=False))
        assert 'loc.startswith("cuda")' in result.text
        assert line not in {c.start_line for c in result.changes if c.rule == "DV004"}
        notes = [c.message for c in result.manual if c.rule == "DV004" and c.start_line == line]
        assert notes and "where the checkpoint saved the tensor" in notes[0]
