"""TF 1.15 script with a session config."""
import tensorflow as tf

config = tf.ConfigProto(allow_soft_placement=True)
config.gpu_options.allow_growth = True

if __name__ == "__main__":
    with tf.Session(config=config) as sess:
        print(sess.run(tf.constant(1)))
