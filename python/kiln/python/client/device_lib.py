"""tensorflow.python.client.device_lib: the devices a script may place work on. kiln runs on
the host's CPU only, so the list holds one CPU device (and no GPU, which scripts check for)."""
import os

from kiln._src.unsupported import refuse_other_names


class DeviceAttributes:
    """TensorFlow's DeviceAttributes message, as far as scripts read it."""

    def __init__(self, name, device_type, memory_limit, physical_device_desc=""):
        self.name, self.device_type, self.memory_limit = name, device_type, memory_limit
        self.physical_device_desc = physical_device_desc
        self.incarnation = 1

    def __repr__(self):
        return "name: %r device_type: %r memory_limit: %d" % (self.name, self.device_type, self.memory_limit)


def _memory_bytes():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 0


def list_local_devices(session_config=None):
    return [DeviceAttributes("/device:CPU:0", "CPU", _memory_bytes(),
                             "%d cores" % len(os.sched_getaffinity(0)))]


__getattr__ = refuse_other_names("tensorflow.python.client.device_lib", "kiln's mirror of it holds list_local_devices")
