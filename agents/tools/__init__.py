"""Generic RL infrastructure: batched environments, the simulation step, the training loop.

Names are imported lazily so that light users (environment child processes in particular) do not pay
for importing TensorFlow.
"""

import importlib

_NAMES = {
    "AttrDict": "attr_dict",
    "BatchEnv": "batch_env",
    "BatchEnvError": "batch_env",
    "ExternalProcess": "wrappers",
    "InGraphBatchEnv": "in_graph_batch_env",
    "simulate": "simulate",
    "simulate_steps": "simulate",
    "Loop": "loop",
    "StreamingMean": "streaming_mean",
    "RunningMeanStd": "running_mean_std",
    "mpi_cross_replica_sum": "mpi",
    "MockEnvironment": "mock_environment",
    "MockAlgorithm": "mock_algorithm",
}

__all__ = sorted(_NAMES)


def __getattr__(name):
    if name in _NAMES:
        source = _NAMES[name]
        module = importlib.import_module(f"{__name__}.{source}")
        # Cache the object: importing `tools.simulate` binds the submodule under the same name.
        globals()[name] = value = getattr(module, name)
        if source in _NAMES:  # Also when `simulate_steps` is the name that imported it.
            globals()[source] = getattr(module, source)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
