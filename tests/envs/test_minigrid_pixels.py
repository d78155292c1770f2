"""Native MiniGrid frames against the `minigrid_pixels` wrapper's, frame for frame."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from agents.envs.gridworld import pixels, view
from agents.envs.gridworld.convert import stack, state_of
from agents.envs.gridworld.env import MiniGridEnv
from agents.envs.gridworld.state import GridState
from agents.envs.python.environments import make_env
from tests.envs.minigrid_transitions import _perturb

IDS = (
    "MiniGrid-Empty-8x8-v0",
    "MiniGrid-DoorKey-8x8-v0",
    "MiniGrid-KeyCorridorS3R3-v0",
    "MiniGrid-MultiRoom-N4-S5-v1",
    "MiniGrid-LavaGapS7-v0",
)


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTS_CACHE", str(tmp_path))


def _wrapper_frame(env) -> np.ndarray:
    """What `minigrid_pixels` returns for the env's state: minigrid's point-of-view render at
    tile size 8 (`RGBImgPartialObsWrapper`), then gymnasium's `GrayscaleObservation`."""
    rgb = env.unwrapped.get_frame(tile_size=pixels.TILE, agent_pov=True)
    return np.sum(np.multiply(rgb, np.array([0.2125, 0.7154, 0.0721])), axis=-1).astype(np.uint8)


@pytest.mark.parametrize("env_id", IDS)
def test_frames_equal_the_wrappers(env_id):
    env = make_env(env_id, wrapper="minigrid_pixels")
    observ, _ = env.reset(seed=0)
    np.testing.assert_array_equal(observ[..., 0], _wrapper_frame(env))  # The wrapper itself.
    rng = np.random.default_rng(1)
    states, expected = [], []
    for _ in range(400):
        states.append(state_of(env))
        expected.append(_wrapper_frame(env))
        _, _, terminated, truncated, _ = env.step(int(rng.integers(7)))
        if terminated or truncated or rng.random() < 0.05:
            env.reset(seed=int(rng.integers(2**31)))
            _perturb(env.unwrapped, rng)  # Carried objects, doors, goals in view.
    batch = GridState(**{key: tf.constant(value) for key, value in stack(states).items()})
    native = pixels.frames(view.observe(batch, env.unwrapped.see_through_walls)).numpy()
    assert native.shape == (400, 56, 56, 1) and native.dtype == np.uint8
    differs = np.flatnonzero((native[..., 0] != np.stack(expected)).any(axis=(1, 2)))
    assert differs.size == 0, f"{env_id}: frames differ at steps {differs[:10].tolist()}"


def test_native_pixel_env_starts_from_the_wrappers_first_frames():
    env = MiniGridEnv("MiniGrid-DoorKey-8x8-v0", layout_bank=3, wrapper="minigrid_pixels")
    assert env.observation_space.shape == (56, 56, 1)
    _, observ = env.initial(64, tf.constant([0, 0]))
    wrapped = make_env("MiniGrid-DoorKey-8x8-v0", wrapper="minigrid_pixels")
    firsts = [wrapped.reset(seed=k)[0] for k in range(3)]
    for frame in observ.numpy():
        assert any(np.array_equal(frame, first) for first in firsts)


def test_another_wrapper_is_refused_naming_the_ones_it_renders():
    with pytest.raises(ValueError, match="minigrid_image or minigrid_pixels, not 'atari'"):
        MiniGridEnv("MiniGrid-Empty-5x5-v0", layout_bank=1, wrapper="atari")
