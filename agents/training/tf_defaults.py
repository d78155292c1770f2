"""TensorFlow's process settings for the agent family being trained, made before TensorFlow loads.

A `ppo` rollout step is a few hundred small ops on [num_envs, ...] tensors (the network, sampling,
the normalizers, the rollout buffer) around one Python call into the environments, so what each op
costs to dispatch is most of it. oneDNN's custom ops, made for large tensors, cost more per call
than TensorFlow's own kernels on these small ones (and make results differ slightly by CPU), so
they are off for `ppo`. The pixel agent's convolutions are large enough to gain from them, so they
are on for `rnd_ppo` (see `agents.ppo.compilation`; `benchmarks/speed_matrix.py` measures both).

Also left to the user: one inter-op thread (`TF_NUM_INTEROP_THREADS=1`) speeds up the rollout
step of tiny networks but slows the XLA update of larger ones.

TensorFlow reads these variables when it loads; `tf_loading.prepare` sets them, keeping a value
the user set.
"""

from __future__ import annotations

from agents.ppo import compilation

ONEDNN = "TF_ENABLE_ONEDNN_OPTS"


def defaults(agent: str = "ppo") -> dict[str, str]:
    """The environment variables that suit `agent`."""
    return {ONEDNN: "1" if compilation.onednn(agent) else "0"}
