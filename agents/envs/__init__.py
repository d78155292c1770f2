"""Environments: written as TensorFlow ops (this package), or stepped in Python (`python/`).

The native ones are gymnasium's classic control tasks, MiniGrid (`gridworld/`) and a base class.

`NativeEnv` is the protocol (batched pure functions of a state tensor), `NativeBatchEnv` steps one
inside the compiled training call with the interface of `tools.InGraphBatchEnv`, and
`make_native(env_id)` builds the native implementation of a gymnasium id.
"""

from agents.envs.registry import check_native, make_native, native_class, native_ids, register
from agents.runtime import tf_loading

__all__ = [
    "NativeBatchEnv",
    "NativeEnv",
    "NativeGymEnv",
    "check_native",
    "make_native",
    "native_ids",
    "register",
]

# The names whose modules load TensorFlow, and those modules.
_NATIVE = {
    "NativeEnv": "native_env",
    "NativeBatchEnv": "native_batch_env",
    "NativeGymEnv": "gym_env",
}


def __getattr__(name):  # TensorFlow loads only when a native env is used.
    if name not in _NATIVE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    tf_loading.import_tensorflow()  # Quietly, with the process settings a run makes.
    return native_class(_NATIVE[name], name)
