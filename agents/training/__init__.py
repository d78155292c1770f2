"""The library's training run: `Trainer` owns a run; the command line and `agents.train` use it.

Plain Python until a run is built (TensorFlow loads in `Trainer.train`).
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
