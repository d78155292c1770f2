"""What a training run shows in TensorBoard, and the consumer of the report stream that writes it.

Tags are grouped so that TensorBoard's cards sort by kind: `train/...` and `eval/...` (scores,
episode lengths, rollout diagnostics, histograms of the rollout), `loss/...` (the update's losses
and their diagnostics) and `rnd/...` (the exploration bonus); the config is in the hparams
plugin. Every summary's step is the number of training env steps.

`TensorBoardLog` is one consumer of the report stream, beside the console and metrics.jsonl:
every report of a train or eval phase is written as it is printed (floats as scalars, arrays as
histograms, under the tags of `tag`); the first evaluation also names the policy it scores
(`eval/policy` in the Text tab: the mode, or samples). TensorFlow's event writer drops a write
that the disk refuses without raising, so after each flush the events file must have grown; if
not, the write failed, as a metrics.jsonl write that fails (see `loop.train`).
"""

from __future__ import annotations

import contextlib
import glob
import math
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import tensorflow as tf
from tensorboard.plugins.hparams import api as hp

from agents.tools.loop import write_values
from agents.tools.reports import Report, SummaryError, summary_error
from agents.training.callbacks import Callback
from agents.training.train_result import TrainingError

if TYPE_CHECKING:  # The Trainer's callback: the Trainer imports this module.
    from agents.training.trainer import Trainer

LOSS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "grad_norm")
RND = (
    "predictor_loss",
    "intrinsic_reward",
    "value_int",
    "value_ext",
    "explained_variance_int",
    "visited_cells",
)
UNLOGGED = ("env_steps",)  # The x axis of every summary already.
# Fields of the rollout shown as histograms (the RND agent adds `value_int`).
ROLLOUT_FIELDS = ("action", "value", "value_int", "advantage", "log_prob")


def tag(phase: str, name: str) -> str | None:
    """The summary tag of metric `name` of `phase`, or None for one not written.

    Args:
        phase: "train" or "eval".
        name: A metric's name, e.g. "policy_loss".

    Returns:
        E.g. "loss/policy_loss", "rnd/intrinsic_reward", "eval/mean_score".
    """
    if name in UNLOGGED:
        return None
    if name in LOSS:
        return f"loss/{name}"
    if name in RND:
        return f"rnd/{name}"
    return f"{phase}/{name}"


def histograms(rollout: Mapping[str, Any], log_std: Any = None) -> dict[str, np.ndarray]:
    """Histogram metrics of the latest rollout: actions, values, log-probabilities, log-std.

    Args:
        rollout: Fields of the rollout buffer, [time, batch, ...] arrays.
        log_std: The Gaussian policy's log-std variable, if it has one.

    Returns:
        Name -> flat float32 array; `TensorBoardLog` writes arrays as histograms.
    """
    result = {
        f"rollout_{key}": np.asarray(rollout[key], np.float32).ravel()
        for key in ROLLOUT_FIELDS
        if key in rollout
    }
    if log_std is not None:
        result["policy_log_std"] = np.asarray(log_std, np.float32).ravel()
    return result


def hparams(config: Mapping[str, Any]) -> dict[str, bool | int | float | str]:
    """The config as TensorBoard's hparams plugin accepts it (lists and None as strings)."""
    accepted = (bool, int, float, str)
    return {
        key: value if isinstance(value, accepted) else str(value) for key, value in config.items()
    }


def write_hparams(run_dir: str, config: Mapping[str, Any]) -> None:
    """Record the run's config in TensorBoard's hparams plugin, in the run directory itself.

    The plugin shows the config beside the run's metrics (`train/...` and `eval/...`, written in
    the same directory), one trial and one TensorBoard entry per run.
    """
    writer = tf.summary.create_file_writer(run_dir)
    with writer.as_default():
        hp.hparams(hparams(config), trial_id=os.path.basename(os.path.normpath(run_dir)))
    writer.close()


