"""Static items as functions of a ScanResult (hand-built here) and the tree."""
from __future__ import annotations

from ascend_migrate.validate.checklist import default_checklist
from ascend_migrate.validate.project import load_project
from ascend_migrate.validate.static import StaticContext, run_static

from vhelpers import entry, finding, make_scan, write_tree

ITEMS = {i.id: i for i in default_checklist()}


def decide(item_id, root, findings=(), entry_points=(), thresholds=None):
    from ascend_migrate.validate.thresholds import load_thresholds

    ctx = StaticContext(scan=make_scan(root, findings, entry_points), project=load_project(root),
                        thresholds=thresholds or load_thresholds())
    return run_static(ITEMS[item_id], ctx)


def locations(result):
    return [(e.get("path"), e.get("line")) for e in result.evidence if e.get("path")]


def test_entry_points_transfer_style(tmp_path):
    write_tree(tmp_path, {"train.py": "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu\nx.cuda()\n"})
    res = decide("backend-in-entry-points", tmp_path, [finding("DV002", "train.py", 3)], [entry("train.py", 3, True)])
    assert res.status == "pass"


def test_entry_points_missing_import_with_cuda_calls(tmp_path):
    write_tree(tmp_path, {"train.py": "import torch\nx = torch.zeros(1).cuda()\nif __name__ == '__main__':\n    pass\n"})
    res = decide("backend-in-entry-points", tmp_path, [finding("DV002", "train.py", 2, 4)], [entry("train.py", 3)])
    assert res.status == "fail"
    assert ("train.py", 3) in locations(res) and ("train.py", 2) in locations(res)


def test_entry_points_device_agnostic(tmp_path):
    write_tree(tmp_path, {"train.py": """
        import torch
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        if dev == "cuda":
            torch.cuda.synchronize()
    """})
    findings = [finding("DV001", "train.py", 2, 6), finding("CU001", "train.py", 2, 22, symbol="torch.cuda.is_available"),
                finding("DV001", "train.py", 3, 10), finding("CU001", "train.py", 4, 4, symbol="torch.cuda.synchronize")]
    res = decide("backend-in-entry-points", tmp_path, findings, [entry("train.py")])
    assert res.status == "pass", res.evidence


def test_capability_guards(tmp_path):
    write_tree(tmp_path, {"m.py": """
        import torch
        def a():
            return torch.cuda.get_device_capability()[0] >= 8
        def b():
            try:
                return torch.cuda.get_device_capability()[0] >= 8
            except (AttributeError, RuntimeError):
                return True
        def c():
            try:
                return torch.cuda.get_device_capability()[0] >= 8
            except TypeError:
                return True
        def d():
            try:
                return torch.cuda.get_device_properties(0).major
            except AttributeError:
                return 0
    """})
    findings = [finding("CU101", "m.py", 3, 11), finding("CU101", "m.py", 6, 15),
                finding("CU101", "m.py", 11, 15), finding("CU102", "m.py", 16, 15)]
    res = decide("device-capability-guarded", tmp_path, findings)
    assert res.status == "fail"
    bad = [e["line"] for e in res.evidence if e["note"].startswith("unguarded")]
    # (AttributeError, RuntimeError) does not catch the TypeError that None[0] raises
    assert bad == [3, 6]


def test_amp_nccl_dataparallel(tmp_path):
    write_tree(tmp_path, {"t.py": "import torch\nimport torch.distributed as dist\ndist.init_process_group('nccl')\n"})
    amp = [finding("AM001", "t.py", 1), finding("AM004", "t.py", 1)]
    res = decide("amp-adapted", tmp_path, amp, [entry("t.py", 1, True)])
    assert res.status == "fail" and [e["rule"] for e in res.evidence if "dynamic" in e.get("note", "")] == ["AM004"]
    assert decide("amp-adapted", tmp_path, amp[:1], [entry("t.py", 1, True)]).status == "pass"
    assert decide("amp-adapted", tmp_path, amp[:1], [entry("t.py", 1)]).status == "fail"
    nccl = [finding("DS001", "t.py", 3, 29)]
    assert decide("no-nccl", tmp_path, nccl, [entry("t.py")]).status == "fail"
    assert decide("no-nccl", tmp_path, nccl, [entry("t.py", 1, True)]).status == "pass"
    assert decide("no-dataparallel", tmp_path, [finding("DS003", "t.py", 2)]).status == "fail"
    assert decide("no-dataparallel", tmp_path).status == "pass"


