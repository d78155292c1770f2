"""Environments written as TensorFlow ops: gymnasium's classic control tasks and a base class.

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
        from agents.tools.tf_import import quiet_import

        quiet_import()  # As `import agents` set the log level.
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