_EVENTS = "events.out.tfevents.*"
_POLICIES = {"mode": "mode (deterministic)", "sample": "samples (eval_policy: sample)"}


class TensorBoardLog(Callback):
    """The report stream in TensorBoard, in the run directory itself (one entry per run); as a
    consumer of the run's reports, a failed write stops the run (saved) with one line.

    Args:
        run_dir: Where the events file goes; None writes nothing (the ranks other than 0).

    Raises:
        SummaryError: The writer cannot be made (e.g. a full disk or a read-only directory).
    """

    def __init__(self, run_dir: str | None) -> None:
        self._dir = run_dir
        self._writer = None
        self._path, self._size = None, 0
        self._policy_written = False
        if run_dir is None:
            return
        before = set(glob.glob(os.path.join(run_dir, _EVENTS)))
        try:
            self._writer = tf.summary.create_file_writer(run_dir)
            self._writer.flush()
        except (OSError, tf.errors.OpError) as error:
            raise summary_error(run_dir, error) from None
        made = set(glob.glob(os.path.join(run_dir, _EVENTS))) - before
        if made:  # The writer's own file (another writer may add files beside it).
            self._path = max(made, key=os.path.getmtime)
            self._size = os.path.getsize(self._path)

    def on_report(self, run: Trainer, report: Report) -> None:
        try:
            policy = (run.config or {}).get("eval_policy")
            if report.phase == "eval" and policy and not self._policy_written:
                self.write_policy(policy, int(report.metrics["env_steps"]))
            self.write(report, int(report.metrics["env_steps"]))
        except SummaryError as error:
            raise TrainingError(f"{error}; stopped at env step {run.env_steps}") from None

    def on_close(self, run: Trainer) -> None:
        self.close()

    def write(self, report: Report, env_steps: int) -> None:
        """Write `report`'s figures at `env_steps`.

        Raises:
            SummaryError: The write failed, or the events file did not grow (a full disk).
        """
        if self._writer is None:
            return
        values = [(name, getattr(report, field)) for name, field in _EPISODES]
        values = [(name, value) for name, value in values if not math.isnan(value)]
        values += list(report.metrics.items())
        tagged = [(tag(report.phase, name), value) for name, value in values]
        if write_values(self._writer, tagged, env_steps, self._dir):
            self._check_growth()

    def write_policy(self, eval_policy: str, env_steps: int) -> None:
        """Name the evaluation policy in the Text tab (`eval/policy`), once: the `eval/` scores
        are those of the policy's mode, or of its samples.

        Raises:
            SummaryError: The write failed.
        """
        if self._writer is None:
            return
        text = f"Evaluation acts by the policy's {_POLICIES.get(eval_policy, eval_policy)}."
        try:
            with self._writer.as_default(step=env_steps):
                tf.summary.text(tag("eval", "policy"), text)
            self._writer.flush()
        except (OSError, tf.errors.OpError) as error:
            raise summary_error(self._dir, error) from None
        self._policy_written = True

    def _check_growth(self) -> None:
        if self._path is None:
            return
        try:
            size = os.path.getsize(self._path)
        except FileNotFoundError:  # Moved or deleted with the run directory: the run says so.
            self._path = None
            return
        except OSError as error:
            raise SummaryError(
                f"Cannot write summaries to {self._dir!r} ({error.strerror}: {self._path})"
            ) from None
        if size <= self._size:
            raise SummaryError(
                f"Cannot write summaries to {self._dir!r} (its events file stopped growing at "
                f"{size} bytes: is the disk full?)"
            )
        self._size = size

    def close(self) -> None:
        """Flush and close the writer (a failure here loses nothing already checked)."""
        if self._writer is not None:
            with contextlib.suppress(OSError, tf.errors.OpError):
                self._writer.close()
            self._writer = None


# Episode figures of a report and their metric names (tagged `<phase>/mean_score`, ...).
_EPISODES = (("mean_score", "score"), ("mean_length", "length"), ("success_rate", "success_rate"))
