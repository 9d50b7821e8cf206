"""Migration of TensorFlow and vLLM projects: the TF Adapter initialisation goes into the entry
points (TF 1.15: npu_bridge; TF2: npu_device opened before the model code), GPU-only memory calls
are dropped, everything else is listed as manual work; vLLM entry points get no transfer_to_npu.
Output parses and a second run changes nothing."""
from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from ascend_migrate.fix.api import migrate

CORPUS = Path(__file__).parent.parent / "scan" / "corpus"


def _project(tmp_path: Path, family: str) -> Path:
    dest = tmp_path / family
    shutil.copytree(CORPUS / family, dest)
    return dest


def _migrate_twice(root: Path):
    first = migrate(root, write=True)
    for path in root.rglob("*.py"):
        ast.parse(path.read_text(encoding="utf-8"), str(path))
    second = migrate(root, write=True)
    assert second.changes == [], [c.message for c in second.changes]
    return first


def test_tf2_entry_point_opens_the_npu_before_model_code(tmp_path):
    root = _project(tmp_path, "tensorflow2")
    result = _migrate_twice(root)
    text = (root / "train_keras.py").read_text()
    body = ast.parse(text).body
    # after the docstring: npu_device first, then the NPU opened, then the rest of the imports
    assert ast.unparse(body[1]) == "import npu_device as npu"
    assert ast.unparse(body[2]) == "npu.open().as_default()"
    assert "import tensorflow as tf" in text.split("npu.open().as_default()", 1)[1]
    assert "set_memory_growth" not in text and "        pass  # expect: TF003" in text
    manual = {c.rule for c in result.manual}
    assert {"TF001", "TF002", "TF004", "TF007", "TF008", "TF010", "TF011", "TF014"} <= manual
    assert "TF003" not in manual


def test_tf1_entry_point_gets_npu_bridge(tmp_path):
    root = _project(tmp_path, "tensorflow1")
    result = _migrate_twice(root)
    text = (root / "train_estimator.py").read_text()
    assert ast.unparse(ast.parse(text).body[1]) == "from npu_bridge.npu_init import *"
    assert "npu_device" not in text and "torch_npu" not in text
    assert {"TF005", "TF009", "TF010"} <= {c.rule for c in result.manual}


def test_vllm_entry_gets_no_transfer_shim(tmp_path):
    root = _project(tmp_path, "vllm_serving")
    (root / "run.py").write_text("from vllm import LLM\n\nif __name__ == '__main__':\n    LLM(model='m')\n")
    result = _migrate_twice(root)
    assert "transfer_to_npu" not in (root / "run.py").read_text()
    assert any(c.rule == "VL001" and "vllm-ascend" in c.message for c in result.manual if c.file == "run.py")


@pytest.mark.parametrize("already", ["import npu_device as npu\nnpu.open().as_default()\n",
                                     "from npu_bridge.npu_init import *\n"])
def test_ported_entry_point_is_left_alone(tmp_path, already):
    (tmp_path / "main.py").write_text(already + "import tensorflow as tf\n\nif __name__ == '__main__':\n    print(tf.__version__)\n")
    assert migrate(tmp_path).changes == []
