"""DeepSpeed runs on Ascend through its accelerator; only its CUDA-only parts are reported."""
import deepspeed  # expect: none
from deepspeed.accelerator import get_accelerator  # expect: none
from deepspeed.ops.op_builder import FusedAdamBuilder  # expect: none
from deepspeed.ops.op_builder.builder import CUDAOpBuilder  # expect: none
from deepspeed.ops.transformer import DeepSpeedTransformerLayer, DeepSpeedTransformerConfig  # expect: none
from deepspeed.ops import sparse_attention  # expect: none


class MyKernel(CUDAOpBuilder):  # expect: PK004
    NAME = "my_kernel"  # expect: none


def build(model, args, params):
    engine, opt, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=params)  # expect: none
    fused = FusedAdamBuilder().load()  # expect: none
    builder = get_accelerator().create_op_builder("FusedAdamBuilder")  # expect: none
    config = DeepSpeedTransformerConfig(batch_size=8, hidden_size=1024)  # expect: PK004
    layer = DeepSpeedTransformerLayer(config)  # expect: PK004
    attn = sparse_attention.SparseSelfAttention()  # expect: PK004
    inference = deepspeed.init_inference(model, replace_with_kernel_inject=True)  # expect: PK004
    plain = deepspeed.init_inference(model, replace_with_kernel_inject=False)  # expect: none
    block = deepspeed.ops.transformer.inference.DeepSpeedTransformerInference  # expect: PK004
    zero = deepspeed.zero.Init()  # expect: none
    return engine, opt, fused, builder, layer, attn, inference, plain, block, zero
