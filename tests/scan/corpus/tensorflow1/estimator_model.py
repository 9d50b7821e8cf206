"""TF 1.15 Estimator with a mirrored strategy in its run config."""
import tensorflow as tf


def model_fn(features, labels, mode):
    logits = tf.layers.dense(features["x"], 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.AdamOptimizer().minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)  # expect: TF018


def build(model_dir):
    strategy = tf.contrib.distribute.MirroredStrategy(num_gpus=4)  # expect: TF007
    config = tf.estimator.RunConfig(model_dir=model_dir, train_distribute=strategy)  # expect: TF018
    return tf.estimator.Estimator(model_fn=model_fn, config=config)  # expect: TF018


def evaluate(estimator, input_fn):
    with tf.Session() as sess:  # expect: TF005
        return sess.run(estimator.evaluate(input_fn))  # expect: none


def compat_setup():
    import tensorflow.compat.v1 as tf1

    for gpu in tf1.config.experimental.list_physical_devices("GPU"):  # expect: TF001
        tf1.config.experimental.set_memory_growth(gpu, True)  # expect: TF003
    return tf1.ConfigProto(gpu_options=tf1.GPUOptions(allow_growth=True))  # expect: TF005, TF006
