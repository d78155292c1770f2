"""docs/results/navix.md, from the records of ours beside NAVIX (its newest sitting)."""

from __future__ import annotations

import os
import statistics

from benchmarks import common

PAGE = os.path.join(common.ROOT, "docs", "results", "navix.md")
RECORDS = os.path.join(common.RESULTS, "navix.jsonl")
SIDES = {
    "ours": "ours, `--config=doorkey_native` (128 envs x 128 steps, 4 epochs, 128-unit MLPs)",
    "navix": "NAVIX, `navix.agents.PPO` defaults (16 envs x 128 steps, 1 epoch, 64-unit MLPs)",
    "ours-navix-sizes": "ours at NAVIX's PPO sizes (16 envs x 128 steps, 1 epoch, 64-unit MLPs)",
}


def _loads(rows: list[dict]) -> str:
    loads = [row["load"] for row in rows]
    low, high = min(loads), max(loads)
    return f"{low:.1f}" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f}-{high:.1f}"


def _share(value: float | None, digits: int) -> str:
    return "no episode ended" if value is None else f"{value:.{digits}f}"


def _median(rows: list[dict], key: str) -> float:
    return statistics.median(row[key] for row in rows)


def step_table(rows: list[dict]) -> str:
    """Env-only figures, one row per env id: each side's median over its rounds."""
    lines = [
        "| env id | envs | ours (env steps/s) | NAVIX (env steps/s) | ours / NAVIX | "
        "compile s, ours | compile s, NAVIX | rounds | load (1 min) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    steps = [row for row in rows if row["kind"] == "step"]
    for env_id in dict.fromkeys(row["env_id"] for row in steps):
        of = {side: [r for r in steps if r["env_id"] == env_id and r["side"] == side]
              for side in ("ours", "navix")}  # fmt: skip
        if not of["ours"] or not of["navix"]:
            continue
        ours, navix = (
            _median(of["ours"], "steps_per_second"),
            _median(of["navix"], "steps_per_second"),
        )
        lines.append(
            f"| {env_id} | {of['ours'][0]['envs']:,} | {ours:,.0f} | {navix:,.0f} | "
            f"{ours / navix:.2f}x | {_median(of['ours'], 'compile_seconds'):.1f} | "
            f"{_median(of['navix'], 'compile_seconds'):.1f} | {len(of['ours'])} | "
            f"{_loads(of['ours'] + of['navix'])} |"
        )
    return "\n".join(lines)


def ppo_table(rows: list[dict]) -> str:
    """PPO figures, one row per run."""
    lines = [
        "| side | seed | env steps | wall s (process) | env steps/s (process) | "
        "env steps/s (training calls) | final success (sampled) | final return | episodes | "
        "load (1 min) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        if row["kind"] != "ppo":
            continue
        lines.append(
            f"| {SIDES.get(row['side'], row['side'])} | {row['seed']} | {row['steps']:,} | "
            f"{row['process_seconds']:.1f} | {row['steps_per_second']:,.0f} | "
            f"{row['train_steps_per_second']:,.0f} | {_share(row['final_success'], 2)} | "
            f"{_share(row['final_return'], 3)} | {row['episodes']} | {row['load']:.1f} |"
        )
    return "\n".join(lines)


def ppo_medians(rows: list[dict]) -> str:
    """Each side's median process env steps/s over its PPO runs, one line."""
    runs = [row for row in rows if row["kind"] == "ppo"]
    named = {"ours": "ours", "navix": "NAVIX", "ours-navix-sizes": "ours at NAVIX's sizes"}
    parts = []
    for side in dict.fromkeys(row["side"] for row in runs):
        of = [row for row in runs if row["side"] == side]
        parts.append(
            f"{named.get(side, side)} {_median(of, 'steps_per_second'):,.0f} "
            f"({_median(of, 'train_steps_per_second'):,.0f} in training calls)"
        )
    return f"Median env steps/s over the runs, process from spawn to exit: {'; '.join(parts)}."


def counted(records: list[dict], rows: list[dict]) -> str:
    """Which records the page counts, and how many of the file's it leaves out."""
    left = len(records) - len(rows)
    return (
        f"The page counts the newest sitting's {len(rows)} records; the records file holds "
        f"{left} more, of earlier sittings, which it does not count."
        if left
        else f"The page counts the newest sitting's {len(rows)} records, all the file holds."
    )


def versions(rows: list[dict]) -> str:
    """The packages each side ran, as its records name them."""
    navix = next((row["versions"] for row in rows if row["side"] == "navix"), {})
    named = ", ".join(f"{name} {version}" for name, version in navix.items())
    return f"TensorFlow {rows[0].get('tensorflow', '?')} (ours); {named or 'not recorded'} (NAVIX)"


def page(records: list[dict]) -> str:
    """docs/results/navix.md from the records of the newest sitting of the benchmark."""
    rows = common.sitting(records)
    first = rows[0]
    ppo = [row for row in rows if row["kind"] == "ppo"]
    budget = f"{ppo[0]['budget']:,}" if ppo else "no"
    text = [
        "# Ours beside NAVIX",
        "",
        "[NAVIX](https://github.com/epignatelli/navix) is MiniGrid as JAX arrays, with its own",
        "PPO (`navix.agents`). Both run here on CPU on the same cores, one whole process at a",
        "time, NAVIX from a venv of its own (`benchmarks/navix_driver.py`). Generated by",
        "`python -m benchmarks.navix_peer --page` from `benchmarks/results/navix.jsonl`.",
        "",
        "```sh",
        "python3 -m venv /tmp/navix-venv && /tmp/navix-venv/bin/pip install navix==0.7.4",
        "python -m benchmarks.navix_peer --navix-python /tmp/navix-venv/bin/python --page",
        "```",
        "",
        f"{first['date']} | {first['machine']} | commit {first['commit']} | {versions(rows)}",
        "",
        counted(records, rows),
        "",
        "## Env only",
        "",
        "Uniformly random actions in one compiled call of `--steps` batch steps (ours: one XLA",
        "program of the native envs, finished episodes restarted from minigrid's layout bank;",
        "NAVIX: `jax.jit` of a `lax.scan` over `jax.vmap(env.step)`, its autoreset included).",
        "Each figure is the median env steps/s of 5 calls after a compiling one, whose seconds",
        "are the compile column; the median over rounds where there are several.",
        "",
        step_table(rows),
        "",
        "## PPO on MiniGrid-DoorKey-8x8",
        "",
        f"{budget} env steps a run, each side's own PPO with its own defaults, and ours again at",
        "NAVIX's sizes. The wall time is the process from spawn to exit, compiling included",
        "(ours from an empty XLA cache, as NAVIX compiles in every process); the training-calls",
        "rate leaves compiling out (ours: the median of its training reports; NAVIX: its whole",
        "`train` call after compiling). Success and return are the sampled training policy's,",
        "over the episodes that ended in the last 65,536 env steps.",
        "",
        ppo_table(rows),
        "",
        ppo_medians(rows),
        "",
        "## What differs",
        "",
        "- **Different PPO implementations and hyperparameters.** NAVIX's defaults pass over",
        "  each sample once where ours pass four times, through MLPs half as wide, so they spend",
        "  far less compute per env step; the row at NAVIX's sizes runs ours with those sizes,",
        "  its learning rate and linear annealing. Success at one budget and one seed says",
        "  little about either algorithm.",
        "- **The same task, not the same env.** Both are DoorKey-8x8 with minigrid's time limit",
        "  (NAVIX's `make` defaults to 100 steps; the driver passes 10 x size x size) and a",
        "  symbolic 7x7 first-person view, but NAVIX's view is a crop centred on the agent with",
        "  no occlusion, where ours is minigrid's (the agent at the bottom, walls hiding what is",
        "  behind them); NAVIX draws its layouts in the call, ours from a bank of minigrid's.",
        "  NAVIX's reward is 1 at the goal, ours minigrid's 1 - 0.9 t / T.",
        "- **CPU only, compile apart.** Both are XLA programs on the same 2 cores; compile",
        "  seconds are reported separately and the process wall time includes them and each",
        "  side's imports. Other processes may load the machine: each row carries the load.",
    ]
    return "\n".join(text) + "\n"
