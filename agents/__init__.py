"""Batched PPO on TensorFlow 2: in-graph batch environments, PPO agents and training scripts.

`from agents import train, load_policy, evaluate` is the Python API (see `agents.api`), and
`agents.Trainer` the training run it is built on (see `agents.training`), with `agents.Callback`
the seam to act as it goes; they are imported on first use, so `import agents` stays light (no
TensorFlow). It sets TensorFlow's process variables (log level, oneDNN, XLA's compile cache) if
TensorFlow is not loaded yet, so that a TensorFlow imported after it loads quietly and as
training wants it (see `agents.training.tf_loading`).
"""

from __future__ import annotations

from typing import Any

from agents.training import tf_loading as _tf_loading

_tf_loading.prepare()

__version__ = "0.1.0"
__all__ = ["Callback", "Trainer", "evaluate", "load_policy", "train"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from agents import api

        return getattr(api, name)
    raise AttributeError(f"module 'agents' has no attribute {name!r}")
