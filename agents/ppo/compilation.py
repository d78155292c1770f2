"""How each agent family runs fastest: the update compiled by XLA or in graph mode, oneDNN or not.

Plain Python, read before TensorFlow is imported (oneDNN is a process setting TensorFlow reads when
it loads). Chosen by measurement on CPUs (`benchmarks/speed_matrix.py`):

- `ppo` (dense networks on small batches): XLA fuses the whole update into few kernels, several
  times faster per gradient step than graph mode; oneDNN's custom ops cost more per call than
  TensorFlow's own kernels on the rollout step's small tensors, so they are off.
- `rnd_ppo` (convolutions and a GRU unroll): XLA's CPU backend runs some convolution gradients
  as naive loops (the 8x8/8 and 3x3/2 filter gradients of the "tiles8" stack among them), so the
  update compiles with XLA only where its convolutions run as matrix products over their patches
  (`PatchConv2D`, which the networks choose whenever the update is XLA's). For MiniGrid's 56x56
  frames and the "tiles8" stack that is ~2x faster than graph mode (the first 8x8/8 layer is a
  reshape, the rest few patches), and with native envs the whole call is one XLA program. The
  Atari stack ("dqn": overlapping 8x8/4 windows of 84x84 frames) stays in graph mode: as patch
  products under XLA it ran 1.8x slower and took 80 s to compile. oneDNN's convolutions are
  faster than the default ones in graph mode, so they are on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.config import catalogue


def xla_update(config: Mapping[str, Any]) -> bool:
    """Whether the agent's update is compiled by XLA (`update_compiler`, or the family's choice)."""
    choice = config.get("update_compiler", "auto")
    if choice == "auto":
        entry = catalogue.AGENTS.get(config.get("agent", "ppo"))
        if entry is None:
            return True
        return entry.xla_update and config.get("conv_stack", "dqn") not in entry.graph_conv_stacks
    return choice == "xla"


def replicated_update(config: Mapping[str, Any], ranks: int) -> bool:
    """Whether MPI ranks gather their rollouts and each runs the same XLA-compiled update.

    For `ppo` with the XLA update: one gather per update replaces a collective per minibatch
    (the update in graph mode around them cost ~1.5 ms per minibatch at 2 ranks), and every rank
    computes the update of all ranks' data, as one process would with all the envs. Ranks keep
    identical parameters because they run one deterministic program on identical inputs.
    """
    return ranks > 1 and config.get("agent", "ppo") == "ppo" and xla_update(config)


def whole_call(config: Mapping[str, Any], ranks: int = 1) -> bool:
    """Whether XLA compiles a whole training call (rollout and update) as one program: with a
    native env (no Python step), an XLA update, and one process (MPI's collectives are Python)."""
    return bool(config.get("native_env")) and xla_update(config) and ranks == 1


def onednn(agent: str) -> bool:
    """Whether oneDNN's custom TensorFlow ops serve `agent` best."""
    entry = catalogue.AGENTS.get(agent)
    return entry is not None and entry.onednn
