"""TF 1.15 image classifier trained with sessions, Horovod and a graph-rewrite AMP switch."""
import os

import horovod.tensorflow as hvd
import tensorflow as tf

os.environ["TF_FORCE_GPU_ALLOW_GROWTH"] = "true"  # expect: TF015
os.environ.setdefault("TF_ENABLE_AUTO_MIXED_PRECISION", "1")  # expect: TF015


def session_config(local_rank):
    config = tf.ConfigProto(allow_soft_placement=True)  # expect: TF005
    config.gpu_options.allow_growth = True  # expect: TF006
    config.gpu_options.visible_device_list = str(local_rank)  # expect: TF006
    config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1  # expect: TF013
    return config


def build_graph(images, labels, learning_rate):
    with tf.device("/gpu:0"):  # expect: TF004
        logits = tf.layers.dense(tf.layers.flatten(images), 10)
    with tf.device("/cpu:0"):  # expect: none
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    opt = tf.train.MomentumOptimizer(learning_rate * hvd.size(), 0.9)  # expect: TF009
    opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)  # expect: TF010
    scale = tf.train.experimental.DynamicLossScale(initial_loss_scale=2 ** 15)  # expect: TF011
    opt = hvd.DistributedOptimizer(opt)  # expect: TF009
    return opt.minimize(loss, global_step=tf.train.get_or_create_global_step()), scale


def precise_metric(values):
    return tf.reduce_mean(tf.cast(values, tf.float64))  # expect: TF014


def main():
    hvd.init()  # expect: TF009
    if not tf.test.is_gpu_available():  # expect: TF002
        print("no GPU, running slowly")
    images = tf.placeholder(tf.float32, [None, 28, 28, 1])  # expect: none
    labels = tf.placeholder(tf.int64, [None])
    train_op, _ = build_graph(images, labels, 0.01)
    hooks = [hvd.BroadcastGlobalVariablesHook(0)]  # expect: TF009
    with tf.train.MonitoredTrainingSession(config=session_config(hvd.local_rank()), hooks=hooks) as sess:  # expect: TF005, TF009
        while not sess.should_stop():
            sess.run(train_op)


if __name__ == "__main__":
    main()
