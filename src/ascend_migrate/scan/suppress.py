"""The comment that drops findings on its line: `# ascend-migrate: ignore` (every rule) or
`# ascend-migrate: ignore[DV001, CU002]` (the rules listed). The engine drops them from a
file's result; the Python analyser asks while it builds fixes (a dropped finding costs none)."""
from __future__ import annotations

import re

SUPPRESS = re.compile(r"#\s*ascend-migrate:\s*ignore(?:\[([A-Za-z0-9,\s]+)\])?")
