"""Session: the environments, agent, checkpoint and loop of one training run."""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator

import keras
import numpy as np
import tensorflow as tf

from agents import tools
from agents.ppo.algorithm import PPO, Evaluator
from agents.ppo.validate import validate_config
from agents.scripts.environments import make_envs
from agents.scripts.utility import UsageError

EVAL_CALL_STEPS = 100  # Simulation steps per compiled evaluation call.


class Session:
    """Everything a training run holds, built from a config.

    Args:
        config: The run's configuration (a dict or AttrDict).
        run_dir: Directory for summaries, checkpoints and the config.
        seed: Base seed of networks, action sampling and environments.
    """

    def __init__(self, config, run_dir: str, seed: int = 0) -> None:
        self.config = config = tools.AttrDict(config)
        self.run_dir = run_dir
        _validate(config)
        keras.utils.set_random_seed(seed)
        self._envs = []
        try:
            self.train_env = self._make_batch_env(config.num_agents, seed)
            self.eval_env = self._make_batch_env(config.eval_agents, seed + 10_000)
            try:
                self.agent = PPO(self.train_env, config, seed=seed)
            except ValueError as error:
                raise UsageError(str(error)) from None
            self.evaluator = Evaluator(self.agent, self.eval_env)
            self.step = tf.Variable(0, dtype=tf.int64, trainable=False)
            checkpoint = tf.train.Checkpoint(step=self.step, **self.agent.checkpointables())
            try:
                self._loop = tools.Loop(run_dir, self.step, checkpoint)
            except ValueError as error:  # E.g. resuming with other layer sizes.
                raise UsageError(f"Cannot restore the checkpoint of {run_dir!r}: {error}") from None
        except BaseException:
            self.close()
            raise
        self._train_fn = tf.function(
            lambda: tools.simulate_steps(self.train_env, self.agent, config.rollout_length)
        )
        self._eval_fn = tf.function(
            lambda reset: tools.simulate_steps(
                self.eval_env, self.evaluator, EVAL_CALL_STEPS, reset
            )
        )

    @property
    def env_steps(self) -> int:
        """Training env steps so far."""
        return int(self.agent.env_steps.numpy())

    def loop(self, should_stop: Callable[[], bool] | None = None) -> Iterator[tools.loop.Report]:
        """Alternate training and evaluation until `train_steps`; yields reports.

        Args:
            should_stop: Checked between steps (see `tools.Loop.run`); True ends the loop early.
        """
        config = self.config
        train_call = config.rollout_length * config.num_agents
        eval_call = EVAL_CALL_STEPS * config.eval_agents
        train_phase = _round_up(config.train_every, train_call)
        eval_phase = _round_up(config.eval_steps, eval_call)
        self._loop.add_phase(
            "train",
            self._train_step,
            train_phase,
            report_every=train_phase,
            log_every=_round_up(config.log_every, train_call),
            checkpoint_every=_round_up(config.checkpoint_every, train_call),
        )
        self._loop.add_phase("eval", self._eval_step, eval_phase, log_every=eval_phase)
        cycles = math.ceil(config.train_steps / train_phase)
        with self._python_errors():
            yield from self._loop.run(cycles * (train_phase + eval_phase), should_stop)

    def evaluate(self, episodes: int) -> list[float]:
        """Returns of `episodes` fresh episodes of the deterministic policy on the eval envs."""
        scores: list[float] = []
        reset = True
        with self._python_errors():
            while len(scores) < episodes:
                done, score = self._eval_fn(tf.constant(reset))
                scores.extend(np.asarray(score)[np.asarray(done)].tolist())
                reset = False
        return scores[:episodes]

    def save(self) -> str | None:
        """Save a checkpoint now; returns its path."""
        return self._loop.save()

    def close(self) -> None:
        for env in self._envs:
            env.close()
        self._envs = []

    def _train_step(self, reset: bool):
        del reset  # Training rollouts continue across phases.
        start = time.perf_counter()
        done, score = self._train_fn()
        metrics = {key: value.numpy() for key, value in self.agent.metrics.items()}
        steps = self.config.rollout_length * self.config.num_agents
        metrics["env_steps_per_second"] = steps / (time.perf_counter() - start)
        metrics["env_steps"] = float(self.env_steps)
        return done, score, metrics

    def _eval_step(self, reset: bool):
        done, score = self._eval_fn(tf.constant(reset))
        return done, score, {"env_steps": float(self.env_steps)}

    def _make_batch_env(self, count: int, seed: int) -> tools.InGraphBatchEnv:
        config = self.config
        try:
            envs = make_envs(config.env, count, config.max_episode_steps, config.env_processes)
            batch_env = tools.BatchEnv(envs, blocking=not config.env_processes)
        except ValueError as error:  # E.g. an unknown env id, or num_agents=0.
            raise UsageError(str(error)) from None
        self._envs.append(batch_env)
        batch_env.reset(seed=seed)
        for index, env in enumerate(envs):
            env.action_space.seed(seed + index)
        try:
            return tools.InGraphBatchEnv(batch_env)
        except ValueError as error:
            raise UsageError(str(error)) from None

    @contextlib.contextmanager
    def _python_errors(self):
        with self.train_env.python_errors(), self.eval_env.python_errors():
            yield


def _validate(config) -> None:
    """Fail before building anything when a setting is invalid."""
    for key in ("num_agents", "eval_agents", "train_every", "eval_steps", "log_every"):
        if not isinstance(config[key], int) or config[key] < 1:
            raise UsageError(f"{key} must be a positive integer, got {config[key]!r}.")
    try:
        validate_config(config)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _round_up(value: int, multiple: int) -> int:
    return max(1, math.ceil(value / multiple)) * multiple
