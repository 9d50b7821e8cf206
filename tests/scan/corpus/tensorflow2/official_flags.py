"""Official-models style trainer: absl flags whose defaults choose the GPU path, the strategy
helper called with keyword settings, and grappler's automatic mixed precision."""
from absl import flags  # expect: none
import tensorflow as tf  # expect: none

from official.common import distribute_utils  # expect: none

flags.DEFINE_string("distribution_strategy", "mirrored", "tf.distribute strategy to train with")  # expect: TF019
flags.DEFINE_string(name="all_reduce_alg", default="nccl", help="cross-device reduction")  # expect: TF019
flags.DEFINE_boolean("enable_xla", False, "compile the model with XLA")  # expect: none
flags.DEFINE_string("data_dir", "/data/nccl_bench", "where the records are")  # expect: none
FLAGS = flags.FLAGS


def build_strategy(num_gpus):
    if num_gpus == 0:
        return distribute_utils.get_distribution_strategy(distribution_strategy="off")  # expect: none
    return distribute_utils.get_distribution_strategy(
        distribution_strategy="mirrored", num_gpus=num_gpus,  # expect: TF019
        all_reduce_alg="hierarchical_copy")  # expect: TF019


def multi_worker():
    return distribute_utils.get_distribution_strategy(
        distribution_strategy="multi_worker_mirrored", all_reduce_alg="ring")  # expect: TF019


def graph_options(use_amp):
    tf.config.optimizer.set_experimental_options({"auto_mixed_precision": True})  # expect: TF010
    tf.config.optimizer.set_experimental_options({"auto_mixed_precision": False})  # expect: none
    tf.config.optimizer.set_experimental_options({"layout_optimizer": True, "constant_folding": True})  # expect: none
    tf.config.optimizer.set_experimental_options({"auto_mixed_precision": use_amp})  # expect: TF010
    tf.config.optimizer.set_experimental_options(FLAGS.flag_values_dict())  # expect: none
