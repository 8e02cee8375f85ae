"""npu_bridge.estimator.npu.util: the adapter's helpers for sess.run scripts; their code is
in kiln._src.npu_util."""
# ruff: noqa: F401
# (a module of names: each is imported to be re-exported)
from kiln._src.npu_util import (
    IterationPerLoop,
    get_value,
    global_dict_init,
    npu_compile,
    set_graph_exec_config,
    set_iteration_per_loop,
    set_value,
)
