"""env_checks: what an environment's step and reset may return, and the words for what may not."""

import gymnasium as gym
import numpy as np
import pytest

from agents.tools import env_checks

_SPACE = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
_OBSERV = np.zeros(3, np.float32)


@pytest.mark.parametrize(
    "result",
    [
        (_OBSERV, 1.0, False, False, {}),
        (_OBSERV.astype(np.float64), np.float32(1.0), np.bool_(True), 0, {}),  # Cast later.
        (np.zeros(3, np.int64), 1, True, False, {}),
    ],
)
def test_good_step_results_pass(result):
    assert env_checks.step_problem(result, _SPACE) is None


@pytest.mark.parametrize(
    "result, problem",
    [
        ((_OBSERV, 1.0, False, {}), "4 values, the old gym API"),
        ([_OBSERV, 1.0, False, False, {}], "of type list"),
        ((np.zeros(4), 1.0, False, False, {}), "of shape (4,) and dtype float64; expected shape"),
        (("abc", 1.0, False, False, {}), "an observation of type str ('abc')"),
        (({"a": _OBSERV}, 1.0, False, False, {}), "an observation of type dict"),
        ((_OBSERV + np.nan, 1.0, False, False, {}), "a non-finite observation"),
        ((_OBSERV, np.ones(2), False, False, {}), "a reward of shape (2,)"),
        ((_OBSERV, "1", False, False, {}), "a reward of type str"),
        ((_OBSERV, float("-inf"), False, False, {}), "a non-finite reward -inf"),
        ((_OBSERV, 1.0, np.array([True]), False, {}), "terminated of shape (1,)"),
        ((_OBSERV, 1.0, False, None, {}), "truncated of type NoneType"),
    ],
)
def test_bad_step_results_are_named(result, problem):
    assert problem in env_checks.step_problem(result, _SPACE)


def test_reset_needs_observ_and_info():
    assert env_checks.reset_problem((_OBSERV, {}), _SPACE) is None
    assert "expected a tuple (observ, info)" in env_checks.reset_problem(_OBSERV, _SPACE)
    assert "of shape (2,)" in env_checks.reset_problem((np.zeros(2), {}), _SPACE)


def test_long_values_are_shortened():
    problem = env_checks.step_problem(("x" * 500, 1.0, False, False, {}), _SPACE)
    assert len(problem) < 200 and "..." in problem


def test_stacked_step_checks_the_whole_batch_at_once():
    space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    good = [(np.zeros(2, np.float32), 1.0, False, True, {}), (np.ones(2), 0, True, False, {})]
    observ, reward, terminated, truncated, infos = env_checks.stacked_step(good, space)
    assert observ.shape == (2, 2) and reward.dtype == np.float32 and reward.tolist() == [1, 0]
    assert terminated.tolist() == [False, True] and truncated.tolist() == [True, False]
    assert len(infos) == 2
    bad_results = [
        [good[0], (np.zeros(3), 1.0, False, False, {})],  # A wrong observation shape.
        [good[0], (np.zeros(2), np.nan, False, False, {})],  # A non-finite reward.
        [good[0], (np.zeros(2), [1.0, 2.0], False, False, {})],  # An array reward.
        [good[0], (np.zeros(2), 1.0, False, {})],  # The old 4-tuple API.
        [good[0], (np.zeros(2), 1.0, "no", False, {})],  # A string flag.
    ]
    for results in bad_results:
        assert env_checks.stacked_step(results, space) is None
        assert env_checks.step_problem(results[1], space)  # The per-env check names it.
