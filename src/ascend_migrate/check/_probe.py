"""Probe run by `ascend-migrate check` inside the interpreter being checked.

Standalone on purpose: it runs under any Python 3.8+ (the host's, a venv's) without this
package installed. Each step prints one JSON line and flushes, so when a native import
hangs or crashes the caller still knows how far it got.

    python _probe.py info DEPS_JSON
    python _probe.py device DEVICE
    python _probe.py hccl DEVICE
"""
import json
import os
import platform
import sys
import time
import traceback


def emit(step, ok, **data):
    data.update({"step": step, "ok": bool(ok)})
    sys.stdout.write(json.dumps(data, default=str) + "\n")
    sys.stdout.flush()


def _dist_version(name):
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    for cand in (name, name.replace("-", "_"), name.replace("_", "-")):
        try:
            return metadata.version(cand)
        except Exception:
            continue
    return None


def _requires(name):
    try:
        from importlib import metadata

        for cand in (name, name.replace("-", "_"), name.replace("_", "-")):
            try:
                return list(metadata.requires(cand) or [])
            except Exception:
                continue
    except ImportError:  # pragma: no cover
        pass
    return []


def _entry_point_names(group):
    try:
        from importlib import metadata

        eps = metadata.entry_points()
        found = eps.select(group=group) if hasattr(eps, "select") else eps.get(group, [])
        return sorted({ep.name for ep in found})
    except Exception:
        return []


def info(deps_json):
    import importlib.util

    deps = json.loads(deps_json) if deps_json else []
    dists = {}
    for name in ["torch", "torch_npu", "numpy", "vllm", "vllm-ascend"] + [d["name"] for d in deps]:
        dists[name] = _dist_version(name)
    modules = {}
    for d in deps:
        try:
            modules[d["module"]] = importlib.util.find_spec(d["module"]) is not None
        except Exception:
            modules[d["module"]] = False
    emit(
        "info",
        True,
        python=platform.python_version(),
        implementation=platform.python_implementation(),
        executable=sys.executable,
        machine=platform.machine(),
        system=platform.system(),
        dists=dists,
        modules=modules,
        torch_npu_requires=_requires("torch_npu"),
        vllm_platform_plugins=_entry_point_names("vllm.platform_plugins"),
    )


def _err():
    return traceback.format_exc()


def _sync(torch, kind):
    if kind == "npu":
        torch.npu.synchronize()
    elif kind == "cuda":
        torch.cuda.synchronize()


def _rel_err(got, ref):
    diff = (got.double() - ref.double()).norm().item()
    base = ref.double().norm().item() or 1.0
    return diff / base, (got.double() - ref.double()).abs().max().item()