def test_nccl_per_device_mapping_is_fine(tmp_path):
    write_tree(tmp_path, {"t.py": """
        import torch.distributed as dist
        def init(device):
            backend = {"cuda": "nccl", "npu": "hccl", "cpu": "gloo"}[device.split(":")[0]]
            dist.init_process_group(backend)
    """})
    res = decide("no-nccl", tmp_path, [finding("DS001", "t.py", 3, 23)])
    assert res.status == "pass", res.evidence


def test_cuda_sources(tmp_path):
    write_tree(tmp_path, {"setup.py": """
        import os
        from torch.utils.cpp_extension import CUDAExtension
        ext = []
        if os.environ.get("FORCE_CUDA", "0") == "1":
            ext.append(CUDAExtension("k", ["k.cu"]))
    """, "bad_setup.py": "from torch.utils.cpp_extension import CUDAExtension\next = [CUDAExtension('k', ['k.cu'])]\n"})
    cu = finding("EX001", "k.cu", 1, severity="error", symbol="triage:low")
    assert decide("cuda-sources-handled", tmp_path, [cu, finding("EX002", "setup.py", 5, 15)]).status == "pass"
    res = decide("cuda-sources-handled", tmp_path, [cu, finding("EX002", "bad_setup.py", 2, 7)])
    assert res.status == "fail" and ("bad_setup.py", 2) in locations(res)
    # sources no Python build uses are a person's question, asked by the manual item only
    assert decide("cuda-sources-handled", tmp_path, [cu]).status == "pass"
    assert decide("cuda-sources-unbuilt", tmp_path, [cu]).status == "manual-pending"
    assert decide("cuda-sources-unbuilt", tmp_path, [cu, finding("EX002", "setup.py", 5, 15)]).status == "skip"
    assert decide("cuda-sources-unbuilt", tmp_path, []).status == "skip"


def test_packages(tmp_path):
    write_tree(tmp_path, {"a.py": "try:\n    import flash_attn\nexcept ImportError:\n    flash_attn = None\n",
                          "b.py": "import xformers\n"})
    assert decide("cuda-packages-replaced", tmp_path, [finding("PK002", "a.py", 2, 4)]).status == "pass"
    res = decide("cuda-packages-replaced", tmp_path, [finding("PK002", "b.py", 1), finding("PK001", "requirements.txt", 3)])
    assert res.status == "fail" and locations(res) == [("b.py", 1), ("requirements.txt", 3)]


def test_launch_configs(tmp_path):
    write_tree(tmp_path, {
        "accelerate.yaml": "distributed_type: MULTI_GPU\nnum_processes: 8\n",
        "run.sh": "# CUDA_VISIBLE_DEVICES is not used\npython train.py --accelerator gpu\n",
        "ok.yaml": "accelerator: npu\nbackend: hccl\n",
    })
    res = decide("launch-configs", tmp_path, [finding("DS001", "cfg.json", 2)])
    assert res.status == "fail"
    assert locations(res) == [("accelerate.yaml", 1), ("cfg.json", 2), ("run.sh", 2)]


def test_dataloader_items(tmp_path, thresholds):
    write_tree(tmp_path, {"d.py": """
        from torch.utils.data import DataLoader
        a = DataLoader(ds, batch_size=4, num_workers=32)
        b = DataLoader(ds, pin_memory=True)
        c = DataLoader(ds, num_workers=args.workers, pin_memory=True)
        d = DataLoader(ds, 4, True, None, None, 0, None, True)
        e = DataLoader(ds, pin_memory=True, **kw)
    """})
    res = decide("dataloader-workers", tmp_path)
    assert res.status == "fail" and locations(res)[0] == ("d.py", 2)
    res = decide("pin-memory-workers", tmp_path)
    bad = [e["line"] for e in res.evidence if "without worker" in e["message"]]
    assert res.status == "fail" and bad == [3, 5]


def test_init_files(tmp_path):
    write_tree(tmp_path, {
        "train.py": "from models.net import Net\nimport utils.io\nfrom pkg import thing\n",
        "models/net.py": "from .layers import L\n",
        "models/layers.py": "L = 1\n",
        "utils/__init__.py": "", "utils/io.py": "",
        "pkg.py": "thing = 1\n",
    })
    res = decide("package-init-files", tmp_path)
    assert res.status == "fail"
    assert [e["directory"] for e in res.evidence if "directory" in e] == ["models"]
    (tmp_path / "models" / "__init__.py").write_text("")
    assert decide("package-init-files", tmp_path).status == "pass"


