"""A model whose forward pass masks its input with torch.isin (no NPU kernel before torch_npu's
6.0.0 op-plugin line), validated through an entry."""
import torch


class Gated(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)

    def forward(self, x):
        positions = torch.arange(8, device=x.device) % 5
        keep = torch.isin(positions, torch.tensor([1, 3], device=x.device))
        return self.lin(x * keep.float())


def validation_entry(device="cpu"):
    torch.manual_seed(0)
    return Gated(), (torch.randn(2, 8),)
