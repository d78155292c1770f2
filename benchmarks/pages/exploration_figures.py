"""The exploration page's plots: per task, each arm's training success rate against env
steps, the IQM over runs with its 95% bootstrap interval shaded."""

from __future__ import annotations

import os

from agents.multirun import aggregates
from benchmarks.pages.exploration_runs import ARMS, TASKS, named, solved_by_success
from benchmarks.pages.plots import Plot, save


def aligned(curves: list[list[list[float]]]) -> tuple[list[float], list[list[float]]]:
    """Curves of (env steps, score) put on the env steps any of them reports, up to the last
    step all of them reach; returns (steps, one row of scores per curve).

    A report is skipped when no episode ended in its window, so seeds report at different steps:
    each curve holds its last report until its next one (its first report before it).
    """
    import numpy as np

    end = min(curve[-1][0] for curve in curves)
    steps = sorted({point[0] for curve in curves for point in curve if point[0] <= end})
    rows = []
    for curve in curves:
        at, score = np.asarray(curve, dtype=float).T
        index = np.searchsorted(at, steps, side="right") - 1
        rows.append(score[np.maximum(index, 0)].tolist())
    return steps, rows


def figure(runs: list[dict], path: str) -> str:
    """Each arm's training success rate against env steps (its training return where a run
    reported no success rate): the IQM over every run counted, its 95% bootstrap interval
    shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    key = "success_curve" if solved_by_success(runs) else "curve"
    fig, axis = plt.subplots(figsize=(6, 3.6))
    colors = ("tab:blue", "tab:gray", "tab:orange", "tab:green", "tab:purple")
    for arm, color in zip(ARMS, colors, strict=True):
        curves = [run[key] for run in runs if run["arm"] == arm and run[key]]
        if not curves:
            continue
        steps, rows = aligned(curves)
        columns = np.asarray(rows).T  # One row of seeds per reported env step.
        bands = np.array([aggregates.bootstrap_ci(c, aggregates.iqm, reps=1_000) for c in columns])
        label = f"{arm} ({len(curves)} run{'s' if len(curves) > 1 else ''})"
        axis.plot(steps, [aggregates.iqm(c) for c in columns], color=color, label=label)
        axis.fill_between(steps, bands[:, 0], bands[:, 1], color=color, alpha=0.2)
    ylabel = "training success rate" if key == "success_curve" else "training return"
    axis.set(xlabel="env steps", ylabel=f"{ylabel}, IQM", title=runs[0]["env_id"], ylim=(0, 1))
    axis.legend(loc="lower right")
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)
    return path


def plots(records: list[dict], page: str) -> list[Plot]:
    """The plots of the page at `page` (PNG files beside it), one per task, of the runs the
    page's tables show (`named`)."""
    found = []
    for task_runs, name in figured(named(records)):
        path = os.path.join(os.path.dirname(page), name)
        draw = lambda r=task_runs, p=path: figure(r, p)  # noqa: E731
        found.append(Plot(path, task_runs, draw, code=(figure, aligned, solved_by_success)))
    return found


def figured(runs: list[dict]) -> list[tuple[list[dict], str]]:
    """(its runs, plot file name) of each task with runs, in task order."""
    found = [(task, [r for r in runs if r["task"] == task]) for task in TASKS]
    return [(mine, f"exploration_{task}.png") for task, mine in found if mine]
