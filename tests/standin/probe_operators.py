"""Dispatches operators that public fallback reports name, on the emulated npu; prints what the
device recorded (PROBE {...})."""
import json

import torch
import torch_npu

torch_npu._C.record_ops(True)
a = torch.arange(10, device="npu")
hits = torch.isin(a, torch.tensor([1, 3, 20], device="npu"))
x = torch.randn(4, 8, device="npu", requires_grad=True)
(x @ torch.ones(8, 3, device="npu")).sum().backward()
layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True).to("npu").eval()
with torch.no_grad():
    layer(torch.randn(2, 5, 8, device="npu"))
recorded = torch_npu._C.record_ops(False)
after = torch_npu._C.record_ops(False)
torch.isin(a, a)  # not recorded: recording is off
print("PROBE " + json.dumps({"recorded": recorded, "after": after, "hits": hits.cpu().tolist(),
                             "release": torch_npu.FALLBACK_WARNINGS_RELEASE}))
