"""Generic RL infrastructure: batched environments, the simulation step, the training loop.

Names are imported lazily so that light users (environment child processes in particular) do not pay
for importing TensorFlow; importing the package makes TensorFlow's process settings first, for the
modules that load it.
"""

import importlib
import sys
import types

from agents.runtime import tf_loading as _tf_loading

_tf_loading.prepare()

_NAMES = {
    "AttrDict": "attr_dict",
    "BatchEnv": "batch_env",
    "BatchEnvError": "batch_env",
    "ExternalProcess": "wrappers",
    "InGraphBatchEnv": "in_graph_batch_env",
    "VectorBatchEnv": "vector_batch_env",
    "PackedDict": "dict_observations",
    "PackDictObservation": "observation_wrappers",
    "InfoActionMask": "observation_wrappers",
    "simulate": "simulate",
    "simulate_steps": "simulate",
    "Steps": "simulate",
    "Algorithm": "simulate",
    "Loop": "loop",
    "StreamingMean": "streaming_mean",
    "RunningMeanStd": "normalize",
    "mpi_cross_replica_sum": "collectives",
    "MockEnvironment": "mock_environment",
    "MockAlgorithm": "mock_algorithm",
}

__all__ = sorted(_NAMES)


def __getattr__(name):
    if name in _NAMES:
        # Light users skip TensorFlow.
        module = importlib.import_module(f"{__name__}.{_NAMES[name]}")
        globals()[name] = value = getattr(module, name)  # Later reads skip this function.
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Namespace(types.ModuleType):
    """This package's module type: public names win over submodules of the same name.

    Importing a submodule (`import agents.tools.simulate`, or `from agents.tools.simulate import
    ...`) binds it on the package under its own name, which would shadow the public function
    `tools.simulate` whenever the import came first. The binding is redirected to the public name's
    object; the submodule itself stays reachable through `sys.modules`.
    """

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and _NAMES.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Namespace
