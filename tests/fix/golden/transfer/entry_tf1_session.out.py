"""TF 1.15 script with a session config."""
from npu_bridge.npu_init import *
import tensorflow as tf

# TODO(npu): TF005 `tensorflow.ConfigProto` builds or opens a TF1 session; on Ascend its config needs the NpuOptimizer
config = tf.ConfigProto(allow_soft_placement=True)
config.gpu_options.allow_growth = True

if __name__ == "__main__":
    # TODO(npu): TF005 `tensorflow.Session` builds or opens a TF1 session; on Ascend its config needs the NpuOptimizer
    with tf.Session(config=config) as sess:
        print(sess.run(tf.constant(1)))
