"""Keras trainer that configures GPU memory before building the model."""
import npu_device as npu
npu.open().as_default()
import tensorflow as tf

# TODO(npu): TF001 `tensorflow.config.list_physical_devices` lists GPUs; with the TensorFlow CPU wheel used on Ascend it finds none
gpus = tf.config.list_physical_devices("GPU")
for gpu in gpus:
    pass
if gpus:
    pass; print("growth on")
model = tf.keras.Sequential([tf.keras.layers.Dense(4)])

if __name__ == "__main__":
    model.compile(optimizer="adam", loss="mse")
