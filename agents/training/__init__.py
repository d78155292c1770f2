"""The library's training run: `Trainer` owns a run; the command line and `agents.train` use it.

TensorFlow loads in `Trainer.train`; its process settings are made first (by `agents.tools`, which
this package imports, and again for the run's agent family).
"""

from agents.training.callbacks import Callback, KeepBestPolicy, StopOnNoImprovement, StopOnScore
from agents.training.train_result import FinishedRunError, TrainingError, TrainResult
from agents.training.trainer import Trainer

__all__ = [
    "Callback",
    "FinishedRunError",
    "KeepBestPolicy",
    "StopOnNoImprovement",
    "StopOnScore",
    "TrainResult",
    "Trainer",
    "TrainingError",
]
