"""Checks of what an environment returns, so that a bad result is one line saying what came."""

from __future__ import annotations

import sys
from typing import Any

import gymnasium as gym
import numpy as np

_STEP_API = "(observ, reward, terminated, truncated, info)"

# An observation farther outside its finite declared bounds than this many times their span is
# refused, as a non-finite one is: one absurd value (1e30 from a faulty sensor) would otherwise
# dominate the observation normalizer's statistics for the rest of the run.
FAR_OUTSIDE = 1000.0


def step_problem(result: Any, space: gym.Space) -> str | None:
    """What is wrong with `result` of `env.step` for observation space `space`, or None."""
    if not isinstance(result, tuple) or len(result) != 5:
        if isinstance(result, tuple) and len(result) == 4:
            return (
                "4 values, the old gym API (observ, reward, done, info); expected the "
                f"gymnasium API {_STEP_API}"
            )
        return f"{_describe(result)}; expected a tuple {_STEP_API}"
    observ, reward, terminated, truncated, _ = result
    problem = observ_problem(observ, space)
    if problem:
        return problem
    if np.ndim(reward) != 0 or np.asarray(reward).dtype.kind not in "biuf":
        return f"a reward {_describe(reward)}; expected a scalar number"
    if not np.isfinite(reward):
        return f"a non-finite reward {reward!r}; rewards must be finite"
    for name, flag in (("terminated", terminated), ("truncated", truncated)):
        if np.ndim(flag) != 0 or np.asarray(flag).dtype.kind not in "biu":
            return f"{name} {_describe(flag)}; expected a bool"
    return None


def stacked_step(results: list, space: gym.Space, limits: tuple | None = None) -> tuple | None:
    """The step results of a batch as arrays (observ, reward, terminated, truncated, infos), or
    None if any of them is wrong (then `step_problem` per env says which and how).

    One vectorized check of the whole batch: checking each env's result alone cost about 10 us
    per env step, as much as a Pendulum step itself. `limits` are `far_limits(space)`, which a
    caller that checks every step computes once.
    """
    if not all(isinstance(result, tuple) and len(result) == 5 for result in results):
        return None
    observs, rewards, terminated, truncated, infos = zip(*results)
    try:
        observ = np.stack(observs)
        reward, terminated, truncated = (np.asarray(x) for x in (rewards, terminated, truncated))
    except (ValueError, TypeError):  # Shapes differ, or not arrays at all.
        return None
    arrays = batch_arrays(observ, reward, terminated, truncated, len(results), space, limits)
    return None if arrays is None else (*arrays, infos)


def batch_arrays(
    observ: Any,
    reward: Any,
    terminated: Any,
    truncated: Any,
    count: int,
    space: gym.Space,
    limits: tuple | None = None,
) -> tuple | None:
    """A batch's step results as checked arrays (observ, float32 reward, bool terminated, bool
    truncated), or None if any is wrong (then `batch_problem` says which env and how).

    `count` is the batch size; `limits` are `far_limits(space)`, computed once by a caller that
    checks every step.
    """
    observ, reward, terminated, truncated = (
        np.asarray(x) for x in (observ, reward, terminated, truncated)
    )
    if (
        not isinstance(space, gym.spaces.Box)
        or observ.shape != (count, *space.shape)
        or observ.dtype.kind not in "biuf"
        or reward.shape != (count,)
        or reward.dtype.kind not in "biuf"
        or terminated.shape != (count,)
        or terminated.dtype.kind not in "biu"
        or truncated.shape != (count,)
        or truncated.dtype.kind not in "biu"
        or not np.isfinite(reward).all()
        or (observ.dtype.kind == "f" and not np.isfinite(observ).all())
        or (observ.dtype.kind == "f" and _far_outside(observ, limits or far_limits(space)).any())
    ):
        return None
    return observ, reward.astype(np.float32), terminated.astype(bool), truncated.astype(bool)


def batch_problem(
    observ: Any, reward: Any, terminated: Any, truncated: Any, count: int, space: gym.Space
) -> tuple[int | None, str]:
    """Which env of a batch's step results is wrong and how: (index, text); index None when the
    arrays of the whole batch have the wrong shape. Call it where `batch_arrays` gave None."""
    for name, value, shape in (
        ("observations", observ, (count, *getattr(space, "shape", ()))),
        ("rewards", reward, (count,)),
        ("terminated flags", terminated, (count,)),
        ("truncated flags", truncated, (count,)),
    ):
        if np.shape(value) != shape:
            return None, f"{name} {_describe(value)}; expected shape {shape}"
    for index in range(count):
        result = (observ[index], reward[index], terminated[index], truncated[index], {})
        problem = step_problem(result, space)
        if problem:
            return index, problem
    return None, "results that do not fit its spaces"


