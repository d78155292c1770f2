"""Several runs compared: grouped by config (or a key), their eval curves and final scores
aggregated over seeds (`aggregates`), drawn and tabled."""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from agents.config import files
from agents.config.errors import UsageError
from agents.multirun import aggregates
from agents.training.curves import new_figure
from agents.training.metrics_log import read_metrics

X_AXES = ("env_steps", "wall_time")


class RunCurve(NamedTuple):
    """One run's evaluations, read from its `metrics.jsonl` and `config.yaml`.

    `trained` is the last env step of any report and `budget` the config's `train_steps`: a run
    below its budget is still training, or was stopped, and its last eval is not a final one.
    """

    run_dir: str
    group: str
    seed: int | None
    env_steps: np.ndarray
    wall_time: np.ndarray
    scores: np.ndarray
    trained: int = 0
    budget: int = 0

    @property
    def finished(self) -> bool:
        """Whether the run trained its whole budget."""
        return self.trained >= self.budget


def find_runs(patterns: Sequence[str]) -> list[str]:
    """The run directories that `patterns` (paths or globs) name, in order, each once.

    Raises:
        UsageError: A pattern that names no run directory.
    """
    runs: list[str] = []
    for pattern in patterns:
        found = sorted(
            path
            for path in glob.glob(pattern)
            if os.path.isfile(os.path.join(path, files.CONFIG_FILE))
        )
        if not found:
            raise UsageError(f"{pattern!r} names no run directory (one holding config.yaml).")
        runs += [path for path in found if path not in runs]
    return runs


def read_run(run_dir: str, group_by: str = "config") -> RunCurve:
    """The eval curve of a run, labelled by its config name or by the value of config key
    `group_by`.

    Raises:
        UsageError: A damaged config.yaml, or an unknown key `group_by`.
    """
    path = os.path.join(run_dir, files.CONFIG_FILE)
    name, config, _ = files.read_config_file(path)
    if group_by == "config":
        group = name
    elif group_by in config:
        group = f"{group_by}={config[group_by]}"
    else:
        raise UsageError(f"Unknown config key {group_by!r} to group runs by.")
    records = read_metrics(run_dir)
    evals = [record for record in records if record.get("phase") == "eval"]
    evals = [record for record in evals if record.get("score") is not None]
    column = lambda key: np.array([float(r.get(key, np.nan)) for r in evals])  # noqa: E731
    return RunCurve(
        run_dir,
        group,
        files.saved_seed(path),
        column("env_steps"),
        column("wall_time"),
        column("score"),
        max((int(record.get("env_steps", 0)) for record in records), default=0),
        int(config.get("train_steps", 0)),
    )


def group_runs(runs: Sequence[RunCurve]) -> dict[str, list[RunCurve]]:
    """Runs by group label, in the order groups first appear."""
    groups: dict[str, list[RunCurve]] = {}
    for run in runs:
        groups.setdefault(run.group, []).append(run)
    return groups


def final_scores(runs: Sequence[RunCurve]) -> np.ndarray:
    """Each finished run's last eval score (runs that never evaluated, or have not trained
    their budget, are left out)."""
    return np.array([run.scores[-1] for run in runs if len(run.scores) and run.finished])


def table(groups: dict[str, list[RunCurve]], reps: int = 10_000) -> list[dict[str, Any]]:
    """One row per group: runs, mean and IQM of the final eval scores with 95% bootstrap CIs,
    and the group's unfinished runs (left out of the figures)."""
    rows = []
    for label, runs in groups.items():
        unfinished = [run for run in runs if not run.finished]
        scores = final_scores(runs)
        if not len(scores):
            rows.append({"group": label, "runs": 0, "unfinished": unfinished})
            continue
        summary = aggregates.summarize(scores, reps)
        rows.append({"group": label, **summary._asdict(), "unfinished": unfinished})
    return rows


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """The table as text: group, runs, mean [CI], IQM [CI], std of the final eval scores."""
    lines = [f"{'group':<24} {'runs':>4}  {'mean [95% CI]':<28} {'IQM [95% CI]':<28} {'std':>9}"]
    for row in rows:
        if not row["runs"]:
            lines.append(f"{row['group']:<24} {0:>4}  (no finished run with an evaluation)")
            continue
        mean = _with_ci(row["mean"], row["mean_ci"])
        iqm = _with_ci(row["iqm"], row["iqm_ci"])
        lines.append(
            f"{row['group']:<24} {row['runs']:>4}  {mean:<28} {iqm:<28} {row['std']:>9.2f}"
        )
    unfinished = [run for row in rows for run in row.get("unfinished", [])]
    if unfinished:
        lines.append("not finished (still training or stopped; left out of the table):")
        lines += [f"  {run.run_dir}: env step {run.trained} of {run.budget}" for run in unfinished]
    return "\n".join(lines)


def _draw_each(axes, label: str, curves: list) -> None:
    """Each run's own curve, in one colour, for a group without a common range of x."""
    color = None
    for index, (x, y) in enumerate(curves):
        name = None if index else f"{label} ({len(curves)} runs without a common range: each run)"
        color = axes.plot(x, y, marker=".", color=color, alpha=0.7, label=name)[0].get_color()


def _with_ci(value: float, interval: tuple[float, float]) -> str:
    return f"{value:.2f} [{interval[0]:.2f}, {interval[1]:.2f}]"


def plot(
    groups: dict[str, list[RunCurve]], path: str, x: str = "env_steps", reps: int = 2_000
) -> str:
    """Draw each group's mean eval score with its 95% bootstrap band over runs; PNG or SVG by
    `path`'s extension. Returns `path`.

    A group whose runs share no range of `x` (against wall time, runs that evaluated once at
    different times) has no mean curve: each of its runs is drawn alone, as the legend says.

    Raises:
        UsageError: An unknown x axis, or no group with evaluations.
    """
    if x not in X_AXES:
        raise UsageError(f"Unknown x axis {x!r}; accepted: {', '.join(X_AXES)}.")
    if os.path.splitext(path)[1].lower() not in (".png", ".svg"):
        raise UsageError(f"Plot file {path!r}: give a .png or .svg path.")
    figure = new_figure()
    axes = figure.add_subplot()
    drawn = 0
    for label, runs in groups.items():
        curves = [(getattr(run, x), run.scores) for run in runs if len(run.scores)]
        if not curves:
            continue
        try:
            grid, mean, low, high = aggregates.band(curves, reps)
        except ValueError:  # E.g. against wall time, runs of one evaluation each.
            _draw_each(axes, label, curves)
        else:
            marker = "." if len(grid) < 30 else None
            line = axes.plot(grid, mean, marker=marker, label=f"{label} ({len(curves)} runs)")[0]
            axes.fill_between(grid, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
        drawn += 1
    if not drawn:
        raise UsageError("None of the runs has an evaluation to draw.")
    xlabel = "env steps" if x == "env_steps" else "wall time (s)"
    axes.set(xlabel=xlabel, ylabel="eval mean score", title="mean and 95% bootstrap CI over runs")
    axes.grid(alpha=0.3)
    axes.legend()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    figure.savefig(path, dpi=100)
    return path
