"""Tests for agents.ppo.advantages against slow numpy references and hand-computed cases."""

import numpy as np
import pytest
import tensorflow as tf

from agents.ppo import advantages
from tests.floats import assert_float32_close

_CONTINUE, _TERMINATED, _TRUNCATED = 0, 1, 2


def _random_rollout(seed: int, length: int = 9, batch: int = 4) -> dict:
    """A float32 rollout [T, B] with a mix of terminated and truncated steps."""
    rng = np.random.default_rng(seed)
    kind = rng.choice(3, size=(length, batch), p=[0.6, 0.2, 0.2])
    # Pin the interesting cases regardless of the draw: episode ends at the rollout's last step,
    # and a termination right after a truncation.
    kind[-1, 0], kind[-1, 1] = _TERMINATED, _TRUNCATED
    kind[3, 2], kind[4, 2] = _TRUNCATED, _TERMINATED
    kind[:, 3] = _CONTINUE
    terminated = kind == _TERMINATED
    truncated = kind == _TRUNCATED
    normal = lambda *shape: rng.normal(size=shape).astype(np.float32)  # noqa: E731
    return dict(
        reward=normal(length, batch),
        value=normal(length, batch),
        next_value=normal(length, batch),
        final_value=normal(length, batch),
        bootstrap_value=normal(batch),
        terminated=terminated,
        truncated=truncated,
        done=terminated | truncated,
    )


def _naive_discounted_return(reward, next_value, terminated, done, discount):
    """Slow python loop, for testing only."""
    length, batch = reward.shape
    returns = np.zeros((length, batch))
    for b in range(batch):
        for t in reversed(range(length)):
            if done[t, b] or t == length - 1:
                following = 0.0 if terminated[t, b] else next_value[t, b]
            else:
                following = returns[t + 1, b]
            returns[t, b] = reward[t, b] + discount * following
    return returns


def _naive_gae(reward, value, next_value, terminated, done, discount, lambda_):
    """Slow python loop, for testing only."""
    length, batch = reward.shape
    adv = np.zeros((length, batch))
    for b in range(batch):
        for t in reversed(range(length)):
            bootstrap = 0.0 if terminated[t, b] else next_value[t, b]
            delta = reward[t, b] + discount * bootstrap - value[t, b]
            following = 0.0 if done[t, b] or t == length - 1 else adv[t + 1, b]
            adv[t, b] = delta + discount * lambda_ * following
    return adv


def _naive_next_values(value, bootstrap_value, final_value, truncated):
    """Slow python loop, for testing only."""
    length, batch = value.shape
    result = np.zeros((length, batch))
    for b in range(batch):
        for t in range(length):
            if truncated[t, b]:
                result[t, b] = final_value[t, b]
            elif t == length - 1:
                result[t, b] = bootstrap_value[b]
            else:
                result[t, b] = value[t + 1, b]
    return result


def _naive_explained_variance(prediction, target):
    """Slow python loop, for testing only."""
    target, prediction = list(np.ravel(target)), list(np.ravel(prediction))

    def variance(xs):
        mean = sum(xs) / len(xs)
        return sum((x - mean) ** 2 for x in xs) / len(xs)

    residual = [y - p for y, p in zip(target, prediction, strict=True)]
    return 1.0 - variance(residual) / variance(target)


@pytest.mark.parametrize("discount", [0.5, 0.99])
def test_discounted_return_matches_naive_reference(discount):
    r = _random_rollout(seed=0)
    args = (r["reward"], r["next_value"], r["terminated"], r["done"], discount)
    expected = _naive_discounted_return(*args)
    np.testing.assert_allclose(advantages.discounted_return(*args), expected, rtol=1e-5, atol=1e-5)


def test_discounted_return_hand_computed():
    # T = 3, discount 0.5, reward [1, 2, 3], next_value [10, 20, 30]; one episode end per column.
    # col 0, no end:        R2 = 3 + .5*30 = 18, R1 = 2 + .5*18 = 11, R0 = 1 + .5*11 = 6.5
    # col 1, terminated t1: R2 = 18,             R1 = 2 + .5*0 = 2,   R0 = 1 + .5*2 = 2
    # col 2, truncated t1:  R2 = 18,             R1 = 2 + .5*20 = 12, R0 = 1 + .5*12 = 7
    # col 3, terminated t2: R2 = 3 + 0 = 3,      R1 = 2 + .5*3 = 3.5, R0 = 1 + .5*3.5 = 2.75
    reward = np.tile([[1.0], [2.0], [3.0]], [1, 4]).astype(np.float32)
    next_value = np.tile([[10.0], [20.0], [30.0]], [1, 4]).astype(np.float32)
    terminated = np.array([[0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1]], bool)
    truncated = np.array([[0, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0]], bool)
    returns = advantages.discounted_return(
        reward, next_value, terminated, terminated | truncated, 0.5
    )
    expected = [[6.5, 2.0, 7.0, 2.75], [11.0, 2.0, 12.0, 3.5], [18.0, 18.0, 18.0, 3.0]]
    np.testing.assert_allclose(returns, expected)