def device(spec):
    kind, _, idx = spec.partition(":")
    idx = int(idx or 0)
    t0 = time.time()
    try:
        import torch
    except BaseException:
        emit("import_torch", False, error=_err())
        return
    emit(
        "import_torch",
        True,
        version=torch.__version__,
        cuda=getattr(torch.version, "cuda", None),
        seconds=round(time.time() - t0, 3),
    )
    if kind == "npu":
        t0 = time.time()
        try:
            import torch_npu  # noqa: F401
        except BaseException:
            emit("import_torch_npu", False, error=_err())
            return
        emit(
            "import_torch_npu",
            True,
            version=getattr(torch_npu, "__version__", None),
            cann=getattr(torch.version, "cann", None),
            seconds=round(time.time() - t0, 3),
        )
    try:
        if kind == "npu":
            available = bool(torch.npu.is_available())
            count = int(torch.npu.device_count())
        elif kind == "cuda":
            available = bool(torch.cuda.is_available())
            count = int(torch.cuda.device_count())
        else:
            available, count = True, 1
    except BaseException:
        emit("devices", False, error=_err())
        return
    emit(
        "devices",
        available and count > idx,
        available=available,
        count=count,
        index=idx,
        visible=os.environ.get("ASCEND_RT_VISIBLE_DEVICES" if kind == "npu" else "CUDA_VISIBLE_DEVICES"),
    )
    if not available or count <= idx:
        return
    dev = torch.device(kind, idx) if kind != "cpu" else torch.device("cpu")
    props = {}
    try:
        if kind == "npu":
            torch.npu.set_device(idx)
            props["name"] = torch.npu.get_device_name(idx)
            free, total = torch.npu.mem_get_info(idx)
            props.update(free_bytes=int(free), total_bytes=int(total))
        elif kind == "cuda":
            torch.cuda.set_device(idx)
            props["name"] = torch.cuda.get_device_name(idx)
            free, total = torch.cuda.mem_get_info(idx)
            props.update(free_bytes=int(free), total_bytes=int(total))
        else:
            props["name"] = platform.processor() or platform.machine()
    except BaseException:
        props["error"] = _err()
    # tensor op: first device allocation triggers lazy init on NPU
    t0 = time.time()
    try:
        x_cpu = torch.arange(4096, dtype=torch.float32)
        ref = (x_cpu * 2.0 + 1.0).sum().item()
        x = x_cpu.to(dev)
        got = (x * 2.0 + 1.0).sum()
        _sync(torch, kind)
        got = got.cpu().item()
        ok = abs(got - ref) <= 1e-6 * abs(ref)
        emit("tensor_op", ok, got=got, expected=ref, seconds=round(time.time() - t0, 3), device_props=props)
    except BaseException:
        emit("tensor_op", False, error=_err(), device_props=props)
        return
    # matmul against a float64 CPU reference
    t0 = time.time()
    tol = 1e-3
    try:
        g = torch.Generator().manual_seed(1234)
        a = torch.randn(256, 256, generator=g)
        b = torch.randn(256, 256, generator=g)
        ref = a.double() @ b.double()
        got = (a.to(dev) @ b.to(dev))
        _sync(torch, kind)
        rel, mx = _rel_err(got.cpu(), ref)
        emit("matmul", rel <= tol, rel_err=rel, max_abs_err=mx, tolerance=tol, shape=[256, 256], seconds=round(time.time() - t0, 3))
    except BaseException:
        emit("matmul", False, error=_err())
    # bf16
    try:
        if kind == "npu":
            supported = bool(torch.npu.is_bf16_supported())
        elif kind == "cuda":
            supported = bool(torch.cuda.is_bf16_supported())
        else:
            supported = True
    except BaseException:
        emit("bf16", False, error=_err())
        return
    if not supported:
        emit("bf16", False, supported=False)
        return
    tol = 2e-2
    try:
        g = torch.Generator().manual_seed(99)
        a = torch.randn(128, 128, generator=g)
        b = torch.randn(128, 128, generator=g)
        ref = a.double() @ b.double()
        got = a.to(dev, torch.bfloat16) @ b.to(dev, torch.bfloat16)
        _sync(torch, kind)
        rel, mx = _rel_err(got.float().cpu(), ref)
        emit("bf16", rel <= tol, supported=True, rel_err=rel, max_abs_err=mx, tolerance=tol)
    except BaseException:
        emit("bf16", False, supported=True, error=_err())


def _hccl_worker(rank, world, kind, init_file, result_dir):
    import torch
    import torch.distributed as dist

    if kind == "npu":
        import torch_npu  # noqa: F401

        torch.npu.set_device(rank)
        backend, dev = "hccl", torch.device("npu", rank)
    elif kind == "cuda":
        torch.cuda.set_device(rank)
        backend, dev = "nccl", torch.device("cuda", rank)
    else:
        backend, dev = "gloo", torch.device("cpu")
    dist.init_process_group(backend, init_method="file://" + init_file, rank=rank, world_size=world)
    t = torch.full((16,), float(rank + 1), device=dev)
    dist.all_reduce(t)
    value = t.cpu()[0].item()
    dist.destroy_process_group()
    with open(os.path.join(result_dir, "rank%d" % rank), "w") as f:
        f.write(repr(value))


def hccl(spec):
    import tempfile

    kind = spec.partition(":")[0]
    try:
        import torch
        import torch.multiprocessing as mp

        if kind == "npu":
            import torch_npu  # noqa: F401
            count = torch.npu.device_count()
        elif kind == "cuda":
            count = torch.cuda.device_count()
        else:
            count = 2
    except BaseException:
        emit("hccl", False, error=_err())
        return
    if count < 2:
        emit("hccl", False, error="need 2 devices, found %d" % count, count=count)
        return
    tmp = tempfile.mkdtemp(prefix="am-hccl-")
    init_file = os.path.join(tmp, "init")
    t0 = time.time()
    try:
        mp.spawn(_hccl_worker, args=(2, kind, init_file, tmp), nprocs=2, join=True)
        values = []
        for r in range(2):
            with open(os.path.join(tmp, "rank%d" % r)) as f:
                values.append(float(f.read()))
        emit("hccl", all(v == 3.0 for v in values), values=values, expected=3.0, seconds=round(time.time() - t0, 3))
    except BaseException:
        emit("hccl", False, error=_err())


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    cmd = argv[1]
    if cmd == "info":
        info(argv[2] if len(argv) > 2 else "[]")
    elif cmd == "device":
        device(argv[2])
    elif cmd == "hccl":
        hccl(argv[2])
    else:
        sys.stderr.write("unknown probe %r\n" % cmd)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