def test_training_pitfalls(tmp_path):
    write_tree(tmp_path, {
        "bench.py": """
            import time, torch
            def bench(model, x):
                start = time.time()
                model(x)
                return time.time() - start
            def bench_ok(model, x):
                torch.npu.synchronize()
                start = time.perf_counter()
                model(x)
                torch.npu.synchronize()
                return time.perf_counter() - start
        """,
        "loop.py": """
            import torch
            def fit(model, opt, data):
                model.eval()
                for x in data:
                    model(x).sum().backward()
                    opt.step()
        """,
        "ckpt.py": """
            import torch
            scaler = torch.amp.GradScaler("npu")
            scheduler = torch.optim.lr_scheduler.StepLR(opt, 10)
            torch.save({"model": model.state_dict(), "scaler": scaler.state_dict()}, "a.pt")
            state = {"model": model.state_dict(), "scaler": scaler.state_dict(), "sched": scheduler.state_dict()}
            torch.save(state, "b.pt")
            torch.save(model.state_dict(), "weights.pt")
        """,
    })
    res = decide("sync-before-timing", tmp_path)
    assert res.status == "fail" and locations(res)[0] == ("bench.py", 3)
    res = decide("train-eval-modes", tmp_path)
    assert res.status == "fail" and locations(res) == [("loop.py", 3)]
    res = decide("checkpoint-state", tmp_path)
    assert res.status == "fail"
    assert locations(res)[0] == ("ckpt.py", 4) and "scheduler" in res.evidence[0]["message"]
    assert ("ckpt.py", 6) in locations(res)  # the complete one is listed as good evidence


