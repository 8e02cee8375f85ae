"""The compatibility corpus: public TensorFlow 1.x scripts by others (Estimator and sess.run), each kept as
upstream wrote it (upstream/) and as ported to kiln (port/) with only its imports and its
data loading changed (see README.md). What each entry runs, and the result it must reach."""
import contextlib
import fcntl
import glob
import os
import re
import shutil
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FASHION = "/usr/share/datasets/fashion-mnist"  # the ImageNet scripts' data directories (they list it for TFRecords)


S = "{scratch}"  # in args: the run's own scratch directory (a fresh temporary one, removed after)


def _remove_files(prefix):
    for path in glob.glob(glob.escape(prefix) + ".*"):
        if not path.endswith(".kiln-test-lock"):
            os.remove(path)


class Entry:
    def __init__(self, name, script, args=(), env=None, metric=None, at_least=None, at_most=None, fixed=(),
                 cwd=None, module=None, then=None, seed_flag=None, fixed_files=(), make_dirs=()):
        self.name, self.script, self.args = name, script, list(args)
        # then: [flag, value, ...] for a second run after the first, its args with those
        # flags' values replaced (a script that trains in one run and evaluates in another)
        self.then = list(then) if then else None

        self.env = dict(env or {})
        self.metric, self.at_least, self.at_most = metric, at_least, at_most
        # Paths the script itself writes to, fixed in its source (which a port does not
        # change): each run gets a private one (scratch_runs).
        self.fixed = list(fixed)
        # File prefixes the script writes in a shared directory (/tmp/model.ckpt -> its
        # .index, .data-*): runs on the machine take turns (a lock beside them) and the files
        # are removed before and after.
        self.fixed_files = list(fixed_files)
        self.cwd = cwd  # where the script runs (S: the scratch directory; None: port/)
        # Directories the upstream's launcher makes before it runs the script (relative to cwd).
        self.make_dirs = list(make_dirs)
        self.module = module  # run as `python -m module` from port/ (script names its main file)
        self.seed_flag = seed_flag  # the script's own seed flag: bench/compat_vs_tensorflow.py varies it

    def metric_values(self, out):
        """The values of the metric in a run's output, in order: as a script prints it
        ('accuracy': 0.9, "Accuracy: 0.9", "Testing Accuracy: 0.9", "Training Accuracy= 0.9", "accuracy : 0.9") or
        kiln logs it, in TensorFlow's words ("Saving dict for global step N: accuracy = 0.9, ...")."""
        m, big = re.escape(self.metric), re.escape(self.metric.capitalize())
        return [float(v) for v in re.findall(r"(?:'%s': |\b%s = |\b%s \(tensorflow\): |\b%s: |\b%s= |\b%s : )([0-9.eE+-]+)"
                                             % (m, m, big, big, big, m), out)]

    def run_directory(self, scratch):
        """The directory the script runs in, with make_dirs made in it."""
        cwd = (self.cwd or self.port).replace(S, scratch)
        for d in self.make_dirs:
            os.makedirs(os.path.join(cwd, d), exist_ok=True)
        return cwd

    def runs(self, scratch):
        """The argument lists of the entry's runs, in order, writing under `scratch`."""
        out = [[a.replace(S, scratch) for a in self.args]]
        if self.then:
            second = list(out[0])
            for flag, value in zip(self.then[::2], self.then[1::2]):
                second[second.index(flag) + 1] = value
            out.append(second)
        return out

    @contextlib.contextmanager
    def scratch(self):
        """A fresh scratch directory for one use of the entry (its runs), removed after, and
        a wrapper for its commands: (directory, wrap). With fixed paths, each command runs in
        a mount namespace of its own where a private directory under the scratch is mounted
        on each (`unshare -m`, as root or through a user namespace), so two suites on one
        machine never share them; where namespaces are refused, the runs of every suite on
        the machine take turns (a lock beside the path) and the path is cleared before."""
        scratch = tempfile.mkdtemp(prefix="kiln-compat-%s-" % self.name)
        locks = []
        try:
            wrap = lambda cmd: cmd
            if self.fixed:
                wrap = self._private_paths(scratch)
                if wrap is None:
                    wrap = lambda cmd: cmd
                    for path in self.fixed:
                        lock = open(path.rstrip("/") + ".kiln-test-lock", "a")
                        fcntl.flock(lock, fcntl.LOCK_EX)
                        locks.append(lock)
                        shutil.rmtree(path, ignore_errors=True)
            for prefix in self.fixed_files:
                lock = open(prefix + ".kiln-test-lock", "a")
                fcntl.flock(lock, fcntl.LOCK_EX)
                locks.append(lock)
                _remove_files(prefix)
            yield scratch, wrap
        finally:
            for prefix in self.fixed_files:
                _remove_files(prefix)
            for lock in locks:
                lock.close()
            shutil.rmtree(scratch, ignore_errors=True)

    def _private_paths(self, scratch):
        mounts = []
        for i, path in enumerate(self.fixed):
            private = os.path.join(scratch, "fixed%d" % i)
            os.makedirs(private)
            os.makedirs(path, exist_ok=True)  # the mount point (left empty: nothing is written to it)
            mounts.append('mount --bind "%s" "%s"' % (private, path))
        unshare = ["unshare", "--mount"] + ([] if os.geteuid() == 0 else ["--map-root-user"])
        script = " && ".join(mounts) + ' && exec "$@"'
        probe = subprocess.run(unshare + ["sh", "-c", script, "sh", "true"], capture_output=True)
        if probe.returncode != 0:
            return None
        return lambda cmd: unshare + ["sh", "-c", script, "sh"] + list(cmd)

    @property
    def upstream(self):
        return os.path.join(HERE, self.name, "upstream")

    @property
    def port(self):
        return os.path.join(HERE, self.name, "port")


