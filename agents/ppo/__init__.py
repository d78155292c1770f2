"""Proximal Policy Optimization: the algorithm, its losses, networks and normalizers, and a run's
policy restored from its checkpoints."""

# Its modules load TensorFlow: its process settings are made first (nothing once it is loaded).
from agents.runtime import tf_loading as _tf_loading  # noqa: E402

_tf_loading.prepare()
