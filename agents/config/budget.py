"""The training budget a config asks for, in the whole training calls a run can make.

A training call steps every env of every rank `rollout_length * rollouts_per_call` times, so a
run trains in multiples of `call_steps`. It trains exactly `train_steps` env steps when that is a
multiple, else the nearest multiple above it (and says so: `describe`). Schedules decay over the
budget, the steps that actually run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from agents.config.errors import UsageError


def call_steps(config: Mapping[str, Any], ranks: int = 1) -> int:
    """Env steps of one training call over all ranks."""
    return config["rollout_length"] * config["rollouts_per_call"] * rank_envs(config, ranks) * ranks


def rank_envs(config: Mapping[str, Any], ranks: int = 1) -> int:
    """Training envs of each rank: `num_agents`, or its share with `mpi_batch: global`.

    Raises:
        UsageError: `mpi_batch: global` with `num_agents` not a multiple of `ranks`.
    """
    envs = config["num_agents"]
    if ranks == 1 or config.get("mpi_batch", "per_rank") == "per_rank":
        return envs
    if envs % ranks:
        near = max(ranks, round(envs / ranks) * ranks)
        raise UsageError(
            f"mpi_batch=global splits num_agents={envs} over {ranks} ranks: num_agents must be "
            f"a multiple of {ranks} (e.g. {near}), or mpi_batch=per_rank."
        )
    return envs // ranks


def train_budget(config: Mapping[str, Any], ranks: int = 1) -> int:
    """The env steps a run trains: `train_steps` rounded up to whole training calls."""
    return round_up(config["train_steps"], call_steps(config, ranks))


def layout_draws(config: Mapping[str, Any], ranks: int = 1) -> int:
    """The most reset layouts each rank's training envs draw: one each at the first reset,
    then at most one per env and batch step (an episode ends at a step at most once)."""
    return rank_envs(config, ranks) + train_budget(config, ranks) // ranks


def describe(config: Mapping[str, Any], ranks: int = 1) -> str:
    """One line saying what is trained, e.g. `train_steps 2000 -> 2048 env steps (...)`."""
    asked, budget = config["train_steps"], train_budget(config, ranks)
    shape = f"{rank_envs(config, ranks)} envs x {config['rollout_length']} steps"
    if config["rollouts_per_call"] > 1:
        shape += f" x {config['rollouts_per_call']} rollouts"
    if ranks > 1:
        shape += f" x {ranks} ranks"
    calls = budget // call_steps(config, ranks)
    made = f"{calls} training call{'s' if calls > 1 else ''} of {shape}"
    if budget == asked:
        return f"train_steps {asked}: {made}."
    return f"train_steps {asked} -> {budget} env steps, rounded up to {made}."


def round_up(value: int, multiple: int) -> int:
    """The smallest positive multiple of `multiple` that is at least `value`."""
    return max(1, math.ceil(value / multiple)) * multiple


def report_steps(config: Mapping[str, Any], ranks: int = 1) -> int:
    """Env steps between train reports (console line, metrics.jsonl, callbacks, TensorBoard):
    `log_every` in whole training calls, at most a train phase (`train_every`); a phase also
    ends on a report, before its evaluation."""
    call = call_steps(config, ranks)
    return min(round_up(config["log_every"], call), round_up(config["train_every"], call))
