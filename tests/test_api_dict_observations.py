"""Dict observations and action masks through `agents.train` and `agents.load_policy`."""

import gymnasium as gym
import numpy as np
import pytest

import agents
from agents.scripts import configs

ILLEGAL: list[tuple[int, int]] = []  # (phase, action) of every masked action an env was sent.
LENGTH = 16


class Phases(gym.Env):
    """Each step allows two of four actions, which change every step: at phase p = t % 4 the
    mask allows p and p + 1 (mod 4), and p + 1 earns 1. The observation is the phase (a
    Discrete key), the step count (a Box key, which the observation normalizer scales) and the
    mask; a random legal policy earns 8 per episode, the best 16. A masked
    action is recorded in `ILLEGAL` and earns -10."""

    observation_space = gym.spaces.Dict(
        {
            "phase": gym.spaces.Discrete(4),
            "clock": gym.spaces.Box(0.0, 100.0, (1,), np.float32),
            "action_mask": gym.spaces.MultiBinary(4),
        }
    )
    action_space = gym.spaces.Discrete(4)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._t = int(self.np_random.integers(4))
        self._start = self._t
        return self._observ(), {}

    def step(self, action):
        phase, action = self._t % 4, int(action)
        reward = 1.0 if action == (phase + 1) % 4 else 0.0
        if action not in (phase, (phase + 1) % 4):
            ILLEGAL.append((phase, action))
            reward = -10.0
        self._t += 1
        return self._observ(), reward, False, self._t - self._start >= LENGTH, {}

    def _observ(self):
        phase = self._t % 4
        mask = np.zeros(4, np.int8)
        mask[[phase, (phase + 1) % 4]] = 1
        clock = np.array([self._t], np.float32)
        return {"phase": phase, "clock": clock, "action_mask": mask}


def _masked_batch():
    """Phases 0-3 at once, each row allowing p and p + 1 (mod 4)."""
    eye = np.eye(4, dtype=np.int8)
    return {
        "phase": np.arange(4),
        "clock": np.arange(4.0)[:, None],
        "action_mask": eye + np.roll(eye, 1, axis=1),
    }


@pytest.mark.slow
def test_a_masked_policy_learns_the_phases(tmp_path):
    ILLEGAL.clear()
    config = dict(
        configs.cartpole.differences(),
        train_steps=12_288,
        train_every=4_096,
        num_agents=8,
        eval_agents=8,
        eval_episodes=8,
        entropy_coef=0.0,
        max_episode_steps=LENGTH,
        normalize_observ=True,  # The clock is normalized; the phase and the mask stay raw.
    )
    result = agents.train(config, logdir=str(tmp_path), env=Phases, verbose=0)
    assert ILLEGAL == []  # Not in training's samples, nor in evaluation's modes.
    assert result.eval_score >= 15.0  # The best is 16; a random legal policy earns 8.
    policy = agents.load_policy(result.run_dir)
    assert policy.observation_dict is not None
    for phase in range(4):  # One dict at a time.
        observ = Phases()._observ.__func__(type("S", (), {"_t": phase})())
        assert policy(observ) == (phase + 1) % 4
    batch = _masked_batch()  # A dict of batches.
    np.testing.assert_array_equal(policy(batch), (np.arange(4) + 1) % 4)
    # Masks that forbid the learned action (row p allows p + 2 and p + 3): the mode and the
    # samples still keep to them.
    shifted = dict(batch, action_mask=np.roll(batch["action_mask"], 2, axis=1))
    assert policy(shifted).tolist() in _legal_rows(2)
    for _ in range(50):
        assert policy(shifted, deterministic=False).tolist() in _legal_rows(2)
        assert policy(batch, deterministic=False).tolist() in _legal_rows()


def _legal_rows(shift: int = 0):
    """Every batch of actions the masks of `_masked_batch` rolled by `shift` allow."""
    import itertools

    allowed = [((p + shift) % 4, (p + shift + 1) % 4) for p in range(4)]
    return [list(row) for row in itertools.product(*allowed)]


def test_a_mask_that_does_not_fit_the_action_space_is_one_line(tmp_path):
    class Wrong(Phases):
        observation_space = gym.spaces.Dict(
            {
                "phase": gym.spaces.Discrete(4),
                "clock": gym.spaces.Box(0.0, 100.0, (1,), np.float32),
                "action_mask": gym.spaces.MultiBinary(3),
            }
        )

        def _observ(self):
            observ = super()._observ()
            return dict(observ, action_mask=observ["action_mask"][:3])

    with pytest.raises(ValueError, match="the action_mask has 3 entries; Discrete\\(4\\) takes 4"):
        agents.train(
            dict(configs.debug.differences(), max_episode_steps=LENGTH),
            logdir=str(tmp_path),
            env=Wrong,
            verbose=0,
        )


@pytest.mark.slow
def test_minigrid_image_and_direction_as_a_dict_train_and_the_policy_acts_on_minigrids_env(
    tmp_path,
):
    """The image and the direction of `minigrid_dict` go to the dict encoder as two keys; the
    exported policy takes minigrid's own observation dict. (Learning with dict observations is
    `test_a_masked_policy_learns_the_phases`.)"""
    pytest.importorskip("minigrid")
    from agents.envs.python.environments import make_env

    config = dict(
        configs.debug.differences(),
        env="MiniGrid-Empty-5x5-v0",
        env_wrapper="minigrid_dict",
        normalize_reward=False,
    )
    result = agents.train(config, logdir=str(tmp_path), verbose=0)
    assert result.env_steps == 256 and 0.0 <= result.eval_score <= 1.0
    policy = agents.load_policy(result.run_dir)
    assert set(policy.observation_dict) == {"image", "direction"}
    env = make_env("MiniGrid-Empty-5x5-v0", wrapper="minigrid_dict")
    observ, _ = env.reset(seed=0)
    assert env.action_space.contains(int(policy(observ)))


def test_a_vector_env_whose_mask_allows_no_action_stops_the_run_in_one_line(tmp_path):
    """A vector env's all-zero mask is refused naming the env, as a callable env's is: no
    action may be sent then, and the run must not send a forbidden one."""

    class Closed(Phases):
        def _observ(self):
            observ = super()._observ()
            if self._t - self._start >= 3:  # From its third step on, nothing is allowed.
                observ["action_mask"] = np.zeros(4, np.int8)
            return observ

    ILLEGAL.clear()
    vector_env = gym.vector.SyncVectorEnv(
        [lambda: gym.wrappers.TimeLimit(Closed(), LENGTH) for _ in range(2)]
    )
    with pytest.raises(RuntimeError) as caught:
        agents.train(
            dict(configs.debug.differences(), max_episode_steps=LENGTH),
            logdir=str(tmp_path), env=vector_env, verbose=0,
        )  # fmt: skip
    (line,) = str(caught.value).splitlines()
    assert "environment 0 " in line and "'action_mask' that allows no action: [0, 0, 0, 0]" in line
    assert ILLEGAL == []  # Stopped before any action went to a step that allows none.