def batch_actions(actions: Any, space: gym.Space, count: int, clip: bool) -> np.ndarray:
    """A batch's actions as one array, clipped into a Box `space` when `clip` (one `np.clip`
    for the whole batch, as gymnasium's `ClipAction` would per env; NaN stays NaN).

    Raises:
        ValueError: If there are not `count` actions, or one is not in `space` (naming the env
            and the value).
    """
    actions = np.asarray(actions)
    if len(actions) != count:
        raise ValueError(f"Got {len(actions)} actions for {count} environments.")
    if clip and isinstance(space, gym.spaces.Box) and actions.shape[1:] == space.shape:
        actions = np.clip(actions, space.low, space.high).astype(space.dtype, copy=False)
    index = first_invalid_action(space, actions)
    if index is not None:
        raise ValueError(
            f"Invalid action for environment {index}: {actions[index].tolist()!r} is not in "
            f"{space}."
        )
    return actions


def warn_close_failed(name: str, error: BaseException) -> None:
    """One warning line on stderr for an env whose `close` raised: the run's results are
    written by then, so a failing `close` must not turn it into a failure."""
    reason = (str(error).strip().splitlines() or [""])[-1]
    message = f"warning: {name} failed in close: {type(error).__name__}: {reason}"
    print(message, file=sys.stderr, flush=True)


def first_invalid_action(space: gym.Space, actions: np.ndarray) -> int | None:
    """Index of the first action outside `space`, checked for the whole batch at once."""
    count = len(actions)
    if isinstance(space, (gym.spaces.Discrete, gym.spaces.MultiDiscrete)):
        low = space.start
        high = space.start + (space.n if isinstance(space, gym.spaces.Discrete) else space.nvec)
        if actions.shape[1:] != space.shape:
            return 0
        valid = (actions == np.round(actions)) & (actions >= low) & (actions < high)
    elif isinstance(space, gym.spaces.Box):
        if actions.shape[1:] != space.shape:
            return 0
        valid = (actions >= space.low) & (actions <= space.high)
    else:
        valid = np.array([space.contains(action) for action in actions])
    valid = valid.reshape(count, -1).all(axis=1)
    return None if valid.all() else int(np.argmin(valid))


def reset_problem(result: Any, space: gym.Space) -> str | None:
    """What is wrong with `result` of `env.reset` for observation space `space`, or None."""
    if not isinstance(result, tuple) or len(result) != 2:
        return f"{_describe(result)}; expected a tuple (observ, info) of the gymnasium API"
    return observ_problem(result[0], space)


def observ_problem(observ: Any, space: gym.Space) -> str | None:
    """What is wrong with an observation for a Box `space`, or None (other spaces: None)."""
    if not isinstance(space, gym.spaces.Box):
        return None  # The batch's consumers reject other spaces themselves.
    array = np.asarray(observ) if not isinstance(observ, (dict, tuple, list)) else None
    if array is None or array.dtype.kind not in "biuf" or array.shape != space.shape:
        return f"an observation {_describe(observ)}; expected shape {space.shape} of {space}"
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        return f"a non-finite observation {array!r}; observations must be finite"
    if array.dtype.kind == "f":
        far = np.argwhere(_far_outside(array, far_limits(space)))
        if len(far):
            index = tuple(int(i) for i in far[0])
            return (
                f"an observation with {float(array[index]):g} at index {index}, far outside the "
                f"declared bounds [{space.low[index]}, {space.high[index]}] of {space}; "
                f"values beyond {FAR_OUTSIDE:g}x the bounds' span are refused"
            )
    return None


def far_limits(space: gym.spaces.Box) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest value an observation of `space` may take: `FAR_OUTSIDE` spans of
    its finite bounds beyond them (-inf and inf where a bound is infinite)."""
    low, high = space.low.astype(np.float64), space.high.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf where bounds are infinite.
        span = np.where(np.isfinite(high - low), np.maximum(high - low, 1.0), np.inf)
        return low - FAR_OUTSIDE * span, high + FAR_OUTSIDE * span


def _far_outside(observ: np.ndarray, limits: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Where `observ` ([..., *shape]) lies beyond `limits` (see `far_limits`)."""
    lowest, highest = limits
    return (observ < lowest) | (observ > highest)


def _describe(value: Any) -> str:
    """A short description of a value: its type, and its shape and dtype for arrays."""
    if isinstance(value, (np.ndarray, np.generic)):
        return f"of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"of type {type(value).__name__} ({text})"
