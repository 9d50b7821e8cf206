"""transfer_to_npu wraps torch.load and replaces "cuda" with "npu" in every positional str
argument, to map device names; a checkpoint path that contains "cuda" is a str too, so the
transfer port opened another file. The port passes such a path as a pathlib.Path, which the
wrapper leaves alone."""
import pytest

from ascend_migrate.fix.rewrite import Options, rewrite_python
from ascend_migrate.knowledge.base import load_knowledge

torch = pytest.importorskip("torch")

KB = load_knowledge()

SCRIPT = '''import torch


def resume(root):
    return torch.load(f"{root}/cuda_warmup.pt", map_location="cpu")
'''


def _patched_load(real_load):
    """What transfer_to_npu's torch.load wrapper does to positional arguments (torch_npu
    2.13.0, contrib/transfer_to_npu.py: _wrapper_cuda over torch_fn_white_list, which names load)."""
    def load(*args, **kwargs):
        args = tuple(a.replace("cuda", "npu") if isinstance(a, str) and "cuda" in a else a for a in args)
        return real_load(*args, **kwargs)
    return load


def _resume(source: str, root: str):
    namespace: dict = {}
    exec(compile(source, "resume.py", "exec"), namespace)
    return namespace["resume"](str(root))


def test_the_port_loads_the_same_file_under_the_patch(tmp_path, monkeypatch):
    torch.save({"step": 7}, tmp_path / "cuda_warmup.pt")
    torch.save({"step": 999}, tmp_path / "npu_warmup.pt")  # a different run's file the patch would pick
    port = rewrite_python(KB, "resume.py", SCRIPT, Options(style="transfer")).text
    assert 'torch.load(pathlib.Path(f"{root}/cuda_warmup.pt"), map_location="cpu")' in port
    assert _resume(SCRIPT, tmp_path) == {"step": 7}  # the original on a CUDA host
    monkeypatch.setattr(torch, "load", _patched_load(torch.load))
    assert _resume(SCRIPT, tmp_path) == {"step": 999}  # unported under the patch: another file
    assert _resume(port, tmp_path) == {"step": 7}  # the port: the same file


def test_the_agnostic_style_leaves_the_path_alone():
    assert rewrite_python(KB, "resume.py", SCRIPT, Options(style="agnostic")).text == SCRIPT
