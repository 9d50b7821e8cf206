"""One rank of the DDP smoke run (launched by torchrun through validate/ddp.py).

Runs the project's train entry on this rank's device and writes rank<N>.json into --out:
losses, whether torch.distributed was initialised, the world size, and a checksum of every
parameter of the model the entry returned.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import traceback
from pathlib import Path


def _param_summary(model) -> dict:
    """Per-parameter float64 sums and an exact integer checksum of the raw bits."""
    import torch

    model = getattr(model, "module", model)  # unwrap DistributedDataParallel
    params = {}
    total = 0
    for name, p in model.named_parameters():
        t = p.detach().to("cpu").contiguous().reshape(-1)
        raw = t.view(torch.uint8).to(torch.int64)
        weights = torch.arange(raw.numel(), dtype=torch.int64) % 65521 + 1
        bits = int((raw * weights).sum()) if raw.numel() else 0
        t64 = t.to(torch.float64)
        params[name] = {"sum": float(t64.sum()), "abs_sum": float(t64.abs().sum()), "bits": bits}
        total = (total * 1000003 + bits) % (2**61 - 1)
    return {"bits": total, "params": params}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entry", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--device", required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    out = Path(args.out) / f"rank{rank}.json"
    record: dict = {"rank": rank, "local_rank": local_rank, "ok": False}
    try:
        from ascend_migrate.validate import devices
        from ascend_migrate.validate.entry import interpret_result, call_entry, load_entry, project_imports

        device = devices.with_index(args.device, local_rank)
        record["device"] = device
        devices.prepare_device(device)
        import torch.distributed as dist

        # Record init_process_group calls: an entry may destroy its process group before returning.
        original_init = dist.init_process_group

        def recording_init(*a, **kw):
            out = original_init(*a, **kw)
            record["distributed"] = True
            record["world_size"] = dist.get_world_size()
            record["backend"] = str(dist.get_backend())
            return out

        dist.init_process_group = recording_init
        root = Path(args.root).resolve()
        with project_imports(root):
            fn = load_entry(args.entry, root)
            devices.seed_everything(args.seed)
            with devices.deterministic(device):
                result = call_entry(fn, device=device, steps=args.steps, seed=args.seed)
                run = interpret_result(result, device, None)
        record["losses"] = [x if math.isfinite(x) else str(x) for x in run.losses]
        if dist.is_initialized():
            record["distributed"] = True
            record["world_size"] = dist.get_world_size()
            record["backend"] = str(dist.get_backend())
        record.setdefault("distributed", False)
        if run.model is not None:
            record["model"] = _param_summary(run.model)
        if dist.is_initialized():
            dist.barrier()
            dist.destroy_process_group()
        record["ok"] = True
    except BaseException as exc:  # report every failure to the parent, then exit non-zero
        record["error"] = f"{type(exc).__name__}: {exc}"
        record["traceback"] = traceback.format_exc()[-4000:]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1), encoding="utf-8")
    return 0 if record["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
