"""The emulated npu's `torch_npu`: the `npu` device backed by host memory and CPU kernels.

Not Ascend's torch_npu. It exists so that transfer-style ports (which `import torch_npu` and
`torch_npu.contrib.transfer_to_npu`) can run on a machine without Ascend hardware and be compared
with the original on CPU. It is importable only in a process started with
`ascend_migrate.emulated_npu.emulated_env()`. `__emulated__` and the environment variable
ASCEND_MIGRATE_EMULATED_NPU=1 tell whoever reports results that no Ascend hardware or CANN was
involved.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Optional

import torch

__emulated__ = True
#: The torch_npu release this imitates (its coverage data drives transfer_to_npu).
__version__ = os.environ.get("NPU_STANDIN_RELEASE", "2.13.0")
os.environ["ASCEND_MIGRATE_EMULATED_NPU"] = "1"


def _load_build_module():
    """ascend_migrate/emulated_npu/build.py, loaded by its path: the device must not depend on
    which ascend_migrate (if any) this interpreter would import."""
    name = "_ascend_migrate_emulated_npu_build"
    if name in sys.modules:
        return sys.modules[name]
    path = Path(__file__).resolve().parents[2] / "build.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_build = _load_build_module()
torch.utils.rename_privateuse1_backend("npu")
_C = _build.load_extension()
_C.set_device_count(int(os.environ.get(_build.DEVICE_COUNT_ENV, "1")))
_ROUTED_OPS = _C.route_cpu_kernels()
#: NPU_STANDIN_AUTOCAST=0 leaves autocast regions at full precision, so that a port whose
#: accelerator path enables AMP can still be compared bit for bit with the original on CPU.
AUTOCAST_CASTS = os.environ.get(_build.AUTOCAST_ENV, "1") != "0"
if AUTOCAST_CASTS:
    _C.register_autocast()


def _warn_fallbacks() -> Optional[str]:
    """Print torch_npu's fallback warning, once per operator, for the operators the imitated
    release has no NPU kernel for, as the NPU host would. Only when ascend_migrate knows that
    release's operators; NPU_STANDIN_OPS_RELEASE names another release than the imitated one
    (whose coverage drives transfer_to_npu), NPU_STANDIN_FALLBACK_WARNINGS=0 turns it off.
    Returns the release used."""
    if os.environ.get(FALLBACK_WARNINGS_ENV, "1") == "0":
        return None
    try:
        from ascend_migrate.knowledge import npu_ops
    except ImportError:
        return None
    try:
        release = os.environ.get(OPS_RELEASE_ENV) or __version__
        ops = npu_ops.load_ops(release) if release in npu_ops.ops_versions() else None
    except Exception:  # unreadable data: the run goes on without the warnings
        return None
    if ops is None:
        return None
    names = [n for n in torch._C._dispatch_get_all_op_names() if n.startswith("aten::")]
    supported, renamed = ops.warning_table(names)
    _C.warn_fallback(supported, renamed)
    return ops.version


FALLBACK_WARNINGS_ENV = "NPU_STANDIN_FALLBACK_WARNINGS"
OPS_RELEASE_ENV = "NPU_STANDIN_OPS_RELEASE"
#: The release whose operator data the fallback warnings follow (None: no warnings).
FALLBACK_WARNINGS_RELEASE = _warn_fallbacks()
#: NPU_STANDIN_RECORD_OPS=1: record the operators that reach the device from this import on, and
#: where each was first dispatched (`_C.record_ops(False)` / `_C.record_sites(False)` hand them over).
RECORD_OPS_ENV = "NPU_STANDIN_RECORD_OPS"
if os.environ.get(RECORD_OPS_ENV) == "1":
    _C.record_ops(True)
    _C.record_sites(True)

from torch_npu import npu  # noqa: E402  (needs the backend renamed and the extension loaded)

torch._register_device_module("npu", npu)
torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)

from torch_npu import distributed  # noqa: E402,F401  registers the "hccl" backend

distributed.register_hccl()


def _stop_loader_threads() -> None:
    """Shut DataLoader iterators down before the interpreter finalizes. On this device a loader
    runs a pin-memory thread; left alive at exit it is torn down inside torch's C++ code and the
    process aborts ("terminate called without an active exception") after the script finished."""
    import gc
    import warnings

    from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # isinstance on lazy module proxies among gc's objects warns
        for obj in gc.get_objects():
            if type(obj) is _MultiProcessingDataLoaderIter or isinstance(obj, _MultiProcessingDataLoaderIter):
                try:
                    obj._shutdown_workers()
                except Exception:  # an iterator already half shut down: nothing left to stop
                    pass


import atexit  # noqa: E402

atexit.register(_stop_loader_threads)
