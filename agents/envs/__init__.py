"""Environments: written as TensorFlow ops (this package), or stepped in Python (`python/`).

The native ones are gymnasium's classic control tasks, MiniGrid (`gridworld/`) and a base class.

`NativeEnv` is the protocol (batched pure functions of a state tensor), `NativeBatchEnv` steps one
inside the compiled training call with the interface of `tools.InGraphBatchEnv`, and
`make_native(env_id)` builds the native implementation of a gymnasium id.
"""

from agents.envs.registry import check_native, make_native, native_ids, register

__all__ = [
    "NativeBatchEnv",
    "NativeEnv",
    "NativeGymEnv",
    "check_native",
    "make_native",
    "native_ids",
    "register",
]


def __getattr__(name):  # TensorFlow loads only when a native env is used.
    if name in ("NativeEnv", "NativeBatchEnv", "NativeGymEnv"):
        from agents.runtime import tf_loading

        tf_loading.import_tensorflow()  # Quietly, with the process settings a run makes.
    if name == "NativeEnv":
        from agents.envs.native_env import NativeEnv

        return NativeEnv
    if name == "NativeBatchEnv":
        from agents.envs.native_batch_env import NativeBatchEnv

        return NativeBatchEnv
    if name == "NativeGymEnv":
        from agents.envs.gym_env import NativeGymEnv

        return NativeGymEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
