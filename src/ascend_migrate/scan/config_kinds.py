"""Which JSON/YAML files are launch configs, and which shell scripts build or install.

A JSON or YAML file is read as a config only when it is a known kind (DeepSpeed, Accelerate,
torchrun/launcher settings, maps of launcher flags and environment blocks, Hydra/OmegaConf
training configs, Lightning, Kubernetes/Volcano job specs, Compose services) or a launch script names it; any other data file (datasets,
label maps, results, fixtures) is left alone. Kinds are recognised from the keys the file
defines, a cheap line match that works for both formats without parsing.

A shell script that builds or installs (setup.py runners, wheel/packaging, ROCm or CUDA
toolkit installs, CI) is not a launch script: its CUDA settings describe the build host, so
it is reported for review and never rewritten, and what it runs is not an entry point. The
same holds for any config under a CI or build folder (a workflow YAML, a Compose file next to
a Dockerfile). `is_build_config` is the one decision: the scan strips the fixes of such a
file's findings and lists it, and migrate leaves exactly the listed files alone.
"""
from __future__ import annotations

import re

_KEY = re.compile(r"""^\s*(?:-\s+)?["']?([A-Za-z_][\w.-]*)["']?\s*:(?!//)""", re.M)
_JSON_KEY = re.compile(r'"([A-Za-z_][\w.-]*)"\s*:')

# kind: (keys any of which marks it, keys all of which mark it)
_KINDS: tuple[tuple[str, frozenset[str], frozenset[str]], ...] = (
    ("DeepSpeed", frozenset({"zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size",
                             "communication_data_type", "zero_allow_untested_optimizer"}), frozenset()),
    ("Accelerate", frozenset({"compute_environment", "distributed_type", "deepspeed_config", "fsdp_config"}),
     frozenset()),
    # TensorFlow Model Garden experiment configs (`runtime: {distribution_strategy: mirrored,
    # mixed_precision_dtype: float16}`): before "launcher", which their num_gpus key would also name
    ("TF Model Garden", frozenset({"distribution_strategy", "mixed_precision_dtype"}), frozenset()),
    ("launcher", frozenset({"nproc_per_node", "nnodes", "rdzv_backend", "rdzv_endpoint", "master_addr",
                            "master_port", "dist_backend", "dist_url", "ddp_backend", "distributed_backend",
                            "launcher", "world_size", "local_rank", "num_gpus", "n_gpu", "gpus", "gpu_ids",
                            "cuda_visible_devices", "CUDA_VISIBLE_DEVICES"}), frozenset()),
    # Hugging Face trainer recipes (TRL / alignment-handbook / open-instruct style): the
    # TrainingArguments and model options of a run written as YAML or JSON
    ("Hugging Face training recipe", frozenset({"per_device_train_batch_size", "gradient_accumulation_steps",
                                               "model_name_or_path", "use_liger_kernel", "load_in_4bit",
                                               "load_in_8bit", "attn_implementation", "lora_target_modules"}),
     frozenset()),
    ("Hydra/OmegaConf", frozenset({"hydra", "_target_"}), frozenset()),
    ("Hydra/OmegaConf", frozenset(), frozenset({"defaults"})),
    ("Lightning", frozenset({"trainer", "accelerator", "strategy", "seed_everything"}), frozenset()),

    ("Kubernetes/Volcano job", frozenset(), frozenset({"apiVersion", "kind"})),
    ("Compose services", frozenset(), frozenset({"services", "environment"})),
)


def config_keys(text: str, kind: str) -> set[str]:
    pattern = _JSON_KEY if kind == "json" else _KEY
    return {m.group(1) for m in pattern.finditer(text[:262144])}


# Plain OmegaConf/YAML training configs (no Hydra keys) are recognised by their settings;
# JSON needs one of the kinds above, since JSON is far more often data than configuration.
_YAML_TRAINING_KEYS = frozenset({"device", "devices", "distributed", "backend", "precision", "amp", "cuda"})


# Launcher configs written as a YAML map of a program's command-line flags (`--distributed-backend:
# nccl`), often with an environment block (`NCCL_ALGO: Tree`): two flag keys, or one key naming an
# NCCL or CUDA environment setting, make the file a config. FLAG_MAP_BYTES is the raw-bytes
# pre-check the scan runs first (anything it misses can never be this kind).
_FLAG_KEY = re.compile(r"""^[ \t]*(?:-[ \t]+)?["']?(--[A-Za-z][\w.-]*)["']?[ \t]*:(?=[ \t\r\n]|$)""", re.M)
_ENV_KEY_PREFIXES = ("NCCL_", "CUDA_")
FLAG_MAP_BYTES = re.compile(rb"""^[ \t]*(?:-[ \t]+)?["']?--[A-Za-z]|NCCL_|CUDA_""", re.M)
_FLAG_MAP_LABEL = "launcher flags"


def is_dockerfile(name: str) -> bool:
    """A container build file: `Dockerfile`, `Dockerfile.gpu`, `Dockerfile-cuda`, `train.Dockerfile`,
    `Containerfile` (any case)."""
    lower = name.lower()
    for stem in ("dockerfile", "containerfile"):
        if lower == stem or lower.startswith((stem + ".", stem + "-", stem + "_")) or lower.endswith("." + stem):
            return True
    return False


