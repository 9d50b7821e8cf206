"""migrate reports progress by phase, so a front end can show where a long run is."""
from __future__ import annotations

from ascend_migrate.fix.api import migrate


def test_progress_reports_scan_then_rewrite(tmp_path):
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text("import torch\nx = torch.randn(2).cuda()\n", encoding="utf-8")
    (tmp_path / "plain.py").write_text("print('no cuda here')\n", encoding="utf-8")
    calls = []
    result = migrate(tmp_path, style="agnostic", progress=lambda phase, done, total: calls.append((phase, done, total)))
    phases = [c[0] for c in calls]
    assert phases and set(phases) == {"scanning", "rewriting"}
    assert phases.index("rewriting") > max(i for i, p in enumerate(phases) if p == "scanning")
    rewriting = [c for c in calls if c[0] == "rewriting"]
    assert rewriting[-1][1] == rewriting[-1][2] == 3  # every file with a finding, then done
    assert [d for _, d, _ in rewriting] == sorted(d for _, d, _ in rewriting)
    assert len([f for f in result.files if f.new is not None]) == 3
