"""A shape check kept next to the recipes; its main block parses a fixed list, as a demo does."""
import torch

from tunekit.options import OptionParser

if __name__ == "__main__":
    opts = OptionParser().parse_args_and_config([])
    print(torch.ones(2, 3, device="cuda").shape, opts)
