"""tf.test: the device queries scripts make (kiln runs on the CPU: no CUDA, no GPU)."""


def is_built_with_cuda():
    return False


def is_built_with_rocm():
    return False


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    return False


def gpu_device_name():
    return ""
