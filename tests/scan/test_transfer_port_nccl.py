"""In the entry module of a transfer port, `init_process_group(backend="nccl")` is what the
imported patch maps to hccl: information, not a warning. Without the patch, or spelled so that the
patch misses it, it stays a warning."""
from ascend_migrate.knowledge.base import load_knowledge
from ascend_migrate.scan.engine import Job, analyse

KB = load_knowledge()
PATCH = "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu\n"
BODY = ('import torch\nimport torch.distributed as dist\n{patch}\n\n'
        'def setup():\n    dist.init_process_group(backend={backend})\n')


def _ds001(source: str) -> list[tuple[str, str]]:
    result = analyse(Job("train.py", "python"), source.encode(), KB)
    return [(f.severity, f.message) for f in result.findings if f.rule == "DS001"]


def test_the_port_entry_module_hears_it_as_information():
    [(severity, message)] = _ds001(BODY.format(patch=PATCH, backend='"nccl"'))
    assert severity == "info" and "maps it to hccl" in message


def test_without_the_patch_it_is_a_warning():
    [(severity, message)] = _ds001(BODY.format(patch="", backend='"nccl"'))
    assert severity == "warning" and "maps it to hccl" not in message


def test_a_spelling_the_patch_misses_stays_a_warning_even_in_the_port():
    [(severity, _)] = _ds001(BODY.format(patch=PATCH, backend='"NCCL"'))
    assert severity == "warning"