def test_unparseable_and_symlinked_files_are_skipped(tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("from x import y\n")
    root = write_tree(tmp_path / "proj", {"bad.py": "def (:\n", "ok.py": "x = 1\n"})
    (root / "link.py").symlink_to(outside)
    project = load_project(root)
    assert "link.py" not in project.python_files
    assert decide("package-init-files", root).status == "pass"


def test_arms_the_npu_test_keeps_off_the_npu_pass_with_the_real_scanner(tmp_path):
    """DataParallel and nccl in the arm an `== "npu"` test never runs on the NPU are harmless; in
    the arm it runs there (or under a test that also lets cuda in) they still fail."""
    from ascend_migrate.scan.api import scan
    from ascend_migrate.validate.thresholds import load_thresholds

    def run(item_id, source):
        root = tmp_path / item_id / str(abs(hash(source)))
        write_tree(root, {"train.py": source})
        ctx = StaticContext(scan=scan(root, use_cache=False), project=load_project(root),
                            thresholds=load_thresholds())
        return run_static(ITEMS[item_id], ctx).status

    off = """
        import torch
        import torch.distributed as dist
        def build(model, device):
            if device.type == "npu":
                model = model.to(device)
            else:
                model = torch.nn.DataParallel(model)
            dist.init_process_group("hccl" if device.type == "npu" else "nccl")
            return model
    """
    on = off.replace('if device.type == "npu":', 'if device.type in ("cuda", "npu"):').replace(
        '"hccl" if device.type == "npu" else "nccl"', '"nccl" if device.type == "npu" else "hccl"')
    assert run("no-dataparallel", off) == "pass"
    assert run("no-nccl", off) == "pass"
    assert run("no-dataparallel", on) == "fail"
    assert run("no-nccl", on) == "fail"


def test_a_notebook_device_string_is_code_not_a_launch_config(tmp_path):
    """`device = 'cuda'` in a notebook cell is Python: the scan reports it like any code, and the
    launch-config item (which cannot be confirmed) does not take it for a GPU-only setting."""
    write_tree(tmp_path, {"demo.ipynb": '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n',
                          "run.sh": "export NCCL_DEBUG=INFO\n"})
    notebook = finding("DV001", "demo.ipynb", 3)
    assert decide("launch-configs", tmp_path, [notebook]).status == "pass"
    assert decide("launch-configs", tmp_path, [notebook, finding("DV006", "run.sh", 1)]).status == "fail"


def test_dataparallel_kept_for_cuda_only_in_an_agnostic_port(tmp_path):
    """An agnostic port whose author keeps DataParallel for CUDA hosts under a plain
    `device == "cuda"` test (the device being the run-time type, "npu" on an NPU host) does on
    every host what the original did there: the scan reports the branch as information, validate
    accepts it and a second migrate leaves it alone. The same hand edit in a transfer port, where
    the device string still says "cuda" on the NPU, stays an error."""
    from ascend_migrate.fix.api import migrate
    from ascend_migrate.scan.api import scan
    from ascend_migrate.scan.pyast.reporting import CUDA_ONLY_KEPT
    from ascend_migrate.validate.thresholds import load_thresholds

    original = write_tree(tmp_path / "original", {"train.py": """
        import torch
        import torch.nn as nn

        def build(net):
            device = "cuda" if torch.cuda.is_available() else "cpu"
            net = net.to(device)
            if device == "cuda":
                net = nn.DataParallel(net)
            return net

        if __name__ == "__main__":
            build(nn.Linear(2, 2))
    """})

    def port(style: str, kept: str) -> tuple:
        out = tmp_path / style
        migrate(original, style=style, output=out)
        path = out / "train.py"
        text = path.read_text(encoding="utf-8")
        rewritten = next(line for line in text.splitlines() if "DataParallel" not in line and "if device" in line)
        path.write_text(text.replace(rewritten, kept), encoding="utf-8")  # the author's manual fix
        result = scan(out, use_cache=False)
        ctx = StaticContext(scan=result, project=load_project(out), thresholds=load_thresholds())
        return out, result, {i: run_static(ITEMS[i], ctx).status for i in ("no-dataparallel", "device-type-checks")}

    out, result, verdicts = port("agnostic", '    if device == "cuda":')
    dp = [f for f in result.findings if f.rule == "DS003"]
    assert [(f.severity, f.message.endswith(CUDA_ONLY_KEPT)) for f in dp] == [("info", True)]
    assert not [f for f in result.findings if f.rule == "DV004"]
    assert verdicts == {"no-dataparallel": "pass", "device-type-checks": "pass"}
    again = migrate(out, style="agnostic")
    assert [f.path for f in again.files if f.new is not None] == [] and again.manual == []

    _, result, verdicts = port("transfer", '    if device == "cuda":')
    assert [f.severity for f in result.findings if f.rule == "DS003"] == ["error"]
    assert verdicts["no-dataparallel"] == "fail"


def test_device_check_paired_with_an_npu_test_passes(tmp_path):
    """The change list's manual fix for `'cuda' in device` is to test for npu as well; the scan
    then calls the check handled, and validate must not warn about the very line it asked for.
    A bare check in the same tree still fails the item."""
    from ascend_migrate.scan.api import scan
    from ascend_migrate.validate.thresholds import load_thresholds

    root = write_tree(tmp_path / "port", {"train.py": """
        import torch
        device = "npu"
        device_type = "cuda" if "cuda" in device or "npu" in device else "cpu"
        if device.startswith("cuda") or device.startswith("npu"):
            torch.manual_seed(0)
    """})

    def verdict():
        ctx = StaticContext(scan=scan(root, use_cache=False), project=load_project(root), thresholds=load_thresholds())
        return run_static(ITEMS["device-type-checks"], ctx)

    done = verdict()
    assert done.status == "pass", done
    assert len(done.evidence) == 2
    (root / "train.py").write_text((root / "train.py").read_text() + 'pin = "cuda" in device\n')
    done = verdict()
    assert done.status == "fail" and [e["line"] for e in done.evidence if "False on NPU" in e["note"]] == [6]


def test_a_directory_without_init_names_every_importer(tmp_path):
    """The warning named only the first importer in file order (an inference script off the
    training path) while the training script's own import went unmentioned."""
    root = write_tree(tmp_path, {
        "predict.py": "from utils.data import load\n",
        "train.py": "import torch\n\nfrom utils.data import load\n",
        "utils/data.py": "def load():\n    return 1\n",
    })
    done = decide("package-init-files", root)
    assert done.status == "fail", done  # the item's severity (a warning) is applied by the runner
    message = done.evidence[0]["message"]
    assert "utils/ has no __init__.py" in message and "predict.py:1" in message and "train.py:3" in message, message


def test_clock_stamps_that_only_label_log_lines_are_not_timings(tmp_path):
    write_tree(tmp_path, {
        "log.py": """
            import time, torch
            def log_step(step, loss):
                print(f"[{time.time():.0f}] step {step}")
                stamp = time.time()
                print(f"[{stamp:.0f}] loss {loss.item():.4f}")
        """,
    })
    res = decide("sync-before-timing", tmp_path)
    assert res.status != "fail"
    assert not any(e.get("path") == "log.py" for e in res.evidence)
    write_tree(tmp_path, {
        "bench.py": """
            import time, torch
            def bench(model, x):
                t0 = time.perf_counter()
                model(x)
                t1 = time.perf_counter()
                print("step took", t1 - t0)
            class Timer:
                def measure(self, model, x):
                    self.start = time.time()
                    model(x)
                    self.elapsed = time.time() - self.start
        """,
    })
    res = decide("sync-before-timing", tmp_path)
    assert res.status == "fail"
    assert locations(res) == [("bench.py", 3), ("bench.py", 9)]
