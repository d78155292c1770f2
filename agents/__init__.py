"""Batched PPO on TensorFlow 2: in-graph batch environments, PPO agents and training scripts.

`from agents import train, load_policy, evaluate, export` is the Python API (see `agents.api`),
and `agents.Trainer` the training run it is built on (see `agents.training`), with
`agents.Callback` the seam to act as it goes. They are imported on first use: `import agents`
loads no TensorFlow, sets no environment variable and touches no file. TensorFlow's process
settings (log level, oneDNN, XLA's compile cache) are made when a run starts or TensorFlow is
first needed (see `agents.runtime`).
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["Callback", "Trainer", "evaluate", "export", "load_policy", "train"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from agents import api  # The API on first use: `import agents` stays light.

        return getattr(api, name)
    raise AttributeError(f"module 'agents' has no attribute {name!r}")
