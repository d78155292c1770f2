"""How a process is set up for TensorFlow: its loading, process defaults and XLA's compile cache.

`prepare()` makes TensorFlow's process settings; call it before importing TensorFlow yourself
(a run, a loaded policy and the native envs call it when they first need TensorFlow).
"""

from agents.runtime.tf_loading import prepare

__all__ = ["prepare"]