@pytest.mark.parametrize("lambda_", [0.0, 0.7, 1.0])
def test_lambda_advantage_matches_naive_reference(lambda_):
    r = _random_rollout(seed=1)
    args = (r["reward"], r["value"], r["next_value"], r["terminated"], r["done"], 0.9, lambda_)
    expected = _naive_gae(*args)
    np.testing.assert_allclose(advantages.lambda_advantage(*args), expected, rtol=1e-5, atol=1e-5)


def test_lambda_advantage_hand_computed():
    # T = 3, discount 0.5, lambda 0.5 (so discount * lambda = 0.25), reward [1, 2, 3],
    # value [2, 4, 6], next_value [4, 6, 8] (column 2 is truncated at t1 with final value 10).
    # col 0, no end:        deltas 1 + 2 - 2 = 1, 2 + 3 - 4 = 1, 3 + 4 - 6 = 1
    #                       A2 = 1, A1 = 1 + .25*1 = 1.25, A0 = 1 + .25*1.25 = 1.3125
    # col 1, terminated t1: delta1 = 2 + 0 - 4 = -2; A2 = 1, A1 = -2, A0 = 1 + .25*-2 = 0.5
    # col 2, truncated t1:  delta1 = 2 + .5*10 - 4 = 3; A2 = 1, A1 = 3, A0 = 1 + .25*3 = 1.75
    column = lambda *xs: np.tile(np.array(xs, np.float32)[:, None], [1, 3])  # noqa: E731
    next_value = column(4.0, 6.0, 8.0)
    next_value[1, 2] = 10.0
    terminated = np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]], bool)
    truncated = np.array([[0, 0, 0], [0, 0, 1], [0, 0, 0]], bool)
    adv = advantages.lambda_advantage(
        column(1.0, 2.0, 3.0),
        column(2.0, 4.0, 6.0),
        next_value,
        terminated,
        terminated | truncated,
        0.5,
        0.5,
    )
    expected = [[1.3125, 0.5, 1.75], [1.25, -2.0, 3.0], [1.0, 1.0, 1.0]]
    np.testing.assert_allclose(adv, expected)


def test_lambda_one_advantage_plus_value_is_discounted_return():
    r = _random_rollout(seed=2)
    next_value = advantages.next_values(
        r["value"], r["bootstrap_value"], r["final_value"], r["truncated"]
    )
    adv = advantages.lambda_advantage(
        r["reward"], r["value"], next_value, r["terminated"], r["done"], 0.9, 1.0
    )
    returns = advantages.discounted_return(r["reward"], next_value, r["terminated"], r["done"], 0.9)
    np.testing.assert_allclose(adv + r["value"], returns, rtol=1e-5, atol=1e-5)


def test_next_values_matches_naive_reference():
    r = _random_rollout(seed=3)
    args = (r["value"], r["bootstrap_value"], r["final_value"], r["truncated"])
    np.testing.assert_allclose(advantages.next_values(*args), _naive_next_values(*args))


def test_next_values_hand_computed():
    # Shifted up by one with the bootstrap row appended: [[3, 4], [5, 6], [7, 8]]; then the final
    # value replaces the truncated entries (0, 1) -> 12 and (2, 0) -> 15.
    value = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    final_value = np.array([[11.0, 12.0], [13.0, 14.0], [15.0, 16.0]], np.float32)
    truncated = np.array([[0, 1], [0, 0], [1, 0]], bool)
    result = advantages.next_values(value, np.array([7.0, 8.0], np.float32), final_value, truncated)
    np.testing.assert_array_equal(result, [[3.0, 12.0], [5.0, 6.0], [15.0, 8.0]])


