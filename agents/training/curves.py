"""Learning curves of a run: the scalars training writes to TensorBoard, read back and drawn.

`read_scalars` and `read_curve` read the event files of a run directory (a run writes its train
and eval summaries in the run directory, tagged `train/...` and `eval/...`; runs written before
that have them in `train/` and `eval/`, read too); `plot_run` saves a run's train and eval
`mean_score` against env steps as a PNG.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.util import tensor_util

from agents.config.errors import UsageError
from agents.runtime import tf_loading

Curve = tuple[np.ndarray, np.ndarray]  # (x, y) of one line.


def has_events(run_dir: str, phase: str) -> bool:
    """Whether the run holds TensorBoard event files where `phase` writes them."""
    return bool(_event_dirs(run_dir, phase))


def _event_dirs(run_dir: str, phase: str) -> list[str]:
    """The directories with event files of `phase`: `<run_dir>/<phase>` (runs written before
    one TensorBoard entry per run), then the run directory."""
    places = (os.path.join(run_dir, phase), run_dir)
    return [place for place in places if glob.glob(os.path.join(place, "events.out.tfevents.*"))]


def read_scalars(run_dir: str, phase: str, tag: str) -> Curve:
    """The scalar summaries `tag` of one phase of a run, ordered by summary step.

    Args:
        run_dir: The run directory (holding `train/` and `eval/`).
        phase: The phase, e.g. "train" or "eval" (its subdirectory in runs written before).
        tag: The scalar's name, e.g. "mean_score".

    Returns:
        `(steps, values)`: int64 and float64 arrays of equal length; empty if the phase never wrote
        `tag`. A step written twice (e.g. by a resumed run) keeps its latest value.

    Raises:
        UsageError: The run holds no event files.
    """
    places = _event_dirs(run_dir, phase)
    if not places:
        raise UsageError(f"No TensorBoard event files in {run_dir!r}.")
    # The accumulator reads the events with TensorFlow when it is installed (tensorboard loads
    # it on first use), so TensorFlow is loaded first, without its log lines.
    tf_loading.import_tensorflow()

    latest = {}  # A resumed older run's newer events are in the run directory: they win.
    for place in places:
        # size_guidance 0 keeps every event instead of a reservoir sample.
        accumulator = event_accumulator.EventAccumulator(
            place, size_guidance={event_accumulator.TENSORS: 0}
        )
        accumulator.Reload()
        if tag in accumulator.Tags()[event_accumulator.TENSORS]:
            for event in accumulator.Tensors(tag):
                latest[event.step] = float(tensor_util.make_ndarray(event.tensor_proto))
    steps = np.array(sorted(latest), np.int64)
    return steps, np.array([latest[step] for step in steps], np.float64)


def read_curve(run_dir: str, phase: str, name: str = "mean_score") -> Curve:
    """The scalar `<phase>/<name>` of one phase against training env steps.

    Summaries are numbered by training env steps.

    Returns:
        `(env_steps, values)` float64 arrays.
    """
    steps, values = read_scalars(run_dir, phase, f"{phase}/{name}")
    return steps.astype(np.float64), values


def new_figure() -> Any:
    """A matplotlib Figure of the size of every plot the package draws (7 x 4.5 in).

    A bare Figure renders with Agg and touches no pyplot state or display. matplotlib loads
    here, on the first plot: a run that draws none never pays for its import.
    """
    from matplotlib.figure import Figure

    return Figure(figsize=(7, 4.5), layout="constrained")


def plot_runs(
    curves: Mapping[str, Curve],
    path: str,
    title: str,
    ylabel: str = "mean score",
    target: float | None = None,
) -> str:
    """Save line plots of `curves` (label -> (env steps, values)) as a PNG; returns `path`.

    Args:
        curves: One line per label; empty curves are left out of the plot.
        path: Output file; its directory is created if needed.
        title: The figure's title.
        ylabel: Label of the y axis.
        target: If set, a dashed horizontal line at this value.
    """
    figure = new_figure()
    axes = figure.add_subplot()
    for label, (x, y) in curves.items():
        if len(x):
            axes.plot(x, y, marker="." if len(x) < 30 else None, label=label)
    if target is not None:
        axes.axhline(target, color="gray", linestyle="--", linewidth=1, label=f"target {target:g}")
    axes.set(title=title, xlabel="env steps", ylabel=ylabel)
    axes.grid(alpha=0.3)
    if axes.get_legend_handles_labels()[0]:
        axes.legend()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    figure.savefig(path, dpi=100)
    return path


def plot_run(run_dir: str, path: str | None = None) -> str:
    """Save the train and eval `mean_score` of a run as a PNG; returns its path.

    Raises:
        UsageError: The run has no event files, or no `mean_score` in any phase.
    """
    phases = [phase for phase in ("train", "eval") if has_events(run_dir, phase)]
    if not phases:
        raise UsageError(f"No TensorBoard event files in {run_dir!r} (looked in train/ and eval/).")
    curves = {phase: read_curve(run_dir, phase) for phase in phases}
    if not any(len(x) for x, _ in curves.values()):
        raise UsageError(f"No mean_score summaries in {run_dir!r} (no episode finished yet?).")
    path = path or os.path.join(run_dir, "learning_curve.png")
    title = os.path.basename(os.path.normpath(run_dir))
    return plot_runs(curves, path, title)
