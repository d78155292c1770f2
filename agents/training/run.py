"""Run: the environments, agent, compiled calls and checkpoints of one training run (its loop is
`agents.training.loop`)."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import time
from collections.abc import Callable

import keras
import numpy as np
import tensorflow as tf

from agents import tools
from agents.config import budget, memory_estimate
from agents.config.config import Config
from agents.config.errors import UsageError
from agents.envs import NativeBatchEnv, make_native, registry
from agents.envs.python import exploration, vector_envs
from agents.envs.python.batch_envs import batch_episode_limit, make_batch_env
from agents.ppo import compilation, export
from agents.ppo.algorithm import Evaluator
from agents.ppo.factory import make_agent
from agents.ppo.rollouts import rollouts_then_updates
from agents.runtime import tf_loading, xla_scratch
from agents.tools import checkpoints, collectives
from agents.tools.collectives import ranks_of
from agents.tools.loop import save_checkpoint
from agents.tools.mpi import World
from agents.training import agent_pool, tensorboard_log

EVAL_CALL_STEPS = 100  # Simulation steps per compiled evaluation call.
RANK_SEED_STRIDE = 100_000  # Rank r's envs and sampling use seed + r * stride.
EVAL_SEED_OFFSET = 20_000  # The evaluator's sampled actions (`eval_policy: sample`), per rank.


class Run:
    """Everything a training run holds, built from a config.

    Under MPI (a `world` of K ranks) every rank builds its own Run: its own envs, seeded by
    rank, and an agent whose gradients and normalizer statistics are averaged over all ranks. Rank
    0 restores the checkpoint and broadcasts its state, so all ranks start with identical
    parameters; only rank 0 writes summaries and checkpoints. Env steps and scores count all ranks.

    Args:
        config: The run's configuration (a dict or AttrDict), checked against the schema.
        run_dir: Directory for summaries, checkpoints and the config (rank 0's; the same path on
            every rank).
        seed: Base seed of networks, action sampling and environments.
        world: The MPI ranks of this run (default: a single process).

    Raises:
        UsageError: On every rank when the config is invalid, or the build failed on any rank.
    """

    def __init__(self, config, run_dir: str, seed: int = 0, world: World | None = None) -> None:
        # A Config is checked where it was built; a mapping (tests, benchmarks) is checked here.
        self.config = config if isinstance(config, Config) else Config.build(config)
        self.run_dir = run_dir
        self.world = world or World()
        collectives.share_cores(self.world)  # Before this process's first TensorFlow op.
        self._envs = []
        # Called with the returns of the training episodes that end in each training call (all
        # ranks'), e.g. for a success rate; the reports give their mean only.
        self.on_train_episodes: Callable[[list[float]], None] | None = None
        # Called after each compiled call of an evaluation with this rank's finished episodes
        # and its share, e.g. to show a long evaluation's progress.
        self.on_eval_call: Callable[[int, int], None] | None = None
        self.save_lock: contextlib.AbstractContextManager = contextlib.nullcontext()
        # Envs and action sampling differ per rank; rank 0 draws as a single process would.
        self._rank_seed = seed + RANK_SEED_STRIDE * self.world.rank
        error = None
        try:
            self._build(seed)
        except BaseException as exc:
            error = exc
        try:  # Building is local; from here on every rank knows whether all of them succeeded.
            self.world.agree(error)
        except BaseException:
            self.close()
            raise
        try:
            self._synchronize()
            self._warm_up()
        except BaseException:
            self.close()
            raise
        if self._calls is None:
            self._calls = self._compiled_calls()
        self._train_fn, self._eval_fn = self._calls

    def _compiled_calls(self) -> tuple[Callable, Callable]:
        """The training and evaluation calls as tf.functions.

        With a native env the calls have no Python in them: XLA compiles each whole call,
        rollout and update, into one program (see `compilation.whole_call`).
        """
        whole, config = self._whole, self.config
        if whole:  # The update after each rollout, out of its step loop.
            call = functools.partial(
                rollouts_then_updates,
                self.train_env,
                self.agent,
                config.rollouts_per_call,
                config.rollout_length,
            )
        else:
            call = functools.partial(
                tools.simulate_steps, self.train_env, self.agent, self._call_steps
            )
        eval_env, evaluator = self.eval_env, self.evaluator
        train_fn = tf.function(call, autograph=False, jit_compile=whole)
        eval_fn = tf.function(
            lambda reset: tools.simulate_steps(eval_env, evaluator, EVAL_CALL_STEPS, reset),
            autograph=False,
            jit_compile=whole,
        )
        return train_fn, eval_fn

    def _build(self, seed: int) -> None:
        """Envs, agent and checkpoint of this rank; rank 0 restores the latest checkpoint."""
        config, world = self.config, self.world
        keras.utils.set_random_seed(seed)  # The same initial network on every rank.
        envs = budget.rank_envs(config, world.size)  # Before any env is built.
        self._whole = compilation.whole_call(config, world.size)
        self._build_pooled(envs)
        # Env steps trained plus episodes evaluated: where the run is in its cycle of phases
        # (see `agents.training.loop`).
        self.step = tf.Variable(0, dtype=tf.int64, trainable=False)
        items = dict(self.agent.checkpointables(), **self.train_env.checkpointables())
        checkpoint = tf.train.Checkpoint(step=self.step, **items)
        self._checkpoints = None  # Rank 0's CheckpointManager.
        if not world.is_root:
            return
        directory = os.path.join(self.run_dir, "checkpoints")
        try:
            checkpoints.restore_latest(
                directory,
                lambda path: checkpoint.restore(path).assert_existing_objects_matched(),
                set_aside=True,
            )
        except ValueError as error:  # E.g. resuming with other layer sizes.
            raise UsageError(
                f"Cannot restore the checkpoint of {self.run_dir!r}: {error}"
            ) from None
        self._checkpoints = tf.train.CheckpointManager(checkpoint, directory, max_to_keep=3)

    def _build_envs(self, envs: int) -> None:
        """The eval and training envs of this rank."""
        config, rank_seed = self.config, self._rank_seed
        # The few evaluation envs first: their spaces size the estimate, checked before the
        # training envs and the agent allocate.
        self.eval_env = self._make_batch_env(config.eval_agents, rank_seed + 10_000, "eval")
        self._eval_batch = self._envs[-1] if self._envs else None  # Python envs' batch.
        space = self.eval_env.observation_space
        memory_estimate.check(config, space, self.eval_env.action_space)
        self.train_env = self._make_batch_env(envs, rank_seed, "train")
        self._train_batch = self._envs[-1] if self._envs else None
        self._eval_limit = self._episode_limit()

    def _make_agent(self):
        return make_agent(self.train_env, self.config, self._rank_seed, ranks_of(self.world))

    def _build_pooled(self, envs: int) -> None:
        """Envs, agent, evaluator and compiled calls of this rank, kept from an ended run.

        A run's compiled calls hold its envs as well as its agent (a native env's dynamics are
        in the program; a Python env is stepped through the in-graph env the program calls
        back), so the pool keeps them together: a later run of the same config in this process
        (a notebook's next seed, a test) takes them, every variable set to what its own fresh
        build holds and its own Python envs held by the kept in-graph envs, and skips tracing
        and compiling. Only single-process runs share. A native env is shared for the
        project's own envs only: all they put in a program comes from the config or lives in
        variables; a user's native env might hold anything.
        """
        config = self.config
        with agent_pool.recording() as created:
            self._build_envs(envs)
            try:
                self.agent = self._make_agent()
            except ValueError as error:
                raise UsageError(str(error)) from None
            self.evaluator = Evaluator(
                self.agent, self.eval_env, config.eval_policy, self._rank_seed + EVAL_SEED_OFFSET
            )
        key = self._calls_key()
        fresh = (self.eval_env, self.train_env, self.agent, self.evaluator)
        (parts, self._calls), created = agent_pool.adopt(key, (fresh, None), created)
        if parts is not fresh and not config.native_env:  # Kept in-graph envs, this run's envs.
            parts[0].hold(self.eval_env.batch_env)
            parts[1].hold(self.train_env.batch_env)
        self.eval_env, self.train_env, self.agent, self.evaluator = parts
        self.agent.take_config(config)  # A kept agent's was its earlier run's.
        self._pooled = key, created

    def _calls_key(self):
        """The pool's key of this run's calls: its config but the run-only keys (the eval
        envs' count in), and its spaces; None where the run shares nothing."""
        config, env = self.config, self.train_env
        if self.world.size > 1 or (config.native_env and not registry.is_builtin(config.env)):
            return None
        key = agent_pool.agent_key(config, env.observation_space, env.action_space)
        return None if key is None else ("calls", self._whole, config.eval_agents, key)

    def _synchronize(self) -> None:
        """Give every rank rank 0's state: fresh or restored, the ranks start identical.

        Broadcasting rank 0's restored state equals every rank reading the same checkpoint, and
        needs no shared file system. The random generator stays per rank: a rank other than 0
        reseeds it from its rank and the restored step, so a resumed run draws fresh samples.
        """
        world = self.world
        if world.size == 1:
            return
        items = {k: v for k, v in self.agent.checkpointables().items() if k != "rng"}
        variables = [self.step]
        for item in items.values():
            if isinstance(item, tf.Variable):
                variables.append(item)
            elif isinstance(item, tf.random.Generator):  # E.g. RND's mask: the same on all ranks.
                variables.append(item.state)
            else:
                variables += list(item.variables)
        world.broadcast_variables(variables)
        if not world.is_root and self.step.numpy() > 0:
            self.agent.rng.reset_from_seed(self._rank_seed + self.env_steps)

    def _warm_up(self) -> None:
        """A fresh run gives the agent `agent.warm_up_steps` random steps (RND's statistics)."""
        steps = self.agent.warm_up_steps
        if not steps or self.step.numpy() > 0:
            return  # Nothing to warm up, or resumed: the statistics come from the checkpoint.
        if self.config.native_env:
            walk = exploration.native_random_frames(self.train_env, steps, self._rank_seed)
            for frames in walk:
                self.agent.warm_up(frames)
            return
        batch_env = self._train_batch  # The training envs, as Python objects.
        with self.python_errors():
            for frames in exploration.random_frames(batch_env, steps, self._rank_seed):
                self.agent.warm_up(frames)

    @property
    def _call_steps(self) -> int:
        """Steps per environment in one training call."""
        return self.config.rollout_length * self.config.rollouts_per_call

    @property
    def env_steps(self) -> int:
        """Training env steps so far, over all ranks."""
        return int(self.agent.env_steps.numpy()) * self.world.size

    def train_call(self):
        """One compiled training call: `rollouts_per_call` rollouts of `rollout_length` steps of
        this rank's envs with the update after each; what the loop's train phase calls.

        Returns:
            `done`, `score` and `length` tensors [steps, envs] of the call's steps (the loop
            gathers them over ranks).
        """
        with tf_loading.quiet_native_logs():  # The first call's compiling logs, for one.
            return self._train_fn()

    def eval_call(self, reset: bool):
        """One compiled evaluation call: `EVAL_CALL_STEPS` steps of the evaluation policy on
        the eval envs, restarted first when `reset`; returns `done`, `score` and `length`."""
        with tf_loading.quiet_native_logs():
            return self._eval_fn(tf.constant(reset))

    def evaluate(self, episodes: int) -> list[float]:
        """Returns of `episodes` whole episodes of the evaluation policy on the restarted
        eval envs (see `play_episodes`)."""
        return self.play_episodes(episodes)[0]

    def play_episodes(
        self, episodes: int, stop: Callable[[], bool] | None = None
    ) -> tuple[list[float], list[int]]:
        """Returns and lengths of `episodes` whole episodes of the evaluation policy.

        The eval envs restart, and each plays its quota (the episodes spread evenly over the
        envs); only the first episodes of each env count, so that short episodes are not
        favoured (as Stable-Baselines3's `evaluate_policy` counts them). Each episode runs to its
        end or time limit. Under MPI each rank plays its share, and every rank returns all of
        them (rank 0's first).

        Args:
            episodes: Episodes to play, over all ranks.
            stop: Asked after each compiled call (`EVAL_CALL_STEPS` steps) that left episodes
                to play; True ends this rank's share there, with the episodes finished so far.
        """
        world, count = self.world, self.config.eval_agents
        share = episodes // world.size + (world.rank < episodes % world.size)
        quota = [share // count + (index < share % count) for index in range(count)]
        played: list[list[tuple[float, int]]] = [[] for _ in range(count)]
        # Every env ends its quota of episodes within quota * limit steps of the restart.
        calls = math.ceil(max(quota) * self._eval_limit / EVAL_CALL_STEPS) + 1 if share else 0
        reset = True
        with self.python_errors():
            for _ in range(calls):
                if all(len(done) >= want for done, want in zip(played, quota)):
                    break  # Complete: a stop asked now keeps this evaluation.
                if stop is not None and not reset and stop():
                    break
                done, score, length = (np.asarray(x) for x in self.eval_call(reset))
                reset = False
                for step, index in zip(*np.nonzero(done)):
                    if len(played[index]) < quota[index]:
                        played[index].append((float(score[step, index]), int(length[step, index])))
                if self.on_eval_call is not None:
                    self.on_eval_call(sum(map(len, played)), share)
        mine = [episode for env_episodes in played for episode in env_episodes]
        every = [episode for rank in world.allgather(mine) for episode in rank]
        return [score for score, _ in every], [length for _, length in every]

    def save(self) -> str | None:
        """Save a checkpoint numbered by the env steps (rank 0; other ranks save nothing);
        returns its path.

        Raises:
            CheckpointError: The write failed (e.g. a full disk); the checkpoints written
                before stay as they were.
        """
        if self._checkpoints is None:
            return None
        with self.save_lock:
            return save_checkpoint(self._checkpoints, self.env_steps)

    def export_policy(self, path: str) -> str:
        """Export the agent's current policy as a SavedModel at `path` (see
        `agents.ppo.export.export_policy`); returns `path`."""
        return export.export_policy(self.agent, path)

    def summary_log(self) -> tensorboard_log.TensorBoardLog:
        """The callback writing this run's reports as TensorBoard summaries, in its directory."""
        return tensorboard_log.TensorBoardLog(self.run_dir)

    def write_hparams(self, values: dict) -> None:
        """Record `values` (the config and seed) in TensorBoard's hparams plugin."""
        tensorboard_log.write_hparams(self.run_dir, values)

    def latest_checkpoint(self) -> str | None:
        """The path of the checkpoint saved last (rank 0's), or None."""
        return self._checkpoints.latest_checkpoint if self._checkpoints is not None else None

    def guard_saves(self, lock) -> None:
        """Hold `lock` (a context manager) while each checkpoint is written."""
        self.save_lock = lock

    @property
    def batch_envs(self) -> list[tools.BatchEnv]:
        """The Python batch environments built so far (train, then eval), for watchdogs."""
        return list(self._envs)

    def close(self) -> None:
        xla_scratch.publish()  # The programs this run compiled, for the next start.
        for env in self._envs:
            env.close()
        self._envs = []
        pooled, self._pooled = getattr(self, "_pooled", None), None
        if pooled is None:
            return
        parts = (self.eval_env, self.train_env, self.agent, self.evaluator)
        if not self.config.native_env:  # The pool keeps no closed env alive.
            self.eval_env.hold(None)
            self.train_env.hold(None)
        agent_pool.release(pooled[0], (parts, self._calls), pooled[1])

    def train_call_metrics(self) -> tuple[np.ndarray, np.ndarray, dict]:
        """One training call, checked (a failed env, a non-finite value), as the loop takes it:
        `done` and `score` of all ranks' steps [steps, envs], and the metrics of its report
        (the update's, rates, histograms, the episodes' `length`)."""
        start = time.perf_counter()
        done, score, length = self._gather(*self.train_call())
        if self.on_train_episodes is not None:
            self.on_train_episodes(score[done].tolist())
        self.train_env.raise_if_nonfinite()  # A native env's, recorded inside the call.
        self.agent.raise_if_nonfinite()  # Before the loop can save this step's checkpoint.
        metrics = {key: value.numpy() for key, value in self.agent.metrics.items()}
        metrics["length"] = length  # Episode lengths, for the loop's mean_length.
        metrics["env_steps_per_second"] = done.size / (time.perf_counter() - start)
        metrics["env_steps"] = float(self.env_steps)
        metrics.update(tensorboard_log.histograms(self.rollout(), self._log_std()))
        batch = self._train_batch
        visited = exploration.visited_states(batch) if batch is not None else None
        if visited is not None:  # Distinct cells of all envs of all ranks.
            union = set().union(*self.world.allgather(visited))
            metrics["visited_cells"] = float(len(union))
        return done, score, metrics

    def rollout(self, fields=tensorboard_log.ROLLOUT_FIELDS) -> dict[str, np.ndarray]:
        """The latest training rollout of this rank: the buffer's `fields`, [time, batch, ...]."""
        return self.agent.last_rollout(fields)

    def _log_std(self):
        """The Gaussian policy's log-std variable, or None."""
        found = [v for v in self.agent.network.variables if "log_std" in v.name]
        return found[0].numpy() if found else None

    def eval_phase(self, should_stop: Callable[[], bool] | None = None):
        """One evaluation of `eval_episodes` episodes, as the loop takes it: `done` and `score`
        an item per episode, and the metrics of its report (with the episodes' `length`).

        `should_stop` (a signal, in the Trainer) is asked after each compiled call: True ends
        the evaluation there, and it scores nothing (`interrupted` 1.0): a few episodes are not
        the score of `eval_episodes`, and a long evaluation (Atari's, up to 27,000 steps) must
        not hold a stopping run.
        """
        stopped = False

        def stop() -> bool:
            nonlocal stopped
            stopped = should_stop is not None and bool(should_stop())
            return stopped

        scores, lengths = self.play_episodes(self.config.eval_episodes, stop)
        self.eval_env.raise_if_nonfinite()  # A native env's, recorded inside its calls.
        metrics = {"env_steps": float(self.env_steps)}
        if stopped:
            scores, lengths, metrics["interrupted"] = [], [], 1.0
        missing = self.config.eval_episodes - len(scores)  # Only an env past its own limit.
        done = np.array([True] * len(scores) + [False] * missing)
        metrics["length"] = np.array(lengths + [0] * missing)
        if scores:
            metrics.update(
                score_std=float(np.std(scores)),
                score_min=float(np.min(scores)),
                score_max=float(np.max(scores)),
            )
        return done, np.array(scores + [0.0] * missing), metrics

    def _episode_limit(self) -> int:
        """The eval envs' episode limit: an evaluation plays whole episodes, so a run whose
        episodes might never end is refused."""
        if self.config.native_env:
            limit = self.eval_env.max_episode_steps
        else:
            limit = batch_episode_limit(self._eval_batch)
        if limit is None:
            how = "set max_episode_steps (e.g. --set max_episode_steps=1000)"
            if vector_envs.is_registered(self.config.env):  # It ignores max_episode_steps.
                how = "give its envs a time limit (gymnasium's TimeLimit wrapper)"
            raise UsageError(
                f"Evaluation plays whole episodes, but {self.config.env!r} has no time limit: "
                f"{how}."
            )
        return limit

    def _gather(self, done, score, length) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`done`, `score` and `length` of all ranks side by side (one collective)."""
        done, score, length = np.asarray(done), np.asarray(score), np.asarray(length)
        if self.world.size == 1:
            return done, score, length
        joined = self.world.concat(np.stack([score.astype(np.float64), done, length]))
        return joined[1].astype(bool), joined[0], joined[2].astype(np.int32)

    def _make_batch_env(self, count: int, seed: int, name: str) -> tools.InGraphBatchEnv:
        config = self.config
        if config.native_env:
            try:
                return NativeBatchEnv(
                    make_native(
                        config.env,
                        config.max_episode_steps,
                        config.layout_bank,
                        config.env_wrapper,
                        budget.layout_draws(config, self.world.size),
                    ),
                    count,
                    seed,
                )
            except ValueError as error:
                raise UsageError(str(error)) from None
        try:
            batch_env = make_batch_env(config, count, seed, name, self._envs)
            return tools.InGraphBatchEnv(batch_env)
        except ValueError as error:  # E.g. an unknown env id, or num_agents=0.
            raise UsageError(str(error)) from None

    @contextlib.contextmanager
    def python_errors(self):
        """Python envs' errors raised inside a compiled call, as the envs' own errors."""
        with self.train_env.python_errors(), self.eval_env.python_errors():
            yield