def test_truncated_steps_bootstrap_from_final_value_and_terminated_do_not():
    # Column 0 terminates at t0, column 1 is truncated at t0; both start a new episode at t1.
    reward = np.array([[1.0, 1.0], [0.0, 0.0]], np.float32)
    value = np.array([[0.5, 0.5], [100.0, 100.0]], np.float32)
    terminated = np.array([[1, 0], [0, 0]], bool)
    truncated = np.array([[0, 1], [0, 0]], bool)
    done = terminated | truncated
    final_value = np.array([[7.0, 7.0], [0.0, 0.0]], np.float32)
    next_value = advantages.next_values(value, np.zeros(2, np.float32), final_value, truncated)
    adv = advantages.lambda_advantage(reward, value, next_value, terminated, done, 0.5, 0.9)
    returns = advantages.discounted_return(reward, next_value, terminated, done, 0.5)
    # Terminated: 1 - 0.5, no bootstrap; truncated: 1 + 0.5 * 7 - 0.5, not from value[1] = 100.
    np.testing.assert_allclose(adv[0], [0.5, 4.0])
    np.testing.assert_allclose(returns[0], [1.0, 4.5])


def test_bool_and_float_flags_agree():
    r = _random_rollout(seed=4)
    flags = [(r["terminated"], r["done"]), (r["terminated"] * 1.0, r["done"] * 1.0)]
    results = [
        advantages.lambda_advantage(r["reward"], r["value"], r["next_value"], *f, 0.9, 0.7)
        for f in flags
    ]
    np.testing.assert_array_equal(results[0], results[1])


def test_functions_work_in_tf_function_with_unknown_time():
    matrix = tf.TensorSpec([None, None], tf.float32)
    flag = tf.TensorSpec([None, None], tf.bool)
    scalar = tf.TensorSpec([], tf.float32)
    gae = tf.function(
        advantages.lambda_advantage, input_signature=[matrix] * 3 + [flag] * 2 + [scalar] * 2
    )
    returns = tf.function(
        advantages.discounted_return, input_signature=[matrix] * 2 + [flag] * 2 + [scalar]
    )
    shift = tf.function(
        advantages.next_values,
        input_signature=[matrix, tf.TensorSpec([None], tf.float32), matrix, flag],
    )
    for length in (5, 8):
        r = _random_rollout(seed=length, length=length)
        args = (r["reward"], r["value"], r["next_value"], r["terminated"], r["done"], 0.9, 0.7)
        np.testing.assert_allclose(gae(*args), _naive_gae(*args), rtol=1e-5, atol=1e-5)
        args = (r["reward"], r["next_value"], r["terminated"], r["done"], 0.9)
        assert_float32_close(returns(*args), _naive_discounted_return(*args))
        args = (r["value"], r["bootstrap_value"], r["final_value"], r["truncated"])
        np.testing.assert_allclose(shift(*args), _naive_next_values(*args))
    for fn in (gae, returns, shift):
        assert fn.experimental_get_tracing_count() == 1


def test_normalize_advantages():
    # Hand: [1, 1, 3, 3] has mean 2 and population std 1 -> [-1, -1, 1, 1].
    np.testing.assert_allclose(
        advantages.normalize_advantages(np.array([1.0, 1.0, 3.0, 3.0], np.float32)),
        [-1.0, -1.0, 1.0, 1.0],
        rtol=1e-6,
    )
    adv = np.random.default_rng(5).normal(3.0, 2.0, size=(6, 4)).astype(np.float32)
    normalized = advantages.normalize_advantages(adv).numpy()
    np.testing.assert_allclose(normalized, (adv - adv.mean()) / adv.std(), rtol=1e-4, atol=1e-5)
    # A constant batch stays finite thanks to epsilon.
    np.testing.assert_array_equal(advantages.normalize_advantages(np.ones(3, np.float32)), 0.0)


def test_explained_variance():
    # Hand: target [0, 2, 4, 6] has variance 5; residual [-1, 0, 1, 0] has variance 0.5;
    # 1 - 0.5 / 5 = 0.9.
    target = np.array([0.0, 2.0, 4.0, 6.0], np.float32)
    prediction = np.array([1.0, 2.0, 3.0, 6.0], np.float32)
    assert_float32_close(advantages.explained_variance(prediction, target), 0.9)
    np.testing.assert_allclose(advantages.explained_variance(target, target), 1.0)
    np.testing.assert_allclose(advantages.explained_variance(np.full(4, 3.0), target), 0.0)
    rng = np.random.default_rng(6)
    target, prediction = rng.normal(size=(2, 5, 3)).astype(np.float32)
    np.testing.assert_allclose(
        advantages.explained_variance(prediction, target),
        _naive_explained_variance(prediction, target),
        rtol=1e-5,
    )


def test_explained_variance_is_zero_for_constant_target():
    target = np.full(4, 2.0, np.float32)
    prediction = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    assert advantages.explained_variance(prediction, target).numpy() == 0.0
