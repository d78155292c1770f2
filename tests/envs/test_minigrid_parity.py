"""MiniGrid as TensorFlow ops against minigrid's own `step`, transition for transition."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import tensorflow as tf

from agents.envs.gridworld import dynamics, view
from agents.envs.gridworld.convert import make_minigrid
from agents.envs.gridworld.encoding import (
    BOX,
    DIRECTIONS,
    DOOR,
    DROP,
    EMPTY,
    FORWARD,
    LOCKED,
    OPEN,
    PICKUP,
    TOGGLE,
    WALL,
)
from agents.envs.gridworld.env import IDS
from agents.envs.gridworld.state import GridState
from tests.envs.minigrid_transitions import record

TRANSITIONS = 5_000


@functools.cache
def recorded(env_id: str) -> dict:
    """minigrid's transitions of `env_id` and what the native ops make of the same steps."""
    rec = record(env_id, TRANSITIONS, seed=IDS.index(env_id))
    state = GridState(**{key: tf.constant(value) for key, value in rec["before"].items()})
    env = make_minigrid(env_id)
    after, reward, terminated = dynamics.step(state, tf.constant(rec["action"]), env.max_steps)
    native = {
        "after": {key: getattr(after, key).numpy() for key in GridState._fields},
        "image": view.observe(after, env.see_through_walls).numpy(),
        "reward": reward.numpy(),
        "terminated": terminated.numpy(),
        "truncated": after.step_count.numpy() >= env.max_steps,
    }
    return {"minigrid": rec, "native": native}


def _first_difference(native: np.ndarray, expected: np.ndarray) -> int | None:
    rows = (native.reshape(len(native), -1) != expected.reshape(len(expected), -1)).any(axis=1)
    return int(np.argmax(rows)) if rows.any() else None


@pytest.mark.parametrize("env_id", IDS)
def test_step_matches_minigrid(env_id):
    result = recorded(env_id)
    rec, native = result["minigrid"], result["native"]
    pairs = {f"next {key}": (native["after"][key], rec["after"][key]) for key in GridState._fields}
    pairs.update(
        image=(native["image"], rec["image"]),
        direction=(native["after"]["direction"], rec["direction"]),
        reward=(native["reward"], rec["reward"]),
        terminated=(native["terminated"], rec["terminated"]),
        truncated=(native["truncated"], rec["truncated"]),
    )
    assert native["reward"].dtype == np.float32
    for what, (got, expected) in pairs.items():
        index = _first_difference(got, expected)
        assert index is None, (
            f"{env_id}: {what} differs at transition {index} (action {rec['action'][index]}): "
            f"native {got[index].tolist()} minigrid {expected[index].tolist()}"
        )


def _events(rec: dict) -> dict[str, int]:
    """How often each interaction rule of minigrid's `step` occurs in a recording."""
    before, after, action = rec["before"], rec["after"], rec["action"]
    rows = np.arange(len(action))
    ahead = before["pos"] + DIRECTIONS[before["direction"]]
    cell = before["grid"][rows, ahead[:, 0], ahead[:, 1]]
    cell_after = after["grid"][rows, ahead[:, 0], ahead[:, 1]]
    holding = before["carried"][:, 0] != EMPTY
    toggles = action == TOGGLE
    moved = (after["pos"] != before["pos"]).any(axis=1)
    size = np.array(before["grid"].shape[1:3])
    at_border = ((ahead == 0) | (ahead == size - 1)).any(axis=1)
    events = {
        "pickup": (action == PICKUP) & ~holding & (after["carried"][:, 0] != EMPTY),
        "pickup with full hands": (action == PICKUP) & holding & (cell[:, 0] > WALL),
        "pickup while carrying the target": (action == PICKUP)
        & (before["target"][:, 0] > 0)
        & (before["carried"][:, :2] == before["target"]).all(axis=1),
        "drop": (action == DROP) & holding & (after["carried"][:, 0] == EMPTY),
        "unlock with key": toggles & (cell[:, 2] == LOCKED) & (cell_after[:, 2] == OPEN),
        "locked stays locked": toggles & (cell[:, 0] == DOOR) & (cell_after[:, 2] == LOCKED),
        "door opened": toggles & (cell[:, 0] == DOOR) & (cell[:, 2] == 1) & (cell_after[:, 2] == 0),
        "door closed": toggles & (cell[:, 0] == DOOR) & (cell[:, 2] == 0) & (cell_after[:, 2] == 1),
        "box opened": toggles & (cell[:, 0] == BOX),
        "through open door": (action == FORWARD) & (cell[:, 0] == DOOR) & moved,
        "into wall": (action == FORWARD) & (cell[:, 0] == WALL) & ~moved,
        "goal or fetch reward": rec["reward"] > 0,
        "lava or death": rec["terminated"] & (rec["reward"] == 0),
        "truncated": rec["truncated"],
        "goal on the last step": rec["terminated"] & rec["truncated"],
        "occluded view cells": (rec["image"][..., 0] == 0).any(axis=(1, 2)),
    }
    for direction in range(4):
        facing = (before["direction"] == direction) & at_border
        events[f"facing the border, direction {direction}"] = facing
    return {name: int(np.sum(hits)) for name, hits in events.items()}


def test_the_recordings_exercise_every_rule():
    totals: dict[str, int] = {}
    for env_id in IDS:
        for name, count in _events(recorded(env_id)["minigrid"]).items():
            totals[name] = totals.get(name, 0) + count
    rare = {name: count for name, count in totals.items() if count < 20}
    assert not rare, f"rules seldom exercised: {rare} (all: {totals})"
