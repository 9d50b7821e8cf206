"""A tiny classifier and a helper that uploads its weights."""
from hubtool.model import TinyClassifier
from hubtool.push_to_hub import push_weights

__all__ = ["TinyClassifier", "push_weights"]
