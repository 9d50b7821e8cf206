"""Every version, package name, path and switch the TensorFlow and vLLM rules tell users is pinned
to the source notes they come from (tensorflow_on_ascend.md, vllm_on_ascend.md in the shared
facts folder next to the checkout).

Each row: (text the knowledge base emits, facts file, text of that file that states it). The
first half always runs (a row whose text the knowledge base no longer emits is stale); the second
half runs where the facts folder is present.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ascend_migrate.knowledge.base import load_knowledge

TF = "tensorflow_on_ascend.md"
VL = "vllm_on_ascend.md"

PINS = [
    # TensorFlow versions, wheels, Python
    ("tensorflow-cpu==1.15", TF, "pip3 install tensorflow-cpu==1.15"),
    ("tensorflow-cpu==2.6.5", TF, "pip3 install tensorflow-cpu==2.6.5"),
    ("npu_bridge-1.15.0", TF, "npu_bridge-1.15.0-"),
    ("npu_device-2.6.5", TF, "npu_device-2.6.5-"),
    ("npu_device-2.6.5-py3-none-manylinux2014_<arch>.whl", TF, "npu_device-2.6.5-py3-none-manylinux2014_<arch>.whl"),
    ("--force-reinstall -t ${TFPLUGIN_INSTALL_PATH}", TF, "--force-reinstall -t \"${TFPLUGIN_INSTALL_PATH}\""),
    ("npu_bridge 1.15.0 (Python 3.7)", TF, "TF 1.15: Python 3.7.x"),
    ("npu_device 2.6.5 (Python 3.7-3.9)", TF, "TF 2.6.5: 3.7.x, 3.8.x, 3.9.x"),
    ("==1.15.*", TF, "Only TF **1.15**"),
    ("==2.6.5", TF, "TF **2.6.5**"),
    # TensorFlow adapter APIs and options
    ("npu.open().as_default()", TF, "npu.open().as_default()"),
    ("ASCEND_DEVICE_ID", TF, "`ASCEND_DEVICE_ID` = logical device"),
    ("ASCEND_RT_VISIBLE_DEVICES", TF, "`ASCEND_RT_VISIBLE_DEVICES` (CUDA_VISIBLE_DEVICES analogue"),
    ("RANK_TABLE_FILE", TF, "`RANK_SIZE>1` requires `RANK_TABLE_FILE` and `RANK_ID`"),
    ("/job:localhost/replica:0/task:0/device:NPU:<id>", TF, "/job:localhost/replica:0/task:0/device:NPU:<id>"),
    ("graph_memory_max_size", TF, "`graph_memory_max_size`"),
    ("variable_memory_max_size", TF, "`variable_memory_max_size`"),
    ("NpuOptimizer", TF, 'custom_op.name = "NpuOptimizer"'),
    ('custom_op.parameter_map["use_off_line"].b = True', TF, 'custom_op.parameter_map["use_off_line"].b = True'),
    ("remapping = RewriterConfig.OFF", TF, "remapping = RewriterConfig.OFF"),
    ("npu_config_proto(config_proto=...)", TF, "npu_config_proto(config_proto=…)"),
    ("npu_device.compat.v1.SessionConfigBuilder", TF, "`npu_device.compat.v1.SessionConfigBuilder`"),
    ("npu_distributed_optimizer_wrapper", TF, "npu_distributed_optimizer_wrapper(optimizer)"),
    ("npu_strategy.NPUStrategy()", TF, "`npu_strategy.NPUStrategy()`"),
    ("npu.distribute.broadcast(model.trainable_variables)", TF, "npu.distribute.broadcast(model.trainable_variables)"),
    ('npu.distribute.all_reduce(grads, "mean")', TF, 'npu.distribute.all_reduce(grads, "mean")'),
    ("npu_distributed_keras_optimizer_wrapper", TF, "npu.distribute.npu_distributed_keras_optimizer_wrapper(opt)"),
    ("shard_and_rebatch_dataset", TF, "npu.distribute.shard_and_rebatch_dataset(dataset, global_bs)"),
    ("hccl_ops.allreduce", TF, "`hccl_ops.allreduce/allgather/broadcast/all_to_all_v`"),
    ("npu_ops.initialize_system", TF, "`npu_ops.initialize_system`"),
    ("get_rank_size/get_local_rank_size/get_rank_id/get_local_rank_id", TF, "`get_rank_size()/get_local_rank_size()/get_rank_id()/get_local_rank_id()`"),
    ("NPUBroadcastGlobalVariablesHook", TF, "NPUBroadcastGlobalVariablesHook(0"),
    ("NPUBroadcastGlobalVariablesCallback", TF, "NPUBroadcastGlobalVariablesCallback(root_rank=0)"),
    ("precision_mode = 'allow_mix_precision'", TF, "npu.global_options().precision_mode = 'allow_mix_precision'"),
    ("allow_fp32_to_fp16", TF, "Atlas training series `allow_fp32_to_fp16`"),
    ("must_keep_origin_dtype", TF, "Atlas A2 `must_keep_origin_dtype`"),
    ("precision_mode_v2", TF, 'custom_op.parameter_map["precision_mode_v2"]'),
    ("npu.train.optimizer.NpuLossScaleOptimizer", TF, "npu.train.optimizer.NpuLossScaleOptimizer"),
    ("NpuExperimentalLossScaleOptimizer", TF, "NpuExperimentalLossScaleOptimizer"),
    ("FixedLossScaleManager", TF, "`FixedLossScaleManager(loss_scale=...)`"),
    ("ExponentialUpdateLossScaleManager(init_loss_scale=..., incr_every_n_steps=..., incr_ratio=...)", TF,
     "ExponentialUpdateLossScaleManager(init_loss_scale=…(default 2**15), incr_every_n_steps=…(2000), incr_ratio=…(2))"),
    ("NPULossScaleOptimizer", TF, "NPULossScaleOptimizer(opt, loss_scale_manager"),
    ("Skip xla compile tf function", TF, '"Skip xla compile tf function … on npu"'),
    ("global_jit_level OFF", TF, "`global_jit_level=*` | `OFF`"),
    ("jit_scope(compile_ops=False)", TF, "jit_scope(...)` → `compile_ops=False`"),
    ("DT_VARIANT", TF, "float64 / complex64 / complex128 / DT_VARIANT not supported"),
    ("NPUEstimator(model_fn=...", TF, "`NPUEstimator(model_fn=..., config=npu_config, model_dir=...)`"),
    ("NPURunConfig", TF, "`NPURunConfig(iterations_per_loop=1, session_config=..."),
    ("NPUEstimatorSpec", TF, "| `tf.estimator.EstimatorSpec` | `NPUEstimatorSpec` |"),
    ("save_checkpoints_secs", TF, "`save_checkpoints_secs` not allowed multi-device"),
    ("npu_run_config_init(run_config=...)", TF, "`config=npu_run_config_init(run_config=<orig>)`"),
    ("npu_device.compat.enable_v1()", TF, "npu_device.compat.enable_v1()"),
    ("TF_FORCE_GPU_ALLOW_GROWTH", TF, "`TF_FORCE_GPU_ALLOW_GROWTH=true` env"),
    ("npu.global_options().deterministic", TF, "`deterministic`"),
    # vLLM on Ascend
    ("Platform plugin ascend is activated", VL, "`Platform plugin ascend is activated`"),
    ("Failed to infer device type", VL, "`RuntimeError: Failed to infer device type`"),
    ("source /usr/local/Ascend/ascend-toolkit/set_env.sh", VL, "source /usr/local/Ascend/ascend-toolkit/set_env.sh"),
    ("source /usr/local/Ascend/nnal/atb/set_env.sh", VL, "source /usr/local/Ascend/nnal/atb/set_env.sh"),
    ("libatb.so", VL, "libatb.so: cannot open shared object file"),
    ("VLLM_WORKER_MULTIPROC_METHOD=spawn", VL, "`VLLM_WORKER_MULTIPROC_METHOD=spawn`"),
    ("pip check", VL, "run `pip check`"),
    ("removed in vLLM v0.10", VL, "removed in vLLM v0.10 [VI#21349]"),
    ("--quantization ascend", VL, "`--quantization ascend` for ModelSlim weights"),
    ("W8A8, W8A8_DYNAMIC, W4A8_DYNAMIC, W4A16", VL, "(W8A8, W8A8_DYNAMIC, W8A8FP8_DYNAMIC, W4A8_DYNAMIC, W4A16)"),
    ("FP8 needs Ascend 950 (A5)", VL, "FP8 only on Ascend 950 (A5)"),
    ("NotImplementedError", VL, "`get_quant_method` raises NotImplementedError"),
    ("FULL_AND_PIECEWISE", VL, "default `FULL_AND_PIECEWISE`"),
    ("cudagraph_capture_sizes", VL, "`cudagraph_capture_sizes`"),
    ("max_cudagraph_capture_size", VL, "`max_cudagraph_capture_size`"),
    ("FULL_DECODE_ONLY", VL, "use `FULL_DECODE_ONLY`"),
    ("207008", VL, 'error 207008 "Stream resources are insufficient"'),
    ("removed in v0.12.0rc1", VL, "removed v0.12.0rc1"),
    ("FIA by default, PA via additional_config pa_shape_list", VL, "FIA is the default op; PA can be forced per batch size"),
    ("V0 was removed from vllm-ascend in v0.10.0rc1", VL, "V0 removed from vllm-ascend v0.10.0rc1"),
    ("VLLM_ASCEND_ENABLE_TOPK_TOPP_OPTIMIZATION", VL, "`VLLM_ASCEND_ENABLE_TOPK_TOPP_OPTIMIZATION` (v0.12.0rc1)"),
    ("VLLM_ASCEND_ENABLE_DENSE_OPTIMIZE", VL, "`VLLM_ASCEND_ENABLE_DENSE_OPTIMIZE` (v0.13.0, use `VLLM_ASCEND_ENABLE_PREFETCH_MLP`)"),
    ("VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL", VL, "`VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL`\n(v0.21.0rc1, use `additional_config.enable_dsa_cp`)"),
    ("ASCEND_BUFFER_POOL", VL, "`ASCEND_BUFFER_POOL` (v0.23.0)"),
    ("RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1", VL, "`RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1`"),
    ("vllm-ascend X.Y.Z pairs with vLLM X.Y.Z", VL, "stable vllm-ascend X.Y.Z pairs with vLLM X.Y.Z"),
    ("installing vllm-ascend reinstalls torch_npu", VL, "Installing vllm-ascend overwrites torch_npu"),
    # compatibility matrix rows: (vllm-ascend, CANN, torch / torch_npu) exactly as emitted
    ("vllm-ascend v0.23.0, CANN 9.1.0, torch 2.10.0 / torch_npu 2.10.0.post4", VL,
     "| v0.23.0 | v0.23.0 | >=3.10,<3.13 | 9.1.0 | 2.10.0 / 2.10.0.post4 |"),
    ("vllm-ascend v0.22.1rc1, CANN 9.0.0, torch 2.10.0 / torch_npu 2.10.0", VL,
     "| v0.21.0rc1 / v0.22.1rc1 | v0.21.0 / v0.22.1 | >=3.10,<3.13 | 9.0.0 | 2.10.0 / 2.10.0 |"),
    ("vllm-ascend v0.21.0rc1, CANN 9.0.0, torch 2.10.0 / torch_npu 2.10.0", VL,
     "| v0.21.0rc1 / v0.22.1rc1 | v0.21.0 / v0.22.1 | >=3.10,<3.13 | 9.0.0 | 2.10.0 / 2.10.0 |"),
    ("vllm-ascend v0.18.0, CANN 8.5.1, torch 2.9.0 / torch_npu 2.9.0.post1+git4c901a4", VL,
     "| v0.18.0 | v0.18.0 | >=3.10,<3.12 | 8.5.1 | 2.9.0 / 2.9.0.post1+git4c901a4 |"),
    ("vllm-ascend v0.13.0, CANN 8.5.0, torch 2.8.0 / torch_npu 2.8.0.post2", VL,
     "| v0.13.0 | v0.13.0 | >=3.10,<3.12 | 8.5.0 | 2.8.0 / 2.8.0.post2 |"),
    ("vllm-ascend v0.11.0, CANN 8.3.RC2, torch 2.7.1 / torch_npu 2.7.1.post1", VL,
     "| v0.11.0 | v0.11.0 | >=3.9,<3.12 | 8.3.RC2 | 2.7.1 / 2.7.1.post1 |"),
    ("vllm-ascend v0.9.1, CANN 8.2.RC1, torch 2.5.1 / torch_npu 2.5.1.post1", VL,
     "| v0.9.1 | v0.9.1 | >=3.9,<3.12 | 8.2.RC1 | 2.5.1 / 2.5.1.post1 |"),
    ("vllm-ascend v0.7.3, CANN 8.1.RC1, torch 2.5.1 / torch_npu 2.5.1 (needs mindie-turbo)", VL,
     "| v0.7.3 | v0.7.3 | >=3.9,<3.12 | 8.1.RC1 | 2.5.1 / 2.5.1 | N/A (needs `mindie-turbo`) |"),
]

KB = load_knowledge()


def _kb_text() -> str:
    parts = []
    for rule in KB.rules.values():
        if rule.category in ("tensorflow", "vllm"):
            parts += [rule.npu, rule.message, rule.why, rule.how, rule.before, rule.after, repr(rule.match)]
    parts += [p.guidance for p in KB.packages] + [f.guidance for f in KB.frameworks]
    return "\n".join(" ".join(p.split()) for p in parts)


def _facts_dir() -> Path | None:
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "shared" / "facts"
        if (candidate / TF).exists() and (candidate / VL).exists():
            return candidate
    return None


def test_every_pinned_fact_is_still_emitted():
    text = _kb_text()
    stale = [emitted for emitted, _, _ in PINS if " ".join(emitted.split()) not in text]
    assert not stale, f"pinned facts the knowledge base no longer emits: {stale}"


def test_every_matrix_row_the_pairing_rule_emits_is_pinned():
    rule = KB.rule("VL008")
    pinned = {emitted for emitted, _, _ in PINS}
    assert set(rule.match["supported"].values()) <= pinned


@pytest.mark.skipif(_facts_dir() is None, reason="the shared facts folder is not next to this checkout")
def test_every_pinned_fact_is_in_its_source_notes():
    folder = _facts_dir()
    assert folder is not None
    texts = {name: (folder / name).read_text(encoding="utf-8") for name in (TF, VL)}
    missing = [(emitted, source) for emitted, name, source in PINS if source not in texts[name]]
    assert not missing, missing


def test_fast_yaml_loader_reads_every_knowledge_file_like_the_python_one():
    """load_yaml uses libyaml when present; it must give the same data as the pure-Python
    safe loader on every YAML file the package ships."""
    import yaml

    from ascend_migrate.knowledge.loader import SAFE_LOADER, load_yaml

    package = Path(__file__).resolve().parents[2] / "src" / "ascend_migrate"
    files = sorted(package.rglob("*.yaml"))
    assert len(files) >= 5
    for path in files:
        assert load_yaml(path) == load_yaml(path, loader=yaml.SafeLoader), path
    assert SAFE_LOADER in (getattr(yaml, "CSafeLoader", None), yaml.SafeLoader)
