"""The compatibility corpus: public TensorFlow 1.x Estimator scripts by others, each kept as
upstream wrote it (upstream/) and as ported to kiln (port/) with only its imports and its
data loading changed (see README.md). What each entry runs, and the result it must reach."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
FASHION = "/usr/share/datasets/fashion-mnist"  # the ImageNet scripts' data directories (they list it for TFRecords)


class Entry:
    def __init__(self, name, script, args=(), env=None, metric=None, at_least=None, at_most=None, dirs=(),
                 cwd=None, module=None):
        self.name, self.script, self.args = name, script, list(args)
        self.env = dict(env or {})
        self.metric, self.at_least, self.at_most = metric, at_least, at_most
        self.dirs = list(dirs)  # directories the script writes to (removed before a run)
        self.cwd = cwd
        self.module = module  # run as `python -m module` from port/ (script names its main file)

    @property
    def upstream(self):
        return os.path.join(HERE, self.name, "upstream")

    @property
    def port(self):
        return os.path.join(HERE, self.name, "port")


ENTRIES = [
    # TensorFlow's "layers" tutorial: tf.layers CNN, dropout, SGD 0.001, LoggingTensorHook.
    Entry("tf_layers_cnn_mnist", "cnn_mnist.py", env={"KILN_MAX_STEPS": "300"},
          metric="accuracy", at_least=0.35, dirs=["/tmp/mnist_convnet_model"]),
    # Google Cloud's course classifier: batch normalization through UPDATE_OPS, optimize_loss,
    # train_and_evaluate with an exporter.
    Entry("gcp_mnist_bn", "trainer/task.py", module="trainer.task",
          args=["--output_dir", "/tmp/kiln-compat-gcp-mnist-bn", "--train_steps", "300", "--model", "cnn",
                "--batch_norm", "--learning_rate", "0.01"],
          metric="accuracy", at_least=0.75, dirs=["/tmp/kiln-compat-gcp-mnist-bn"]),
    # Google Cloud's batch-normalization post: tf.keras Dense layers inside model_fn, a
    # feature_column input layer, Adam under control_dependencies(UPDATE_OPS), docopt.
    Entry("gcp_bn_keras_mnist", "trainer/task.py", module="trainer.task",
          args=["--outdir", "/tmp/kiln-compat-gcp-bn-keras", "--num_steps", "300",
                "--hidden_units", "500,400,300,200,100,50,25"],
          metric="accuracy", at_least=0.78, dirs=["/tmp/kiln-compat-gcp-bn-keras"]),
    # TensorFlow's character RNN (GRUCell, static_rnn) on the fortunes' 15 largest files.
    # The Ascend ModelZoo's ShuffleNet v2 (npu_bridge): NPUEstimator, NPULossScaleOptimizer,
    # compute/apply_gradients, slim with batch norm, EMA weights evaluated through a hook.
    Entry("ascend_shufflenetv2", "train.py",
          args=["--mode", "train", "--train_data_dir", FASHION, "--eval_data_dir", FASHION,
                "--model_dir", "/tmp/kiln-compat-shufflenetv2", "--num_epochs", "1", "--epochs_between_evals", "1",
                "--train_dataset_size", "64000", "--train_batch_size", "64", "--eval_batch_size", "500"],
          env={"RANK_SIZE": "1", "RANK_ID": "0"}, metric="accuracy", at_least=0.6,
          dirs=["/tmp/kiln-compat-shufflenetv2"]),
    Entry("tf_char_rnn_text", "text_classification_character_rnn.py", metric="accuracy", at_least=0.12,
          env={"KILN_MAX_STEPS": "100"}),
]

BY_NAME = {e.name: e for e in ENTRIES}
