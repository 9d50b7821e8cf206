"""TF 1.x ResNet-style trainer: XLA through the session's jit level, contrib loss scaling, Horovod."""
import horovod.tensorflow as hvd  # expect: none
import tensorflow as tf  # expect: none
from tensorflow.core.protobuf import config_pb2  # expect: none


def session_config(use_xla):
    config = tf.compat.v1.ConfigProto(allow_soft_placement=True)  # expect: TF005
    if use_xla:
        config.graph_options.optimizer_options.global_jit_level = tf.compat.v1.OptimizerOptions.ON_1  # expect: TF013
    else:
        config.graph_options.optimizer_options.global_jit_level = tf.compat.v1.OptimizerOptions.OFF  # expect: none
    return config


def aggressive_config():
    config = config_pb2.ConfigProto()  # expect: none
    config.graph_options.optimizer_options.global_jit_level = config_pb2.OptimizerOptions.ON_2  # expect: TF013
    config.graph_options.optimizer_options.global_jit_level = config_pb2.OptimizerOptions.DEFAULT  # expect: none
    return config


def build_optimizer(learning_rate, fp16):
    opt = tf.train.MomentumOptimizer(learning_rate, 0.9)  # expect: none
    if fp16:
        manager = tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager(2 ** 15, 2000)  # expect: TF011
        fixed = tf.contrib.mixed_precision.FixedLossScaleManager(1024)  # expect: TF011
        opt = tf.contrib.mixed_precision.LossScaleOptimizer(opt, manager or fixed)  # expect: TF011
    return hvd.DistributedOptimizer(opt)  # expect: TF009


def average_metrics(values, variables):
    summed = hvd.allreduce(values, average=True)  # expect: TF009
    grouped = hvd.grouped_allreduce([values, summed])  # expect: TF009
    hvd.broadcast_variables(variables, root_rank=0)  # expect: TF009
    exchanged = hvd.alltoall(values)  # expect: TF009
    return summed, grouped, exchanged


def compiled_block(x):
    with tf.xla.experimental.jit_scope(compile_ops=False):  # expect: none
        y = tf.nn.relu(x)  # expect: none
    with tf.xla.experimental.jit_scope():  # expect: TF013
        return tf.nn.relu(y)