def known_config_kind(text: str, kind: str) -> str:
    """'DeepSpeed', 'Accelerate', ... for a recognised JSON/YAML config, else ''."""
    if kind == "docker":
        return "Dockerfile"
    keys = config_keys(text, kind)
    for label, any_of, all_of in _KINDS:
        if (any_of and keys & any_of) or (all_of and all_of <= keys):
            return label
    if kind == "yaml" and keys & _YAML_TRAINING_KEYS:
        return "training config"
    if kind == "yaml":
        if any(k.startswith(_ENV_KEY_PREFIXES) and k.isupper() for k in keys):
            return _FLAG_MAP_LABEL
        if len(set(_FLAG_KEY.findall(text[:262144]))) >= 2:
            return _FLAG_MAP_LABEL
    return ""


# starts only where a path starts (a match can begin nowhere else anyway), one class run then
# the suffix: linear on any line (the form with `[...]*[\w-]+` was cubic on a long word)
_CONFIG_REF = re.compile(r"""(?<![\w.$/{}~-])([\w.$/{}~-]*[\w-]\.(?:json|ya?ml))\b""")


def config_references(text: str) -> list[str]:
    """JSON/YAML paths a shell script names (`--deepspeed cfg/ds.json`, `--config-file acc.yaml`)."""
    refs = []
    for line in text.splitlines():
        code = line.split(" #", 1)[0]
        if code.lstrip().startswith("#"):
            continue
        for m in _CONFIG_REF.finditer(code):
            refs.append(m.group(1))
    return refs


def reference_matches(ref: str, rel: str) -> bool:
    """Does the (possibly variable-prefixed) path `ref` name the file at `rel`?"""
    tail = [p for p in ref.split("/") if p and p not in (".", "..") and "$" not in p and "{" not in p and p != "~"]
    if not tail:
        return False
    parts = rel.split("/")
    return parts[-len(tail):] == tail


# --------------------------------------------------------------------------- build scripts
_BUILD_NAME = re.compile(r"(?i)(^|[_.-])(install|build|package|packaging|wheel|wheels|release|publish|"
                         r"compile|rocm|hipify|conda[_-]?build|docker[_-]?build|manylinux|ci)([_.-]|$)")
_CI_NAME = re.compile(r"(?i)(?:^|[_.-])ci(?:[_.-]|$)")
# Folders whose files build, package, install or test the project on a CI host (lower case).
# Not `recipe`: projects keep training recipes there (entry points and their configs); a conda
# recipe's build.sh is caught by its name.
_HOSTED_CI_DIRS = frozenset({".github", ".circleci", ".gitlab", ".buildkite", ".jenkins"})  # CI services' own
CI_DIRS = _HOSTED_CI_DIRS | {"ci", ".ci"}
BUILD_DIRS = frozenset({"packaging", "docker", "dockerfiles", "conda", "conda-recipe", "installer",
                        "build_tools", "wheels"})
_BUILD_COMMAND = re.compile(r"(?m)^[^#\n]*\b(?:setup\.py\s+(?:build|install|bdist\w*|sdist|develop|build_ext)|"
                            r"pip[0-9.]*\s+(?:wheel|install)\b|python[0-9.]*\s+-m\s+(?:build|pip\s+(?:wheel|install))|"
                            r"cmake\b|conda\s+(?:build|install)|apt(?:-get)?\s+install|yum\s+install|auditwheel|twine)")
_TRAIN_LAUNCH = re.compile(r"(?m)^[^#\n]*\b(?:torchrun|deepspeed\s+\S+\.py|accelerate\s+launch|"
                           r"torch\.distributed\.(?:run|launch)|mpirun|srun)\b")


def in_build_folder(rel: str, dirs: frozenset = CI_DIRS | BUILD_DIRS) -> bool:
    return any(p.lower() in dirs for p in rel.split("/")[:-1])


def is_build_config(rel: str, kind: str, text: str, launches: list[tuple[int, str]]) -> bool:
    """A config or shell script that describes a build, install or CI host, not a run.

    A Dockerfile is not, unless it builds a CI image (a CI service's folder holds it, or its name
    says ci: `Dockerfile.ci.dev`): it describes the host a containerised run starts on, in the
    root or a docker/ folder alike (its findings are never rewritten either, see
    text_scanners.scan_config)."""
    if kind == "docker":
        return in_build_folder(rel, _HOSTED_CI_DIRS) or bool(_CI_NAME.search(rel.rsplit("/", 1)[-1]))
    if kind == "sh":
        return is_build_script(rel, text, launches)
    return in_build_folder(rel)


def is_build_script(rel: str, text: str, launches: list[tuple[int, str]]) -> bool:
    """A shell script that builds, packages or installs rather than launching a run."""
    name = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if in_build_folder(rel, _HOSTED_CI_DIRS):
        return True
    if (_BUILD_NAME.search(name) or in_build_folder(rel)) and not _TRAIN_LAUNCH.search(text):
        return True
    training = [t for _, t in launches if not is_build_target(t)]
    return not training and not _TRAIN_LAUNCH.search(text) and bool(_BUILD_COMMAND.search(text))


def is_build_target(target: str) -> bool:
    """`python setup.py ...` and friends run a build, not the program."""
    base = target.rsplit("/", 1)[-1]
    return base in ("setup.py", "build.py", "pip", "build", "setuptools", "wheel", "twine") or base.startswith("pip.")
