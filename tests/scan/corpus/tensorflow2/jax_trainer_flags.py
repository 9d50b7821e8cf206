"""A JAX trainer's absl flags: the same key names mean nothing to TensorFlow here."""
from absl import flags  # expect: none
import jax  # expect: none

flags.DEFINE_string("distribution_strategy", "mirrored", "how replicas are laid out")  # expect: none
flags.DEFINE_bool("enable_xla", True, "always true under JAX")  # expect: none


def replicate(params, enable_xla=True):  # expect: none
    return jax.device_put_replicated(params, jax.local_devices())