ENTRIES = [
    # TensorFlow's "layers" tutorial: tf.layers CNN, dropout, SGD 0.001, LoggingTensorHook.
    Entry("tf_layers_cnn_mnist", "cnn_mnist.py", env={"KILN_MAX_STEPS": "300"},
          metric="accuracy", at_least=0.35, fixed=["/tmp/mnist_convnet_model"]),
    # Google Cloud's course classifier: batch normalization through UPDATE_OPS, optimize_loss,
    # train_and_evaluate with an exporter.
    Entry("gcp_mnist_bn", "trainer/task.py", module="trainer.task",
          args=["--output_dir", S + "/out", "--train_steps", "300", "--model", "cnn",
                "--batch_norm", "--learning_rate", "0.01"],
          metric="accuracy", at_least=0.75),
    # Google Cloud's batch-normalization post: tf.keras Dense layers inside model_fn, a
    # feature_column input layer, Adam under control_dependencies(UPDATE_OPS), docopt.
    Entry("gcp_bn_keras_mnist", "trainer/task.py", module="trainer.task",
          args=["--outdir", S + "/out", "--num_steps", "300",
                "--hidden_units", "500,400,300,200,100,50,25"],
          metric="accuracy", at_least=0.78),
    # TensorFlow's character RNN (GRUCell, static_rnn) on the fortunes' 15 largest files.
    # The Ascend ModelZoo's ShuffleNet v2 (npu_bridge): NPUEstimator, NPULossScaleOptimizer,
    # compute/apply_gradients, slim with batch norm, EMA weights evaluated through a hook.
    Entry("ascend_shufflenetv2", "train.py",
          args=["--mode", "train", "--train_data_dir", FASHION, "--eval_data_dir", FASHION,
                "--model_dir", S + "/model", "--num_epochs", "1", "--epochs_between_evals", "1",
                "--train_dataset_size", "64000", "--train_batch_size", "64", "--eval_batch_size", "500"],
          env={"RANK_SIZE": "1", "RANK_ID": "0"}, metric="accuracy", at_least=0.6),
    # The Ascend ModelZoo's AlexNet (npu_bridge): its ImageNet TFRecord pipeline as written
    # (list_files, interleave, shuffle_and_repeat, parse_single_example with VarLen boxes,
    # sample_distorted_bounding_box, decode_and_crop_jpeg, resize to 224, a private thread
    # pool), NPUEstimator, dropout, Nesterov momentum through compute/apply_gradients, a
    # cosine schedule gathered from a table; trained, then evaluated by a second run over
    # the checkpoints it finds by TensorFlow's file names.
    Entry("ascend_alexnet", "train.py",
          args=["--mode", "train", "--data_dir", S + "/data", "--log_dir", S + "/log",
                "--checkpoint_dir", S + "/log", "--num_classes", "10", "--batch_size", "32",
                "--max_train_steps", "150", "--max_epochs", "2", "--warmup_epochs", "1", "--lr", "0.02",
                "--alexnet_version", "xavier", "--iterations_per_loop", "1", "--display_every", "25"],
          then=["--mode", "evaluate"],
          env={"RANK_SIZE": "1", "RANK_ID": "0", "DEVICE_INDEX": "0", "KILN_COMPAT_EXAMPLES": "4800",
               "KILN_COMPAT_EVAL_EXAMPLES": "1024"},
          metric="val-top1acc", at_least=0.2),
    # Google Cloud's CIFAR-10 trainer: TFRecordDataset -> map(parse_single_example, decode_raw,
    # transpose) -> map(pad, random_crop, random_flip, per_image_standardization) -> batch,
    # get_next() repacked into a features dict, lrn, Adam, train_and_evaluate with a ProfilerHook.
    Entry("gcp_cnn_cifar_tfrecords", "cnn-model-02/task.py",
          args=["--output_dir", S + "/out", "--train_data_pattern",
                S + "/data/train.tfrecords", "--eval_data_pattern",
                S + "/data/validation.tfrecords", "--batch_size", "200", "--max_steps", "300",
                "--eval_steps", "50"],
          env={"KILN_COMPAT_EXAMPLES": "20000"}, metric="accuracy", at_least=0.2, seed_flag="--tf_random_seed"),
    # sess.run mode. Aymeric Damien's TensorFlow-Examples (TensorFlow 1 versions): an MLP on
    # placeholders and feed_dict, Adam, its accuracy by Tensor.eval(feed_dict).
    Entry("aymeric_mlp", "multilayer_perceptron.py", metric="accuracy", at_least=0.6,
          env={"KILN_COMPAT_EXAMPLES": "10000"}),
    # ... a CNN from tf.nn.conv2d/max_pool/bias_add, dropout on a fed keep_prob placeholder.
    Entry("aymeric_cnn_raw", "convolutional_network_raw.py", metric="accuracy", at_least=0.6),
    # ... the MLP trained 3 epochs, saved by tf.train.Saver, restored into a new Session and
    # trained 7 more (its checkpoint path /tmp/model.ckpt is fixed in the script).
    Entry("aymeric_save_restore", "save_restore_model.py", metric="accuracy", at_least=0.6,
          env={"KILN_COMPAT_EXAMPLES": "5000"}, fixed_files=["/tmp/model.ckpt"]),
    # ... softmax regression with tf.summary.scalar / merge_all run in every sess.run and
    # written by a FileWriter(logs_path, graph=tf.get_default_graph()) (a path fixed in the script).
    Entry("aymeric_tensorboard_basic", "tensorboard_basic.py", metric="accuracy", at_least=0.6,
          env={"KILN_COMPAT_EXAMPLES": "5000"}, fixed=["/tmp/tensorflow_logs"]),
    # ... a tf.layers CNN fed by Dataset.from_tensor_slices().repeat().batch() through an
    # initializable iterator (its initializer run before get_next()), a second tower under
    # variable_scope(reuse=True) for evaluation, 2000 Adam steps; the last minibatch's accuracy.
    Entry("aymeric_dataset_api", "tensorflow_dataset_api.py", metric="accuracy", at_least=0.8,
          env={"KILN_COMPAT_EXAMPLES": "5000"}),
    # The Ascend ModelZoo's LeNet in sess.run mode (npu_bridge): the NpuOptimizer in a
    # ConfigProto (precision_mode, use_off_line, remapping OFF), two initializable iterators
    # over shuffled, repeated, batched Datasets with tf.data.Options, their elements fetched
    # by sess.run and fed back, NPUDistributedOptimizer(Adam), summaries through merge_all and
    # a FileWriter, Saver, tf.io.write_graph. Run as its test/train_full_1p.sh runs it: from a
    # directory holding output/ckpt_npu; it writes test/output beside itself (fixed).
    Entry("ascend_lenet_session", "LeNet_placeholder.py",
          args=["--precision_mode", "allow_mix_precision_bf16", "--steps", "900"], cwd=S,
          make_dirs=["output/ckpt_npu"], fixed=[os.path.join(HERE, "ascend_lenet_session", "port", "test", "output")],
          env={"KILN_COMPAT_EXAMPLES": "30000"}, metric="accuracy", at_least=0.5),
    # Sherjil Ozair's char-rnn: a 2-layer LSTM language model (contrib.rnn.LSTMCell,
    # MultiRNNCell, legacy_seq2seq.rnn_decoder / sequence_loss_by_example), clipped Adam
    # gradients through tf.gradients, its learning rate a Variable set by tf.assign each
    # epoch; the LSTM state fetched by every sess.run and fed back into the zero_state
    # tensors for the next batch; histograms and a scalar through merge_all, Saver.
    Entry("sherjil_char_rnn", "train.py",
          args=["--data_dir", S + "/data", "--save_dir", S + "/save", "--log_dir", S + "/logs", "--num_epochs", "1"],
          metric="train_loss", at_most=2.9),
    Entry("tf_char_rnn_text", "text_classification_character_rnn.py", metric="accuracy", at_least=0.12,
          env={"KILN_MAX_STEPS": "100"}),
]

BY_NAME = {e.name: e for e in ENTRIES}
