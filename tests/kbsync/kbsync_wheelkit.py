"""Build small fake torch_npu wheels for the reader tests."""
from __future__ import annotations

import textwrap
import zipfile
from pathlib import Path
from typing import Mapping, Union

Content = Union[str, bytes]

NPU_INIT = '''
from .extra import helper_names
_base = ["synchronize", "device_count", "is_available"]
__all__ = _base + ["Stream", "Event"]
__all__ += ["NPUGraph"]
__all__.extend(["graph"])
__all__.append("mem_get_info")
'''

AMP_INIT = '''
__all__ = ["autocast", "GradScaler"]
'''

RANDOM = '''
__all__ = ["manual_seed", "get_rng_state"]
'''

PROFILER_INIT = '''
from .profiler import profile
from .activity import ProfilerActivity
'''

# A transfer_to_npu in the style of recent releases: helper that wraps a list by setattr,
# patch tables applied through a locally imported _apply_patches, conditional and
# deferred patches, and a wrapper that re-assigns torch.cuda.is_available at call time.
MODERN_TRANSFER = '''
import warnings
from functools import wraps
import torch
import torch_npu
from torch.utils import cpp_extension

torch_fn_white_list = ['zeros', 'ones'] + ['randn']
torch_tensor_fn_white_list = ['to', 'new_empty']
torch_module_fn_white_list = ['to']
torch_cuda_fn_white_list = ['set_device', 'synchronize']
torch_distributed_fn_white_list = ['__init__']
device_kwargs_list = ['device', 'map_location']
is_available = torch.cuda.is_available


def _wrapper_cuda(fn):
    @wraps(fn)
    def decorated(*args, **kwargs):
        return fn(*args, **kwargs)
    return decorated


def _wrapper_hccl(fn):
    @wraps(fn)
    def decorated(*args, **kwargs):
        return fn(*args, **kwargs)
    return decorated


def _wrapper_libraries_func(fn):
    @wraps(fn)
    def decorated(*args, **kwargs):
        patched = torch.cuda.is_available
        torch.cuda.is_available = is_available
        result = fn(*args, **kwargs)
        torch.cuda.is_available = patched
        return result
    return decorated


def _compose(*wrappers):
    def compose(f):
        for w in wrappers:
            f = w(f)
        return f
    return compose


def _device_wrapper(enter_fn, white_list):
    for fn_name in white_list:
        fn = getattr(enter_fn, fn_name, None)
        if fn:
            setattr(enter_fn, fn_name, _wrapper_cuda(fn))


def _jit_script(obj, *args, **kwargs):
    return obj


def _patch_jit_script():
    torch.jit.script = _jit_script


def _never_called():
    torch.cuda.never = None


def _patch_cuda():
    patches = [
        ['cuda', torch_npu.npu], ['cuda.amp', torch_npu.npu.amp],
        ['cuda.random', torch_npu.npu.random],
        ['cuda.amp.common', torch_npu.npu.amp.common],
    ]
    from torch_npu._init.patches import _apply_patches
    _apply_patches(patches)


def _patch_profiler():
    patches = [
        ['profiler.profile', torch_npu.profiler.profile],
        ['profiler.ProfilerActivity.CUDA', torch_npu.profiler.ProfilerActivity.NPU],
    ]
    from torch_npu._init.patches import _apply_patches
    _apply_patches(patches)


def _init():
    from torch.distributed.checkpoint import filesystem
    _patch_cuda()
    _device_wrapper(torch.cuda, torch_cuda_fn_white_list)
    _device_wrapper(torch, torch_fn_white_list)
    _device_wrapper(torch.Tensor, torch_tensor_fn_white_list)
    _device_wrapper(torch.nn.Module, torch_module_fn_white_list)
    _device_wrapper(torch.fft, ['fftfreq'])
    _patch_profiler()

    def _lazy():
        torch.cuda.default_generators = torch_npu.npu.default_generators

    torch_npu.npu._lazy_call(_lazy)
    torch.cuda.DoubleTensor = torch.npu.FloatTensor
    torch.Tensor.cuda = torch.Tensor.npu
    torch.distributed.init_process_group = _compose(_wrapper_cuda, _wrapper_hccl)(
        torch.distributed.init_process_group)
    if hasattr(torch.distributed, 'init_device_mesh'):
        torch.distributed.device_mesh.init_device_mesh = _wrapper_cuda(torch.distributed.device_mesh.init_device_mesh)
    torch.distributed.distributed_c10d._new_group_with_tag = _wrapper_hccl(
        torch.distributed.distributed_c10d._new_group_with_tag)
    _device_wrapper(torch.nn.parallel.DistributedDataParallel, torch_distributed_fn_white_list)
    filesystem._OverlappingCpuLoader.__init__ = _jit_script
    torch.utils.cpp_extension = cpp_extension
    setattr(torch.cuda, 'CUDAGraph', torch.npu.NPUGraph)
    _patch_jit_script()


_init()
'''

