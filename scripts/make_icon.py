#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
"""Draw the plugin's listing icon (.claude-plugin/icon.png) with the standard library only.

The plugin directory wants a square PNG of 512-2048 px. Drawing it from code keeps the
icon reviewable as text and reproducible byte for byte: `--check` fails when the committed
file differs from what this script draws (the test suite runs it).

The picture: a dark tile with an arrow from a green square (the GPU side) to a red one
(the NPU side).
"""
from __future__ import annotations

import argparse
import struct
import sys
import zlib
from pathlib import Path

SIZE = 512
ICON = Path(__file__).resolve().parents[1] / ".claude-plugin" / "icon.png"

BACKGROUND = (24, 28, 38)
SOURCE = (118, 185, 0)      # left square
TARGET = (199, 0, 11)       # right square
ARROW = (235, 235, 240)


def _pixel(x: int, y: int) -> tuple[int, int, int]:
    """Colour of one pixel; shapes are tested in order, the first hit wins."""
    if 72 <= x < 200 and 192 <= y < 320:
        return SOURCE
    if 312 <= x < 440 and 192 <= y < 320:
        return TARGET
    if 212 <= x < 270 and 244 <= y < 268:          # arrow shaft
        return ARROW
    if 270 <= x < 300 and abs(y - 256) <= (300 - x):  # arrow head, a triangle
        return ARROW
    return BACKGROUND


def draw() -> bytes:
    """The PNG bytes: 8-bit RGB, no interlace, one zlib stream at level 9."""
    rows = bytearray()
    for y in range(SIZE):
        rows.append(0)  # filter type: none
        for x in range(SIZE):
            rows.extend(_pixel(x, y))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(bytes(rows), 9)) + chunk(b"IEND", b""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the committed icon differs from the drawing")
    args = parser.parse_args(argv)
    data = draw()
    if args.check:
        if not ICON.is_file() or ICON.read_bytes() != data:
            print(f"{ICON} is out of date; run scripts/make_icon.py", file=sys.stderr)
            return 1
        return 0
    ICON.write_bytes(data)
    print(f"wrote {ICON} ({len(data)} bytes, {SIZE}x{SIZE})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
