"""Agents kept between the runs of a process: a run of the same shapes reuses the compiled update.

TensorFlow keeps every XLA program it compiles until the process ends, keyed by the traced
function; a new agent traces a new update, so each `agents.train` call of a notebook left its
own program behind (tens of MB). A run that ends gives its agent back here; the next run whose
agent would be built from the same config and spaces takes it instead, with every variable set
to the values a new agent of its seed has (built for that, then dropped), so the run trains
exactly as with a new agent and calls the update already traced and compiled.

Only single-process runs share, and an agent is taken by one run at a time. A run's compiled
calls hold its envs too, so a run keeps its in-graph envs, agent and compiled calls here
together (see `Run`); a user's native env is never kept.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Hashable, Iterator, Mapping
from typing import Any

import numpy as np
import tensorflow as tf

MAX_AGENTS = 4  # Released agents kept; the least recently released go first.
MAX_BYTES = 256 * 2**20  # Their variables' bytes, in all, at most.

# Keys that only the run reads (the loop, evaluation, callbacks, env processes): runs that
# differ in them build equal agents.
RUN_ONLY_KEYS = frozenset(
    {
        "checkpoint_every",
        "env_processes",
        "env_timeout",
        "eval_agents",
        "eval_episodes",
        "keep_best_policy",
        "log_every",
        "patience",
        "stop_at_score",
        "train_every",
        "train_steps",  # The agent holds the budget in a variable (`PPO.train_budget`).
    }
)

# Key -> (agent, its variables, their bytes), the least recently released first.
_released: collections.OrderedDict[Hashable, tuple[Any, list, int]] = collections.OrderedDict()
_counts = collections.Counter()


def agent_key(config: Mapping[str, Any], observation_space, action_space) -> Hashable | None:
    """What makes two agents interchangeable: the config but its run-only keys, and the spaces.

    Returns None for a space whose bounds cannot be read (such an agent is never shared).
    """
    spaces = (_space_key(observation_space), _space_key(action_space))
    if None in spaces:
        return None
    items = tuple(
        (key, repr(value)) for key, value in sorted(config.items()) if key not in RUN_ONLY_KEYS
    )
    return items, spaces


def _space_key(space) -> Hashable | None:
    """A space's kind, shape, dtype and bounds (a packed dict's layout too), as bytes."""
    kind = type(space).__name__
    if hasattr(space, "low") and hasattr(space, "high"):  # Box and PackedDict.
        layout = repr(space.describe()) if hasattr(space, "describe") else ""
        low, high = np.asarray(space.low), np.asarray(space.high)
        return kind, space.shape, str(space.dtype), low.tobytes(), high.tobytes(), layout
    if hasattr(space, "nvec"):  # MultiDiscrete.
        return kind, np.asarray(space.nvec).tobytes(), np.asarray(space.start).tobytes()
    if hasattr(space, "n"):  # Discrete and MultiBinary.
        return kind, repr(space.n), repr(getattr(space, "start", 0))
    return None


@contextlib.contextmanager
def recording() -> Iterator[list]:
    """Collects every `tf.Variable` created inside, in creation order (a build's state)."""
    created: list = []

    def creator(next_creator, **kwargs):
        variable = next_creator(**kwargs)
        created.append(variable)
        return variable

    with tf.variable_creator_scope(creator):
        yield created


def adopt(key: Hashable | None, fresh: Any, created: list) -> tuple[Any, list]:
    """A released object of the same `key` holding the values of `fresh`'s variables, or
    `fresh` itself where none is kept or its variables do not match.

    Args:
        key: None: `fresh` is never shared.
        fresh: A new build (an agent, or a whole call's envs, agent and compiled calls).
        created: The variables its build created, in creation order (see `recording`).

    Returns:
        The object and its variables (give both to `release` when done).
    """
    kept = _released.pop(key, None) if key is not None else None
    if kept is not None and _assign(kept[1], created):
        _counts["reused"] += 1
        return kept[:2]
    _counts["built"] += 1
    return fresh, created


def _assign(targets: list, sources: list) -> bool:
    """Give each kept variable its new counterpart's value; False if the two do not match."""
    if len(targets) != len(sources):
        return False
    for target, source in zip(targets, sources):
        if target.shape != source.shape or target.dtype != source.dtype:
            return False
    for target, source in zip(targets, sources):
        target.assign(source)
    return True


def release(key: Hashable | None, agent: Any, variables: list) -> None:
    """Keep `agent` (its run has ended) for the next run of the same key."""
    if key is None:
        return
    size = sum(v.shape.num_elements() * v.dtype.size for v in variables)
    _released[key] = (agent, variables, size)
    _released.move_to_end(key)
    while len(_released) > MAX_AGENTS or sum(e[2] for e in _released.values()) > MAX_BYTES:
        _released.popitem(last=False)


def clear() -> None:
    """Drop every kept agent (their compiled programs stay with TensorFlow until exit)."""
    _released.clear()


def counts() -> dict[str, int]:
    """How many agents were built new and how many reused, in this process."""
    return {"built": _counts["built"], "reused": _counts["reused"]}
