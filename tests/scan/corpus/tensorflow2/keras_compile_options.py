"""TF 2.x Keras recipes: XLA and mixed precision switched on and off, a one-device strategy."""
import horovod.tensorflow as hvd  # expect: none
import tensorflow as tf  # expect: none
from tensorflow import keras  # expect: none


def compile_model(model, use_xla):
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", jit_compile=True)  # expect: TF012
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", jit_compile=False)  # expect: none
    model.compile(optimizer="sgd", loss="mse", jit_compile=use_xla)  # expect: TF012
    model.compile(optimizer="sgd", loss="mse", steps_per_execution=8)  # expect: none
    return model


@tf.function(jit_compile=False)  # expect: none
def eval_step(model, images):
    return model(images, training=False)


@tf.function(experimental_compile=True)  # expect: TF012
def train_step(model, images):
    return model(images, training=True)


def precision(policy_name):
    tf.config.optimizer.set_jit(False)  # expect: none
    tf.config.optimizer.set_jit("autoclustering")  # expect: TF013
    keras.mixed_precision.set_global_policy("float32")  # expect: none
    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")  # expect: TF010
    tf.keras.mixed_precision.set_global_policy(policy_name)  # expect: TF010


def pick_strategy(num_gpus):
    if num_gpus == 1:
        return tf.distribute.OneDeviceStrategy(device="/gpu:0")  # expect: TF004
    if num_gpus == 0:
        return tf.distribute.OneDeviceStrategy("/cpu:0")  # expect: none
    return tf.distribute.OneDeviceStrategy("GPU:0")  # expect: TF004


def tape_step(model, loss_fn, images, labels):
    with tf.GradientTape() as tape:  # expect: none
        loss = loss_fn(labels, model(images))
    tape = hvd.DistributedGradientTape(tape)  # expect: TF009
    return tape.gradient(loss, model.trainable_variables)
