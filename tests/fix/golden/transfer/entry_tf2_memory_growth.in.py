"""Keras trainer that configures GPU memory before building the model."""
import tensorflow as tf

gpus = tf.config.list_physical_devices("GPU")
for gpu in gpus:
    tf.config.experimental.set_memory_growth(gpu, True)
if gpus:
    tf.config.experimental.set_memory_growth(gpus[0], True); print("growth on")
model = tf.keras.Sequential([tf.keras.layers.Dense(4)])

if __name__ == "__main__":
    model.compile(optimizer="adam", loss="mse")
