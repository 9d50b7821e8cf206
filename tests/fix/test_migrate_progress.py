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


def test_a_pool_of_workers_plans_what_one_process_plans(tmp_path, monkeypatch):
    """Large trees are rewritten and verified in a process pool; the result is the same."""
    import ascend_migrate.fix.migrate as migrate_module

    monkeypatch.setenv("ASCEND_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    for i in range(80):
        body = "import torch\n"
        body += "x = torch.randn(2).cuda()\n" if i % 2 else "torch.cuda.synchronize()\n"
        if i % 7 == 0:
            body += "model = torch.nn.DataParallel(torch.nn.Linear(2, 2))\n"
        if i % 11 == 0:
            body += "def broken(:\n"  # does not parse: reported, not rewritten
        (root / "pkg" / f"m{i:02d}.py").write_text(body, encoding="utf-8")
    (root / "run.sh").write_text("export CUDA_VISIBLE_DEVICES=0\ntorchrun --nproc_per_node=1 pkg/m01.py\n",
                                 encoding="utf-8")

    def summary(res):
        return ([(f.path, f.new, f.error, [(c.rule, c.start_line) for c in f.changes],
                  [(c.rule, c.start_line) for c in f.manual]) for f in res.files], res.notes)

    pooled = migrate(root, style="agnostic")
    assert len(pooled.files) >= migrate_module._PARALLEL_MIN  # the pool was used
    monkeypatch.setattr(migrate_module, "_PARALLEL_MIN", 10**9)
    serial = migrate(root, style="agnostic")
    assert len([f for f in serial.files if f.new is not None]) >= 60
    assert summary(pooled) == summary(serial)
