"""A CUDA-style script that dispatches operators public fallback reports name, for
`ascend-migrate ops` (bench/operator_coverage.md). Runs on the CPU as it is; under `ops` its
"cuda" device is the emulated npu.

  isin             torch.isin in a generation-style loop      -> aten::isin.Tensor_Tensor_out
  encoder fast     nn.TransformerEncoderLayer in eval mode    -> aten::_transformer_encoder_layer_fwd
  efficient sdpa   the efficient-attention kernel called as ring attention does
                                                              -> aten::_scaled_dot_product_efficient_attention
  multi-head fast  nn.MultiheadAttention in eval mode         -> aten::_native_multi_head_attention
"""
import torch

dev = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
eos = torch.tensor([2, 7], device=dev)
layer = torch.nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, batch_first=True).to(dev).eval()
attn = torch.nn.MultiheadAttention(16, 2, batch_first=True).to(dev).eval()
with torch.no_grad():
    tokens = torch.randint(0, 10, (2, 1), device=dev)
    for _ in range(4):  # a generation loop: stop when every row produced an end token
        done = torch.isin(tokens[:, -1], eos)
        tokens = torch.cat([tokens, torch.randint(0, 10, (2, 1), device=dev)], dim=1)
    x = torch.randn(2, 5, 16, device=dev)
    y = layer(x)
    z, _ = attn(x, x, x, need_weights=False)
    q = torch.randn(1, 2, 4, 8, device=dev)
    try:
        torch.ops.aten._scaled_dot_product_efficient_attention(q, q, q, None, False)
        print("efficient attention ran")
    except (RuntimeError, NotImplementedError) as exc:
        print("efficient attention failed:", str(exc).splitlines()[0][:90])
print("done", dev, tuple(y.shape), tuple(z.shape), bool(done.any()))
