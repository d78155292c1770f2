"""The library's training run: `Trainer` owns a run; the command line and `agents.train` use it.

Plain Python until a run is built (TensorFlow loads in `Trainer.train`).
"""

from agents.training.trainer import FinishedRunError, Trainer, TrainingError, TrainResult

__all__ = ["FinishedRunError", "TrainResult", "Trainer", "TrainingError"]
