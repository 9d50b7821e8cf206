"""TF2 Keras trainer: mirrored strategy, mixed precision and XLA on GPUs."""
import os

import tensorflow as tf
from tensorflow.keras import mixed_precision

os.environ["TF_GPU_THREAD_MODE"] = "gpu_private"  # expect: TF015


def setup_devices():
    gpus = tf.config.list_physical_devices("GPU")  # expect: TF001
    cpus = tf.config.list_physical_devices("CPU")  # expect: none
    for gpu in gpus:
        tf.config.experimental.set_memory_growth(gpu, True)  # expect: TF003
    if tf.test.is_built_with_cuda():  # expect: TF002
        tf.config.optimizer.set_jit(True)  # expect: TF013
    return len(gpus), len(cpus)


def make_strategy(num_gpus):
    if num_gpus > 1:
        return tf.distribute.MirroredStrategy(cross_device_ops=tf.distribute.NcclAllReduce())  # expect: TF007, TF008
    return tf.distribute.get_strategy()  # expect: none


def build_model():
    inputs = tf.keras.Input(shape=(32, 32, 3))
    x = tf.keras.layers.Conv2D(32, 3, activation="relu")(inputs)
    x = tf.keras.layers.GlobalAveragePooling2D()(x)
    outputs = tf.keras.layers.Dense(10, dtype="float32")(x)  # expect: none
    return tf.keras.Model(inputs, outputs)


mixed_precision.set_global_policy("mixed_float16")  # expect: TF010
strategy = make_strategy(setup_devices()[0])
with strategy.scope():
    model = build_model()
    optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())  # expect: TF011


@tf.function(jit_compile=True)  # expect: TF012
def train_step(images, labels):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(labels, model(images), from_logits=True))
        scaled = optimizer.get_scaled_loss(loss)
    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def spectrum(signal):
    return tf.signal.fft(tf.cast(signal, tf.complex64))  # expect: TF014


if __name__ == "__main__":
    worker = tf.distribute.experimental.MultiWorkerMirroredStrategy()  # expect: TF007
    with tf.device(f"/GPU:{os.environ.get('LOCAL_RANK', '0')}"):  # expect: TF004
        train_step(tf.zeros([8, 32, 32, 3]), tf.zeros([8], tf.int64))
