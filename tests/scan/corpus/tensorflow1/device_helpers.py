"""TF 1.x sequence model helpers: each layer's device is chosen by a helper, round-robin over the
GPUs, and the graph code passes the helper's result to tf.device."""
import tensorflow as tf  # expect: none

EMBED_ON_CPU_ABOVE = 500000  # expect: none
PARAMETER_SERVER = "/job:ps/replica:0/task:0/cpu:0"  # expect: none
FIRST_GPU = "/device:GPU:0"  # expect: TF021
WORKER_GPU = "/job:worker/task:1/gpu:0"  # expect: TF021
ANY_GPU = "/gpu:*"  # expect: TF021
ANY_CPU = "/cpu:*"  # expect: none
SHARD_DEVICES = ["gpu:%d" % d for d in range(8)]  # expect: TF021
PS_DEVICES = ["/job:ps" + "/task:%d/GPU:%d" % (t, 0) for t in range(2)]  # expect: TF021
DEFAULT_NAME = "default"  # expect: none
GPU_WORD = "gpu"  # expect: none


def layer_device(layer, num_gpus):
    """Return the device of `layer`: "/gpu:N" round-robin, "/cpu:0" without GPUs."""
    if num_gpus == 0:
        return "/cpu:0"  # expect: none
    return "/gpu:%d" % (layer % num_gpus)  # expect: TF021


def embedding_device(vocab_size):
    if vocab_size > EMBED_ON_CPU_ABOVE:
        return "/cpu:0"  # expect: none
    return "/gpu:0"  # expect: TF021


def tower_devices(num_gpus):
    formatted = ["/gpu:{}".format(i) for i in range(num_gpus)]  # expect: TF021
    spelled = [f"/GPU:{i}" for i in range(num_gpus)]  # expect: TF021
    joined = ["/gpu:" + str(i) for i in range(num_gpus)]  # expect: TF021
    return formatted, spelled, joined


def build(inputs, layers, num_gpus):
    outputs = inputs
    for layer in range(layers):
        with tf.device(layer_device(layer, num_gpus)):  # expect: TF004
            outputs = tf.layers.dense(outputs, 512)  # expect: none
    with tf.device("/gpu:0"):  # expect: TF004
        logits = tf.layers.dense(outputs, 10)  # expect: none
    with tf.device("/gpu:%d" % (layers % num_gpus)):  # expect: TF004
        probs = tf.nn.softmax(logits)  # expect: none
    with tf.device(f"/gpu:{num_gpus - 1}"):  # expect: TF004
        loss = tf.reduce_mean(probs)  # expect: none
    with tf.device("/cpu:0"):  # expect: none
        tf.summary.scalar("loss", loss)  # expect: none
    tf.logging.info("placed the last layer on /gpu:0")  # expect: none
    return loss
