"""TensorFlow's process settings for graphs of many small ops, made before TensorFlow loads.

A rollout step is a few hundred small ops on [num_envs, ...] tensors (the network, sampling, the
normalizers, the rollout buffer) around one Python call into the environments. What each op
costs to dispatch is most of it, so two defaults of TensorFlow's are changed for training:

- One inter-op thread: the executor runs the next op on its own thread instead of handing it to
  a pool. Ops themselves still use all cores (intra-op threads, e.g. XLA's update).
- oneDNN's custom ops off: made for large tensors, they cost more per call than TensorFlow's own
  kernels on these small ones (and make results differ slightly by CPU).

Measured with benchmarks/speed.py's rollout step of 16 Pendulums on a 2-core CPU: 0.82 ms with
TensorFlow's defaults, 0.70 ms with one inter-op thread, 0.66 ms with both; the CNN+GRU policy of
`minigrid` is not slowed (8.5 ms either way). TensorFlow reads both variables when it loads; a
value the user set is kept.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

DEFAULTS = {"TF_NUM_INTEROP_THREADS": "1", "TF_ENABLE_ONEDNN_OPTS": "0"}


def configure(environ: MutableMapping[str, str] = os.environ) -> dict[str, str]:
    """Set each of `DEFAULTS` that `environ` lacks; returns the ones set.

    Does nothing to a TensorFlow that is already loaded (it read the variables then).
    """
    added = {key: value for key, value in DEFAULTS.items() if key not in environ}
    environ.update(added)
    return added
