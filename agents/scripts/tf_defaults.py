"""TensorFlow's process settings for graphs of many small ops, made before TensorFlow loads.

A rollout step is a few hundred small ops on [num_envs, ...] tensors (the network, sampling, the
normalizers, the rollout buffer) around one Python call into the environments, so what each op
costs to dispatch is most of it. oneDNN's custom ops, made for large tensors, cost more per call
than TensorFlow's own kernels on these small ones (and make results differ slightly by CPU), so
training turns them off.

Measured with benchmarks/speed.py on a 2-core CPU, other runs paused (2026-11-23): the rollout
step of 16 Pendulums 0.85-0.87 ms with oneDNN, 0.80-0.81 ms without; HalfCheetah's training call
2,728 env steps/s either way; minigrid's CNN+GRU rollout 8.5 ms either way.

Also measured, and left to the user: one inter-op thread (`TF_NUM_INTEROP_THREADS=1`) brings
the Pendulum rollout step to 0.70 ms, but slows the XLA update where minibatches or networks are
larger (CartPole's 512-row gradient step 0.56 -> 0.9 ms, HalfCheetah's training call 2,728 ->
2,570 env steps/s). On a 2-core AMD EPYC (2026-11-24) it slowed every training call: Pendulum
16,251 -> 14,318, CartPole 17,042 -> 12,607, HalfCheetah 3,357 -> 2,962 env steps/s.

TensorFlow reads these variables when it loads; a value the user set is kept.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

DEFAULTS = {"TF_ENABLE_ONEDNN_OPTS": "0"}


def configure(environ: MutableMapping[str, str] = os.environ) -> dict[str, str]:
    """Set each of `DEFAULTS` that `environ` lacks; returns the ones set.

    Does nothing to a TensorFlow that is already loaded (it read the variables then).
    """
    added = {key: value for key, value in DEFAULTS.items() if key not in environ}
    environ.update(added)
    return added
