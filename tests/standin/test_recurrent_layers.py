"""Recurrent layers train on the npu stand-in to CPU's losses, bit for bit.

torch's composite RNN code chooses its path by device: on a PrivateUse1 tensor LSTM and GRU cells
call fused-cell kernels that exist for CUDA and XPU only (word_language_model's transfer port
died there), and every layer skips CPU's whole-sequence input projection. The stand-in runs these
ops through CPU's own code on host copies; these tests train each kind for several optimizer
steps on both devices and compare every loss and the final weights exactly.
"""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.needs_torch

SCRIPT = '''
import json, sys
import torch
import torch_npu  # noqa: F401  (the stand-in)

KINDS = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}


def train(kind, device, packed=False, **options):
    """A recurrent layer and a linear head, 4 SGD steps on fixed random sequences."""
    torch.manual_seed(0)
    layer = KINDS[kind](6, 8, **options)
    width = (options.get("proj_size") or 8) * (2 if options.get("bidirectional") else 1)
    head = torch.nn.Linear(width, 5)
    model = torch.nn.ModuleList([layer, head]).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(7, 3, 6, generator=g).to(device)
    y = torch.randint(0, 5, (7 * 3,), generator=g).to(device)
    lengths = torch.tensor([7, 5, 2])
    losses = []
    for _ in range(4):
        if packed:
            seq = torch.nn.utils.rnn.pack_padded_sequence(x, lengths)
            out, _ = layer(seq)
            out, _ = torch.nn.utils.rnn.pad_packed_sequence(out, total_length=7)
        else:
            out, _ = layer(x)
        loss = torch.nn.functional.cross_entropy(head(out).flatten(0, 1), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item().hex())
    weights = [p.detach().cpu().flatten().tolist() for p in model.parameters()]
    grads_on = sorted({str(p.grad.device) for p in model.parameters()})
    return {"losses": losses, "weights": weights, "grads_on": grads_on}


def cell_steps(device):
    """nn.LSTMCell and nn.GRUCell unrolled by hand, trained 3 steps."""
    torch.manual_seed(0)
    lstm, gru = torch.nn.LSTMCell(4, 6).to(device), torch.nn.GRUCell(6, 6).to(device)
    params = list(lstm.parameters()) + list(gru.parameters())
    opt = torch.optim.SGD(params, lr=0.2)
    g = torch.Generator().manual_seed(2)
    xs = torch.randn(5, 2, 4, generator=g).to(device)
    losses = []
    for _ in range(3):
        h = c = torch.zeros(2, 6, device=device)
        for x in xs:
            h, c = lstm(x, (h, c))
            h = gru(h, h)
        loss = h.square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item().hex())
    return losses


def outcome(fn):
    try:
        fn()
        return "ran"
    except Exception as exc:  # the class and text are what the test checks
        return type(exc).__name__ + ": " + str(exc).splitlines()[0]


cases = {
    "lstm": ("lstm", False, {}),
    "gru": ("gru", False, {}),
    "rnn_tanh": ("rnn", False, {}),
    "rnn_relu_batch_first": ("rnn", False, {"nonlinearity": "relu", "batch_first": True}),
    "lstm_2_layers_dropout_bidirectional": ("lstm", False, {"num_layers": 2, "dropout": 0.3, "bidirectional": True}),
    "gru_2_layers_dropout": ("gru", False, {"num_layers": 2, "dropout": 0.3}),
    "lstm_packed": ("lstm", True, {}),
    "gru_packed": ("gru", True, {}),
    "lstm_projections": ("lstm", False, {"proj_size": 4}),
}
result = {}
for name, (kind, packed, options) in cases.items():
    result[name] = {"cpu": train(kind, "cpu", packed, **options), "npu": train(kind, "npu", packed, **options)}
result["cells"] = {"cpu": cell_steps("cpu"), "npu": cell_steps("npu")}

lstm = torch.nn.LSTM(3, 4).to("npu")
with torch.inference_mode():
    out, (h, c) = lstm(torch.ones(2, 1, 3, device="npu"))
result["inference_mode_devices"] = sorted({str(t.device) for t in (out, h, c)})
result["mixed_devices"] = outcome(lambda: lstm(torch.ones(2, 1, 3)))
json.dump(result, sys.stdout)
'''


@pytest.fixture(scope="module")
def recurrent(npu_standin, tmp_path_factory) -> dict:
    """Run the script once (all cases) under the stand-in, CPU and npu in one process."""
    where = tmp_path_factory.mktemp("recurrent")
    script = where / "recurrent.py"
    script.write_text(SCRIPT)
    ran = npu_standin.run([str(script)], cwd=where, autocast=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    return json.loads(ran.stdout)


@pytest.mark.parametrize("case", ["lstm", "gru", "rnn_tanh", "rnn_relu_batch_first",
                                  "lstm_2_layers_dropout_bidirectional", "gru_2_layers_dropout",
                                  "lstm_packed", "gru_packed", "lstm_projections"])
def test_layer_trains_to_cpu_losses_and_weights(recurrent, case):
    cpu, npu = recurrent[case]["cpu"], recurrent[case]["npu"]
    assert len(npu["losses"]) == 4
    assert npu["losses"] == cpu["losses"]
    assert npu["weights"] == cpu["weights"]
    assert npu["grads_on"] == ["npu:0"]


def test_cells_train_to_cpu_losses(recurrent):
    assert len(recurrent["cells"]["npu"]) == 3
    assert recurrent["cells"]["npu"] == recurrent["cells"]["cpu"]


def test_results_stay_on_npu_in_inference_mode(recurrent):
    assert recurrent["inference_mode_devices"] == ["npu:0"]


def test_cpu_input_to_an_npu_layer_raises(recurrent):
    assert recurrent["mixed_devices"].startswith("RuntimeError: Expected all tensors to be on the same device")
