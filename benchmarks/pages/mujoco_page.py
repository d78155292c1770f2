"""docs/results/mujoco.md, from the MuJoCo benchmark's records (the newest sitting per task)."""

from __future__ import annotations

import os
import statistics
from typing import NamedTuple

import numpy as np

from benchmarks import common
from benchmarks.pages import claims
from benchmarks.pages.plots import Plot, save

PAGE = os.path.join(common.ROOT, "docs", "results", "mujoco.md")
RECORDS = os.path.join(common.RESULTS, "mujoco.jsonl")


class Reference(NamedTuple):
    """A published PPO score that the mean eval over seeds must reach, and its source."""

    env: str
    source: str | None  # CleanRL, TF-Agents or RL-Zoo; None: no reference, report only.
    mean_eval: float | None

    def collapse(self) -> float:
        """The score each seed must reach: half the reference (twice it, for a negative one)."""
        return self.mean_eval / 2 if self.mean_eval > 0 else self.mean_eval * 2


REFERENCES = {
    "cheetah": Reference("HalfCheetah-v5", "TF-Agents", 4_239.0),
    "hopper": Reference("Hopper-v5", "TF-Agents", 2_530.0),
    "walker": Reference("Walker2d-v5", "TF-Agents", 2_971.0),
    "ant": Reference("Ant-v5", "RL-Zoo", 1_327.0),
    "reacher": Reference("Reacher-v5", "TF-Agents", -7.71),
    "humanoid": Reference("Humanoid-v5", None, None),
}
# Published PPO scores at 1M env steps as each source gives them (mean ± std over its seeds).
PUBLISHED = {
    "cheetah": ("2,906 ± 1,129", "4,239", "5,819 ± 664"),
    "hopper": ("2,052 ± 314", "2,530", "2,410 ± 10"),
    "walker": ("2,891 ± 231", "2,971", "3,479 ± 822"),
    "reacher": ("—", "-7.71", "—"),
    "ant": ("—", "—", "1,327 ± 452"),
    "humanoid": ("—", "—", "—"),
}


def summarize(runs: list[dict[str, float]]) -> dict[str, float]:
    evals = [run["eval_mean"] for run in runs]
    return dict(
        env_steps=max(run["env_steps"] for run in runs),
        mean_eval=statistics.fmean(evals),
        median_eval=claims.median(evals),
        worst_eval=min(evals),
        steps_per_second=claims.median(run["steps_per_second"] for run in runs),
    )


def checks(task: str, summary: dict[str, float]) -> list[tuple[bool, str]]:
    """(passed, description) of each check of `task` against its reference."""
    ref = REFERENCES[task]
    if ref.mean_eval is None:
        return []
    mean, worst, steps = summary["mean_eval"], summary["worst_eval"], summary["env_steps"]
    reference = f"{ref.source} {ref.mean_eval:g}"
    return [
        (mean >= ref.mean_eval, f"{ref.env} mean eval {mean:.1f} >= {reference}"),
        (
            worst >= ref.collapse(),
            f"{ref.env} worst seed {worst:.1f} >= {ref.collapse():g} (at {steps:,} steps)",
        ),
    ]


def save_curves(task: str, runs: dict[int, dict], path: str) -> str:
    """Saves a PNG of the eval curve over seeds (mean, min-max band); returns its path.

    Each seed's curve is its record's `curve`; the seeds are put on the grid of the env steps
    they share.
    """
    from matplotlib.figure import Figure

    curves = [np.array(run["curve"]).T for run in runs.values()]
    grid = np.array(sorted(set.intersection(*(set(steps.tolist()) for steps, _ in curves))))
    values = np.array([[dict(zip(s.tolist(), v))[x] for x in grid] for s, v in curves])
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    axes = figure.add_subplot()
    axes.plot(grid, values.mean(0), marker="." if len(grid) < 30 else None, label="mean")
    axes.fill_between(grid, values.min(0), values.max(0), alpha=0.25, label="min-max")
    ref = REFERENCES[task]
    if ref.mean_eval is not None:
        label = f"{ref.source} {ref.mean_eval:g}"
        axes.axhline(ref.mean_eval, color="gray", linestyle="--", linewidth=1, label=label)
    seeds = f"{len(curves)} seed{'s' if len(curves) > 1 else ''}"
    title = f"{ref.env}, {seeds}: deterministic eval return"
    axes.set(title=title, xlabel="env steps", ylabel="eval return")
    axes.grid(alpha=0.3)
    axes.legend()
    return save(figure, path)