APIS_CONFIG = '''{
  "transformers": {"version": "4.32.0", "apis": {
    "transformers.trainer.Trainer._load_rng_state": "method",
    "transformers.utils.import_utils.is_torch_cuda_available": "function"}},
  "peft": {"version": "0.5.0", "apis": {"peft.utils.other.infer_device": "function"}}
}
'''

# An older style: a plain loop in _init, a torch_npu._apply_patches attribute call, renamed
# lists, no third-party config, the whole module under torch_npu/utils/.
OLD_TRANSFER = '''
import torch
import torch_npu

torch_fn_allow = ['zeros', 'empty']
tensor_allow = ['to']

def _wrapper_cuda(fn):
    return fn

def _init():
    patchs = [['cuda', torch_npu.npu]]
    torch_npu._apply_patches(patchs)
    for fn_name in torch_fn_allow:
        setattr(torch, fn_name, _wrapper_cuda(getattr(torch, fn_name)))
    for name in tensor_allow:
        setattr(torch.Tensor, name, _wrapper_cuda(getattr(torch.Tensor, name)))
    torch.distributed.init_process_group = _wrapper_cuda(torch.distributed.init_process_group)

_init()
'''


def base_files(version: str = "9.9.0") -> dict[str, Content]:
    return {
        "torch_npu/__init__.py": "",
        "torch_npu/version.py": f"__version__ = '{version}'\ngit_version = 'abc123'\n",
        f"torch_npu-{version}.dist-info/METADATA": (
            f"Metadata-Version: 2.1\nName: torch-npu\nVersion: {version}\n"
            "Requires-Dist: torch ==9.9.0\nRequires-Dist: numpy\n\nlong text\n"
        ),
        "torch_npu/npu/__init__.py": NPU_INIT,
        "torch_npu/npu/extra.py": "helper_names = []\n",
        "torch_npu/npu/amp/__init__.py": AMP_INIT,
        "torch_npu/npu/amp/common.py": "def amp_definitely_not_available():\n    return True\n",
        "torch_npu/npu/random.py": RANDOM,
        "torch_npu/profiler/__init__.py": PROFILER_INIT,
        "torch_npu/profiler/profiler.py": "class profile: pass\n",
        "torch_npu/profiler/activity.py": "class ProfilerActivity: NPU = 1\n",
        "torch_npu/_init/core/optional_features.py": (
            "import os\nflag = os.getenv('TORCH_TRANSFER_TO_NPU', '0')\n"
        ),
    }


def modern_files(version: str = "9.9.0") -> dict[str, Content]:
    files = base_files(version)
    files["torch_npu/contrib/__init__.py"] = ""
    files["torch_npu/contrib/transfer_to_npu.py"] = MODERN_TRANSFER + "\nconfig = 'apis_config.json'\n"
    files["torch_npu/contrib/apis_config.json"] = APIS_CONFIG
    return files


def old_files(version: str = "1.0.0.post3") -> dict[str, Content]:
    files = base_files(version)
    del files["torch_npu/_init/core/optional_features.py"]
    files["torch_npu/utils/transfer_to_npu.py"] = OLD_TRANSFER
    return files


def write_wheel(directory: Path, files: Mapping[str, Content], name: str = "torch_npu-9.9.0-py3-none-any.whl") -> Path:
    path = Path(directory) / name
    with zipfile.ZipFile(path, "w") as zf:
        for member, content in sorted(files.items()):
            data = content.encode("utf-8") if isinstance(content, str) else content
            if isinstance(content, str):
                data = textwrap.dedent(content).encode("utf-8")
            zf.writestr(member, data)
    return path


def write_tree(directory: Path, files: Mapping[str, Content]) -> Path:
    root = Path(directory)
    for member, content in files.items():
        target = root / member
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_text(textwrap.dedent(content), encoding="utf-8")
        else:
            target.write_bytes(content)
    return root
