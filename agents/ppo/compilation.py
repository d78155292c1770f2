"""How each agent family runs fastest: the update compiled by XLA or in graph mode, oneDNN or not.

Plain Python, read before TensorFlow is imported (oneDNN is a process setting TensorFlow reads when
it loads). Chosen by measurement on CPUs (`benchmarks/speed_matrix.py`):

- `ppo` (dense networks on small batches): XLA fuses the whole update into few kernels, several
  times faster per gradient step than graph mode; oneDNN's custom ops cost more per call than
  TensorFlow's own kernels on the rollout step's small tensors, so they are off.
- `rnd_ppo` (convolutions and a GRU unroll): XLA's CPU convolution gradients are slower than
  TensorFlow's kernels, and its first compile takes tens of seconds, so the update runs in graph
  mode; oneDNN's convolutions are faster than the default ones, so they are on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

XLA_UPDATE = {"ppo": True, "rnd_ppo": False}
ONEDNN = {"ppo": False, "rnd_ppo": True}


def xla_update(config: Mapping[str, Any]) -> bool:
    """Whether the agent's update is compiled by XLA (`update_compiler`, or the family's choice)."""
    choice = config.get("update_compiler", "auto")
    if choice == "auto":
        return XLA_UPDATE.get(config.get("agent", "ppo"), True)
    return choice == "xla"


def whole_call(config: Mapping[str, Any], ranks: int = 1) -> bool:
    """Whether XLA compiles a whole training call (rollout and update) as one program: with a
    native env (no Python step), an XLA update, and one process (MPI's collectives are Python)."""
    return bool(config.get("native_env")) and xla_update(config) and ranks == 1


def onednn(agent: str) -> bool:
    """Whether oneDNN's custom TensorFlow ops serve `agent` best."""
    return ONEDNN.get(agent, False)