def newest(records: list[dict]) -> dict[str, dict[int, dict]]:
    """task -> seed -> record, from the newest sitting that ran each task (in task order)."""
    found: dict[str, dict[int, dict]] = {}
    for task in [t for t in REFERENCES if any(r["task"] == t for r in records)]:
        mine = common.sitting([record for record in records if record["task"] == task])
        found[task] = {record["seed"]: record for record in mine}
    return found


def shown(records: list[dict]) -> list[dict]:
    """The records the page shows: each task's newest sitting."""
    return [run for by_seed in newest(records).values() for run in by_seed.values()]


def plots(records: list[dict], out: str = os.path.dirname(PAGE)) -> list[Plot]:
    """The page's plots (`<out>/mujoco_<task>.png`), drawn from the records it shows."""
    return [
        Plot(
            path,
            by_seed,
            lambda t=task, b=by_seed, p=path: save_curves(t, b, p),
            code=(save_curves,),
        )
        for task, by_seed in newest(records).items()
        for path in [os.path.join(out, f"mujoco_{task}.png")]
    ]


_INTRO = """# MuJoCo

Each (task, seed) trains its named config in a fresh process to the last whole rollout within
the budget, then the deterministic policy plays 20 fresh episodes of the task. Env steps/s is
training env steps over the loop's wall time (evaluation phases and tracing included). The
reference columns are the published PPO scores of CleanRL, TF-Agents and RL-Zoo (RL-Zoo's with
its per-task tuned settings for HalfCheetah, Hopper and Walker2d, its defaults for Ant, which it
does not tune); a task passes when the mean over seeds reaches TF-Agents' score
(RL-Zoo's for Ant, where TF-Agents publishes none) and no seed falls below half of it. Generated
from `benchmarks/results/mujoco.jsonl` by:

```sh
pip install -e ".[mujoco]"
python -m benchmarks.mujoco_scores --seeds 3 --parallel 2 --page
```
"""


def page(records: list[dict]) -> str:
    """docs/results/mujoco.md from the newest sitting of each task."""
    results = newest(records)
    lines = [_INTRO]
    if not results:
        return "\n".join([*lines, "No records yet.", ""])
    seeds = max(len(by_seed) for by_seed in results.values())
    names = [f"seed {seed}" for seed in range(seeds)]
    lines += [
        f"| task (config) | {' | '.join(names)} | mean | CleanRL | TF-Agents | RL-Zoo |",
        "| --- |" + " ---: |" * (seeds + 4),
    ]
    for task, by_seed in results.items():
        places = digits(task)
        cells = [
            f"{by_seed[s]['eval_mean']:,.{places}f} ± {by_seed[s]['eval_std']:,.{places}f}"
            if s in by_seed
            else ""
            for s in range(seeds)
        ]
        mean = statistics.fmean(run["eval_mean"] for run in by_seed.values())
        first = next(iter(by_seed.values()))
        label = f"{REFERENCES[task].env} (`{task}`, {first['env_steps']:,} env steps)"
        lines.append(
            f"| {label} | {' | '.join(cells)} | **{mean:,.{places}f}** | "
            f"{' | '.join(PUBLISHED[task])} |"
        )
    lines.append("")
    for task, by_seed in results.items():
        runs = [by_seed[seed] for seed in sorted(by_seed)]
        first, loads = runs[0], [run["load"] for run in runs]
        lines += [
            f"## {REFERENCES[task].env}",
            "",
            f"![{REFERENCES[task].env} eval curves](mujoco_{task}.png)",
            "",
            f"{first['date']} | {first['machine']} | commit {first['commit']} | load "
            f"{min(loads):.1f}-{max(loads):.1f} | {first['parallel']} run(s) at a time | "
            f"env_backend {first['env_backend']}",
            "",
            common.table(
                ["seed"] + [name for name, _ in common.RUN_COLUMNS],
                [
                    [str(run["seed"])] + [form.format(**run) for _, form in common.RUN_COLUMNS]
                    for run in runs
                ],
            ),
            "",
        ]
        lines += [
            f"- {'PASS' if passed else 'FAIL'} {text}"
            for passed, text in checks(task, summarize(runs))
        ]
        lines.append("")
    return "\n".join(lines)


def digits(task: str) -> int:
    """Decimals of a task's returns on the page (Reacher's are a few units)."""
    return 2 if task == "reacher" else 0
