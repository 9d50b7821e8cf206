"""Which JSON/YAML files are configs, which shell scripts build rather than launch."""
import pytest

from ascend_migrate.scan.config_kinds import (config_references, is_build_script, known_config_kind,
                                              reference_matches)
from ascend_migrate.scan.text_scanners import launched_scripts


@pytest.mark.parametrize("kind, text, label", [
    ("json", '{"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 3}}', "DeepSpeed"),
    ("yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\n", "Accelerate"),
    ("yaml", "nproc_per_node: 8\nrdzv_backend: c10d\n", "launcher"),
    ("yaml", "defaults:\n  - model: gpt\n  - _self_\ntrainer:\n  devices: 8\n", "Hydra/OmegaConf"),
    ("yaml", "model:\n  _target_: pkg.Model\n", "Hydra/OmegaConf"),
    ("yaml", "trainer:\n  accelerator: gpu\n  strategy: ddp\n", "Lightning"),
    ("yaml", "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nspec:\n  tasks: []\n", "Kubernetes/Volcano job"),
    ("yaml", "optim:\n  lr: 0.1\ndevice: cuda\n", "training config"),
    ("json", '{"rows": [{"text": "ran with nccl", "device": "cuda"}]}', ""),
    ("yaml", "labels:\n  - nccl\n  - cuda\n", ""),
    # launcher configs written as maps of command-line flags, with or without an environment block
    ("yaml", "MODEL_ARGS:\n  --num-layers: 12\n  --distributed-backend: nccl\n", "launcher flags"),
    ("yaml", "- --device: cuda\n- '--eval-iters': 10\n", "launcher flags"),
    ("yaml", "ENV_VARS:\n  NCCL_ALGO: Tree\nMODEL_ARGS: {}\n", "launcher flags"),
    ("yaml", "notes:\n  - run with --distributed-backend nccl\n  - --seed: 1\n", ""),
    ("yaml", "---\nname: a\n---\nname: b\n", ""),
    ("yaml", "cells:\n  nccl_case: 1\n  Cuda_hint: x\n", ""),
])
def test_known_config_kinds(kind, text, label):
    assert known_config_kind(text, kind) == label


def test_references_from_a_launch_script_match_by_path_tail():
    script = ("deepspeed train.py --deepspeed $CFG_DIR/zero2.json \\\n  --config configs/run.yaml  # see notes.yaml\n")
    refs = config_references(script)
    assert refs == ["$CFG_DIR/zero2.json", "configs/run.yaml"]
    assert reference_matches(refs[0], "ds/zero2.json")
    assert reference_matches(refs[1], "exp/configs/run.yaml")
    assert not reference_matches(refs[1], "configs/other.yaml")
    assert not reference_matches("$X/${Y}.json", "a.json")


@pytest.mark.parametrize("rel, text, build", [
    ("scripts/install_rocm.sh", "export CUDA_VISIBLE_DEVICES=0\npython setup.py install\n", True),
    ("make_wheels.sh", "CUDA_VISIBLE_DEVICES='' python setup.py bdist_wheel\n", True),
    (".github/workflows/gpu.sh", "torchrun --nproc_per_node 2 train.py\n", True),
    ("docker/entrypoint.sh", "torchrun --nproc_per_node 8 train.py\n", False),
    ("run.sh", "pip install -r requirements.txt\ntorchrun --nproc_per_node 8 train.py\n", False),
    ("prepare.sh", "pip install -e .\ncmake ..\n", True),
    ("train_dist.sh", "python train.py --dist\n", False),
    ("install_and_train.sh", "python -m torch.distributed.run --nproc_per_node 2 main.py\n", False),
])
def test_build_scripts(rel, text, build):
    assert is_build_script(rel, text, launched_scripts(text)) is build


def test_flag_map_configs_are_scanned_and_plain_data_is_not():
    """The corpus's flag-map launcher configs count as configs end to end (their findings are kept);
    a data file that merely mentions nccl does not."""
    from pathlib import Path

    from ascend_migrate.knowledge.base import load_knowledge
    from ascend_migrate.scan.engine import analyse, classify

    kb = load_knowledge()
    corpus = Path(__file__).parent / "corpus" / "launcher_flags"
    for path in sorted(corpus.glob("*.yaml")):
        result = analyse(classify(path.name), path.read_bytes(), kb)
        assert result.findings and not result.data_file, path.name
    data = analyse(classify("runs.yaml"), b"runs:\n  - name: nccl sweep\n    backend_used: nccl\n", kb)
    assert data.findings and data.data_file  # nccl is found, but the file is data: the walk drops it


def test_dockerfiles_are_run_hosts_unless_they_build_a_ci_image():
    from ascend_migrate.scan.config_kinds import is_build_config, is_dockerfile

    for name in ("Dockerfile", "dockerfile", "Dockerfile.gpu", "Dockerfile-cuda", "train.Dockerfile", "Containerfile"):
        assert is_dockerfile(name), name
    for name in ("dockerfiles", "Dockerfiles.txt", "my_dockerfile_notes", "docker-compose.yml"):
        assert not is_dockerfile(name), name
    assert not is_build_config("docker/Dockerfile", "docker", "FROM python:3.11\n", [])
    assert not is_build_config("Dockerfile", "docker", "RUN pip install -r requirements.txt\n", [])
    assert is_build_config("docker/Dockerfile.ci.dev", "docker", "FROM python:3.11\n", [])
    assert is_build_config(".github/docker/Dockerfile", "docker", "FROM python:3.11\n", [])
