"""PPO, read top to bottom: the agent acts and stores each transition; when the rollout is full,
the update computes each value stream's targets (GAE), cuts the rollout into sequences and runs
epochs of shuffled minibatches, each one gradient step on the loss (policy objective, value,
entropy, an agent's extra losses). The math is in pure functions tested against references:
`advantages` (GAE), `losses`, `streams`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2

from agents.config import budget
from agents.config.config import Config
from agents.config.validate import POLICY_LOSSES, validate_config
from agents.ppo import advantages, compilation, losses, streams
from agents.ppo.evaluator import Evaluator  # noqa: F401 (re-exported)
from agents.ppo.export import EXPORT_MODULE
from agents.ppo.memory import RolloutBuffer, transition_specs
from agents.ppo.networks.contract import RecurrentState, Weights, act
from agents.ppo.networks.mlp import make_network
from agents.ppo.networks.sde import exploration_noise
from agents.ppo.nonfinite import FINITE, NonfiniteFlag, nonfinite_code
from agents.ppo.optimizers import make_optimizer
from agents.ppo.streams import ValueStream, extrinsic
from agents.tools.collectives import ONE_PROCESS, Ranks
from agents.tools.dict_observations import normalized_entries
from agents.tools.normalize import RewardScaler, StreamingNormalize


class PPO(tf.Module):
    """Proximal Policy Optimization, driven by `tools.simulate`.

    Each env contributes `rollout_length` consecutive steps (recurrent state carried across
    rollouts); when the rollout is full, `experience` runs the update: GAE(lambda) targets, then
    `update_epochs` passes over shuffled minibatches of `chunk_length`-step sequences. Everything
    runs inside the caller's `tf.function`; diagnostics of the latest update are in `metrics`.

    Args:
        batch_env: The `InGraphBatchEnv` to learn on.
        config: The run's config (see `agents.config.schema`).
        seed: Seed of action sampling and minibatch shuffling.
        ranks: The MPI ranks (`agents.tools.collectives.Ranks`; default: one process). With its
            `cross_replica_sum`, gradients and normalizer statistics are averaged over all
            ranks; with its `all_gather`, where `compilation.replicated_update` says so, the
            ranks gather their rollouts and each runs the update of all of them, compiled by
            XLA, instead of averaging gradients minibatch by minibatch.
    """

    # Minibatch diagnostics averaged over an epoch, and all diagnostics of an update.
    LOSS_METRICS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "grad_norm")
    METRICS = LOSS_METRICS + ("explained_variance", "learning_rate", "kl_beta", "epochs")
    # The export module kept by `agents.ppo.export` holds the network's variables again.
    _TF_MODULE_IGNORED_PROPERTIES = tf.Module._TF_MODULE_IGNORED_PROPERTIES | {EXPORT_MODULE}

    def __init__(
        self,
        batch_env,
        config: Any,
        seed: int = 0,
        ranks: Ranks = ONE_PROCESS,
    ):
        super().__init__(name="ppo")
        cross_replica_sum, all_gather = ranks.cross_replica_sum, ranks.all_gather
        self._world_size = world_size = ranks.size
        if not isinstance(config, Config):  # A Config is checked where it was built.
            validate_config(config)
        self._config = config
        self._size = size = len(batch_env)
        self._sum = cross_replica_sum
        replicated = all_gather is not None and compilation.replicated_update(config, world_size)
        self._gather = all_gather if replicated else None
        # What the update averages over ranks with: nothing when every rank updates on all data.
        self._update_sum = None if replicated else cross_replica_sum
        observ_space, action_space = batch_env.observation_space, batch_env.action_space
        self.observation_space, self.action_space = observ_space, action_space
        # XLA fuses the whole update (targets, epochs, minibatches, optimizer) into few kernels:
        # 5x faster per gradient step on a CPU for dense networks (see `compilation`). MPI's
        # collectives are Python calls, which XLA cannot compile, so under MPI the update runs in
        # graph mode (two XLA programs per minibatch around the collective were slower still).
        # Networks read it before they are built (convolutions take the form XLA runs fastest).
        self._xla_update = compilation.xla_update(config) and self._update_sum is None
        self.network = self._make_network(observ_space, action_space, config)
        # Parts that learn beside the network (e.g. RND's predictor), by name.
        self.components = self._make_components(observ_space, config)
        self.optimizer = make_optimizer(config.optimizer, config.learning_rate)
        self.observ_normalizer, self.reward_scaler = _normalizers(
            observ_space, size, config, cross_replica_sum
        )
        self.rng = tf.random.Generator.from_seed(seed)
        self.env_steps = tf.Variable(0, dtype=tf.int64, trainable=False, name="env_steps")
        self.kl_beta = tf.Variable(
            float(config.kl_init_beta or 1.0), trainable=False, name="kl_beta"
        )
        # Transient state (not checkpointed; see tests/ppo/test_checkpoint_state.py): the latest
        # metrics, the non-finite flag, and the recurrent state and episode starts of the envs.
        with tf.name_scope("metrics"):
            self.metrics = {
                key: tf.Variable(0.0, trainable=False, name=key) for key in self.METRICS
            }
        # Set when an update met a non-finite loss or gradient (see `raise_if_nonfinite`).
        self.nonfinite = NonfiniteFlag()
        # The env steps the run trains (`budget.train_budget`), for the linear schedules: a
        # variable, so runs that differ only in `train_steps` run one compiled update, and
        # from the config, not the checkpoint, so a resumed run decays over its new budget.
        self.train_budget = tf.Variable(
            float(budget.train_budget(config, world_size)),
            trainable=False,
            dtype=tf.float32,
            name="train_budget",
        )
        self._recurrent = RecurrentState(self.network, size)
        self._sde = None  # gSDE's exploration matrices (transient), when configured.
        if config.sde_sample_freq is not None:
            self._sde = exploration_noise(
                self.network, observ_space.shape, size, config.sde_sample_freq, config.network
            )
        self.streams = self._value_streams(config)
        self._buffer = self._rollout_buffer(observ_space, batch_env.action, config, size)
        self.optimizer.build(self._trainable_variables())
        # One process reads the rollout inside the compiled update; ranks pass the gathered one.
        xla = self._xla_update
        self._update_rollout = tf.function(self._update_rollout, jit_compile=xla, autograph=False)
        self._update_gathered = tf.function(self._update, jit_compile=xla, autograph=False)
        self._deferred = False  # Set while `deferred_updates` traces steps.

    def _rollout_buffer(self, observ_space, action, config, size) -> RolloutBuffer:
        """The buffer of one rollout: transitions, each stream's values, the agent's extras."""
        specs = transition_specs(
            observ_space, action, self._recurrent.state, config.normalize_observ
        )
        specs["advantage"] = tf.TensorSpec([], tf.float32)  # Set by the update, for summaries.
        for stream in self.streams:
            specs["value" + stream.key] = tf.TensorSpec([], tf.float32)
            if stream.episodic:
                specs["final_value" + stream.key] = tf.TensorSpec([], tf.float32)
        specs.update(self._observation_specs())
        return RolloutBuffer(specs, config.rollout_length, size)

    # The algorithm protocol (`tools.simulate` calls it): act, store, update when full.

    def begin_episode(self, agent_indices: tf.Tensor) -> None:
        self._recurrent.begin_episode(agent_indices)

    def perform(self, agent_indices: tf.Tensor, observ: tf.Tensor) -> tf.Tensor:
        """Sample actions for all environments (`agent_indices` must cover the batch)."""
        del agent_indices
        if self.observ_normalizer is not None:
            self.observ_normalizer.accumulate(observ)  # Shared over MPI ranks by `_train`.
        raw, observ = observ, self.normalize(observ)
        seed = tf.cast(self.rng.make_seeds(1)[:, 0], tf.int32)  # tfp wants int32 seeds.
        action, fields, state = self._act(observ, seed)
        self._buffer.write(
            dict(
                observ=observ,
                action=action,
                reset=self._recurrent.reset.read_value(),
                state=self._recurrent.state.read_value(),
                **fields,
                **self._observation_fields(raw),
            )
        )
        self._recurrent.advance(state)
        return action

    def _act(self, observ: tf.Tensor, seed: tf.Tensor):
        """Sample actions; returns (action, fields to store, new recurrent state)."""
        output = act(self.network, observ, self._recurrent.reset, self._recurrent.state)
        if self._sde is None:
            action = output.policy.sample(seed=seed)
        else:
            noise = self._sde(output.features, self._buffer.index.read_value(), self.rng)
            action = output.policy.mean() + noise[:, None]
        fields = {"log_prob": output.policy.log_prob(action)[:, 0]}
        # The values of the agent's streams: a network may have more heads (the CNN+GRU's "_int").
        fields.update({f"value{s.key}": output.values[s.key] for s in self.streams})
        return action[:, 0], fields, output.state

    def experience(self, agent_indices, observ, action, reward, terminated, truncated, next_observ):
        """Store the transition; run the update when the rollout is full."""
        del agent_indices, observ, action
        full = self._store(reward, terminated, truncated, next_observ)
        if not self._deferred:
            rare_branch(full, lambda: no_value(self._train(next_observ)))

    def _store(self, reward, terminated, truncated, next_observ) -> tf.Tensor:
        """Write what the env returned into the rollout; returns whether the rollout is full."""
        done = terminated | truncated
        if self.reward_scaler is not None:
            reward = self.reward_scaler.scale(reward, done)
        episodic = [stream.key for stream in self.streams if stream.episodic]

        def final_values():  # Truncated episodes bootstrap from their final observation's value.
            values, mask = self._bootstrap(next_observ), tf.cast(truncated, tf.float32)
            return {f"final_value{key}": values[key] * mask for key in episodic}

        finals = tf.cond(
            tf.reduce_any(truncated),
            final_values,
            lambda: {f"final_value{key}": tf.zeros([self._size]) for key in episodic},
        )
        self._buffer.write(
            dict(reward=reward, terminated=terminated, truncated=truncated, **finals)
        )
        # Counted after the env step (nothing else orders them): a step that failed is not made.
        with tf.control_dependencies([reward]):
            self.env_steps.assign_add(self._size)
        return self._buffer.advance()

    def end_episode(self, agent_indices: tf.Tensor) -> None:
        del agent_indices

    @contextlib.contextmanager
    def deferred_updates(self) -> Iterator[None]:
        """Steps traced inside only store their transitions; the caller runs `update_if_full`.

        For a rollout compiled as one loop (a native env): the update's branch in every step
        costs XLA about 5% of the step even when not taken, so it goes after the loop.
        """
        self._deferred = True
        try:
            yield
        finally:
            self._deferred = False

    def discard_rollout(self) -> None:
        """Empty the rollout gathered so far, without an update (e.g. after steps timed under
        `deferred_updates`, so that the next ones start a fresh rollout)."""
        self._buffer.clear()

    def update_if_full(self, next_observ: tf.Tensor) -> None:
        """The update, if the rollout is full; `next_observ` follows its last step."""
        rare_branch(self._buffer.full(), lambda: no_value(self._train(next_observ)))

    def normalize(self, observ: tf.Tensor) -> tf.Tensor:
        """Observations as the network sees them (normalized and clipped when configured)."""
        if self.observ_normalizer is not None:
            return self.observ_normalizer.transform(observ)
        return observ if observ.dtype == tf.uint8 else tf.cast(observ, tf.float32)

    # The update, in the order it runs: targets, sequences, epochs of minibatch steps, the loss.

    def _train(self, next_observ: tf.Tensor) -> None:
        """The update on the full rollout; its advantages are kept for the summaries."""
        self._sync_statistics()
        if self._gather is None:
            self._update_rollout(next_observ, self._epoch_keys())
            return
        data, state = self._buffer.data(), self._recurrent.state.read_value()
        advantage = self._replicated_update(data, next_observ, state, self._epoch_keys())
        self._buffer.assign("advantage", advantage)
        self._buffer.clear()

    def _sync_statistics(self) -> None:
        """Under MPI, the normalizers' statistics of this rollout's steps on all ranks.

        Ranks gather them once a rollout rather than at every step (a collective per step made
        every rank wait for the slowest one at every step); within a rollout each rank's
        statistics follow its own envs. In a single process there is nothing to share.
        """
        for normalizer in (self.observ_normalizer, self.reward_scaler):
            if normalizer is not None:
                normalizer.sync()

    def _update_rollout(self, next_observ: tf.Tensor, epoch_keys: tf.Tensor) -> None:
        """`_update` on this process's rollout buffer, which it then empties."""
        data, state = self._buffer.data(), self._recurrent.state
        self._buffer.assign("advantage", self._update(data, next_observ, state, epoch_keys))
        self._buffer.clear()

    def _replicated_update(self, data: dict, next_observ, state, epoch_keys) -> tf.Tensor:
        """The update of all ranks' rollouts (gathered), the same on every rank; returns this
        rank's advantages. The minibatch order is rank 0's."""
        names = sorted(data)
        parts = self._gather([data[name] for name in names] + [next_observ, state, epoch_keys])
        joined = {name: _join_batches(part, axis=1) for name, part in zip(names, parts)}
        advantage = self._update_gathered(
            joined, _join_batches(parts[-3]), _join_batches(parts[-2]), parts[-1][0]
        )
        rank, size = self._gather.rank, self._size
        return advantage[:, rank * size : (rank + 1) * size]

    def _epoch_keys(self) -> tf.Tensor:
        """Random keys of each epoch's minibatch order, [update_epochs, sequences].

        With a Python env they are drawn here in graph mode, before the XLA update is called:
        drawn inside that update (a nested XLA function), Pendulum learned far worse, although the
        update given the same order is the same to 1e-9 and the generator's draws advance and do
        not repeat there; the cause is not found. With a native env the whole call is one XLA
        program and they are drawn inside it, where Pendulum learns as well as with a Python env
        (`benchmarks/native.py`).
        """
        batch = self._size * (self._world_size if self._gather is not None else 1)
        count = self._config.rollout_length * batch // self._config.chunk_length
        return tf.stack([self.rng.uniform([count]) for _ in range(self._config.update_epochs)])

    def _update(self, data: dict, next_observ, state, epoch_keys) -> tf.Tensor:
        """Targets and `update_epochs` of minibatch steps on a rollout [time, batch]; returns
        its advantages."""
        data, rollout_metrics = self._targets(dict(data), next_observ, state)
        self._set_learning_rate()
        sequences = to_sequences(data, self._config.chunk_length)
        metrics = run_epochs(
            sequences,
            epoch_keys,
            self._gradient_step,
            self._config.num_minibatches,
            self._config.update_epochs,
            self._config.target_kl,
            self.LOSS_METRICS,
            self._update_sum,
        )
        metrics.update(rollout_metrics)
        if self._config.policy_loss == "kl_penalty":
            # As the original: beta adapts to the KL of the whole rollout after the update.
            kl = self._rollout_kl(sequences)
            self.kl_beta.assign(losses.adapt_kl_beta(self.kl_beta, kl, self._config.kl_target))
        metrics["kl_beta"] = self.kl_beta.read_value()
        metrics["learning_rate"] = tf.cast(self.optimizer.learning_rate, tf.float32)
        for key, value in metrics.items():
            self.metrics[key].assign(tf.cast(value, tf.float32))
        return data["advantage"]

    def _targets(self, data: dict, next_observ: tf.Tensor, state: tf.Tensor) -> tuple[dict, dict]:
        """Adds `advantage` and each stream's return to the rollout; returns it and diagnostics."""
        rewards, metrics = self._stream_rewards(data, next_observ)
        advantage, returns = streams.stream_targets(
            data,
            rewards,
            self._bootstrap(next_observ, state),
            self.streams,
            self._config.gae_lambda,
            self._stream_coefs(),
        )
        data.update(returns)
        if self._config.normalize_advantages:
            advantage = advantages.normalize_advantages(advantage)
        data["advantage"] = advantage
        for key in (stream.key for stream in self.streams):
            metrics["explained_variance" + key] = advantages.explained_variance(
                data["value" + key], data["return" + key]
            )
        return data, metrics

    def _bootstrap(self, observ: tf.Tensor, state: tf.Tensor | None = None) -> dict:
        """Each stream's value of observations that follow the current step (current state)."""
        state = self._recurrent.state if state is None else state
        reset = tf.zeros([observ.shape[0]], tf.bool)
        return act(self.network, self.normalize(observ), reset, state).values

    def _gradient_step(self, batch: dict) -> dict:
        variables = self._trainable_variables()
        with tf.GradientTape() as tape:
            loss, metrics = self._loss(batch)
        gradients = tape.gradient(loss, variables)
        if self._update_sum is not None:
            gradients = average_over_ranks(gradients, self._update_sum)
        gradients, norm = tf.clip_by_global_norm(gradients, self._config.max_grad_norm or 1e10)
        # A non-finite loss or gradient never reaches the weights: the step is skipped and
        # recorded, and the caller stops training (so no checkpoint holds non-finite values).
        code = nonfinite_code(loss, norm)
        tf.cond(
            tf.equal(code, FINITE),
            lambda: self._apply(gradients, variables),
            lambda: self.nonfinite.record(code, self.env_steps),
        )
        return dict(metrics, grad_norm=norm)

    def _apply(self, gradients, variables):
        self.optimizer.apply_gradients(zip(gradients, variables))
        return tf.no_op()

    def _loss(self, batch: dict):
        """Total loss and `LOSS_METRICS` (but grad_norm) of a minibatch of sequences."""
        return minibatch_loss(
            self.network,
            batch,
            self.kl_beta,
            self._config,
            self.streams,
            self._extra_losses(batch),
            self._entropy_coef(),
        )

    def _entropy_coef(self) -> tf.Tensor | float:
        """The entropy bonus's weight in this update: `entropy_coef`, falling linearly to 0 over
        the run with `entropy_schedule: linear` (as the learning rate's schedule)."""
        config = self._config
        if config.entropy_schedule == "linear":
            return config.entropy_coef * self._remaining()
        return config.entropy_coef

    def _rollout_kl(self, sequences: dict) -> tf.Tensor:
        """Approximate KL of the policy before and after the update, over the whole rollout."""
        output = self.network(sequences["observ"], sequences["reset"], sequences["state"])
        log_prob = output.policy.log_prob(sequences["action"])
        kl = losses.approx_kl(sequences["log_prob"], log_prob)
        if self._update_sum is not None:
            kl = average_over_ranks([kl], self._update_sum)[0]
        return kl

    def _set_learning_rate(self) -> None:
        """Set the rate from the config before each update, for either schedule.

        The linear schedule decays over the run's budget (`budget.train_budget`, the env steps
        that actually run) from the env steps made before this update's rollout, as
        Stable-Baselines3 does: the first update trains at the full rate, the last of N at 1/N of
        it, none at zero. The optimizer checkpoints its learning rate, so a constant rate is
        assigned too: a resumed run with `--set learning_rate=...` must use the new rate, not the
        restored one.
        """
        config = self._config
        rate = tf.constant(config.learning_rate, tf.float32)
        if config.learning_rate_schedule == "linear":
            rate *= self._remaining()
        self.optimizer.learning_rate.assign(rate)

    def _remaining(self) -> tf.Tensor:
        """1 - the share of the run's budget (`budget.train_budget`) made before this update's
        rollout, at least 0: 1 at the first update, 1/N at the last of N."""
        config = self._config
        before = self.env_steps - config.rollout_length * self._size
        made = tf.cast(before * self._world_size, tf.float32)
        return tf.maximum(1.0 - made / self.train_budget, 0.0)

    def _stream_coefs(self) -> dict[str, tf.Tensor | float]:
        """Each stream's weight in the advantage of this update (its `coef`)."""
        return {stream.key: stream.coef for stream in self.streams}

    # Hooks for agents with other networks, value streams or losses (see
    # `agents.ppo.exploration.rnd_agent`).

    warm_up_steps = 0  # Random-agent env steps whose frames go to `warm_up` before training.

    def _make_network(self, observ_space, action_space, config):
        return make_network(observ_space, action_space, config)

    def _make_components(self, observ_space, config) -> dict[str, tf.Module]:
        """Modules beside the network: their `trainable_variables` train with it, and their
        `checkpointables()` are saved as `<name>_<key>`."""
        del observ_space, config
        return {}

    def _value_streams(self, config) -> tuple[ValueStream, ...]:
        """The value streams: plain PPO has one, the environment's reward."""
        return (streams.extrinsic(config.discount),)

    def _stream_rewards(self, data: dict, next_observ: tf.Tensor) -> tuple[dict, dict]:
        """Rewards of each stream for a [T, B] rollout, and diagnostics of them. The rollout
        holds observations as the network sees them; `next_observ` is as the env gave it."""
        del next_observ
        return {"": data["reward"]}, {}

    def _observation_specs(self) -> dict[str, tf.TensorSpec]:
        """Specs of per-step fields that `_observation_fields` stores."""
        return {}

    def _observation_fields(self, observ: tf.Tensor) -> dict[str, tf.Tensor]:
        """Fields stored each step from the observation as the env gave it (before the
        normalizer, whose statistics move every step)."""
        del observ
        return {}

    def _extra_losses(self, batch: dict) -> dict[str, tf.Tensor]:
        """Losses beyond policy, value and entropy, each added with weight 1."""
        del batch
        return {}

    def warm_up(self, frames) -> None:
        """Take a random agent's frames before training (agents with `warm_up_steps`)."""
        del frames

    def _trainable_variables(self) -> list:
        variables = list(self.network.trainable_variables)
        for component in self.components.values():
            variables += list(component.trainable_variables)
        return variables

    # What checkpoints, exports and summaries read.

    def policy_checkpointables(self) -> dict:
        """What acting needs: the network and the observation normalizer."""
        items = dict(network=Weights(self.network))
        if self.observ_normalizer is not None:
            items["observ_normalizer"] = self.observ_normalizer
        return items

    @property
    def config(self) -> Any:
        """The config of the run this agent serves."""
        return self._config

    def take_config(self, config: Any) -> None:
        """Serve the run of `config`, which differs from this agent's only in keys the run
        alone reads (the agent pool's `RUN_ONLY_KEYS`: what is traced is the same)."""
        self._config = config

    def checkpointables(self) -> dict:
        """What a checkpoint must hold to resume training (not the partial rollout)."""
        items = self.policy_checkpointables()
        items.update(
            optimizer=self.optimizer, rng=self.rng, env_steps=self.env_steps, kl_beta=self.kl_beta
        )
        if self.reward_scaler is not None:
            items["reward_scaler"] = self.reward_scaler
        for name, component in self.components.items():
            items.update({f"{name}_{key}": v for key, v in component.checkpointables().items()})
        return items

    def last_rollout(self, keys) -> dict[str, np.ndarray]:
        """Fields of the latest complete rollout, [time, batch, ...] (after its update, also
        `advantage`, as the policy was trained on it); keys the agent does not store are left out.
        """
        fields = self._buffer.fields
        return {key: fields[key].numpy() for key in keys if key in fields}

    def raise_if_nonfinite(self) -> None:
        """Raise FloatingPointError if an update met a non-finite loss or gradient."""
        self.nonfinite.raise_if_set("the PPO update")


def to_sequences(data: dict, chunk_length: int) -> dict:
    """Cut [T, B, ...] fields into [B * T / chunk_length, chunk_length, ...] sequences."""

    def cut(value):
        length, batch = value.shape[0], value.shape[1]
        chunks = length // chunk_length
        value = tf.reshape(value, [chunks, chunk_length, batch] + value.shape[2:].as_list())
        perm = [0, 2, 1] + list(range(3, len(value.shape)))
        return tf.reshape(
            tf.transpose(value, perm), [chunks * batch, chunk_length] + value.shape[3:]
        )

    sequences = {key: cut(value) for key, value in data.items() if key != "state"}
    # Recurrent networks start each sequence from the state stored at its first step.
    sequences["state"] = cut(data["state"])[:, 0]
    return sequences


def run_epochs(
    sequences: dict[str, tf.Tensor],
    epoch_keys: tf.Tensor,
    gradient_step: Callable[[dict], dict],
    minibatches: int,
    epochs: int,
    target_kl: float | None,
    metric_keys: Sequence[str],
    cross_replica_sum=None,
) -> dict[str, tf.Tensor]:
    """`epochs` passes of shuffled minibatches over `sequences`; the last epoch's mean metrics.

    Written as `tf.while_loop`s (no AutoGraph); minibatches are rows of a reshaped permutation,
    so every shape is static, which XLA needs to compile the loop well.

    Args:
        sequences: Fields [count, chunk, ...] of the rollout's sequences.
        epoch_keys: [epochs, count] random keys; epoch e visits the sequences in the order that
            sorts `epoch_keys[e]` (a remainder of count // minibatches is left out).
        gradient_step: Takes a minibatch, applies one step, returns its metrics.
        minibatches: Minibatches per epoch.
        epochs: The most epochs.
        target_kl: Stop after an epoch whose mean approx_kl exceeds 1.5 x target_kl (None: never).
        metric_keys: The keys of `gradient_step`'s metrics to average.
        cross_replica_sum: Under MPI, the epoch means are averaged over ranks (they must agree
            on the early stop, or they hang).

    Returns:
        Mean metrics of the last epoch, and `epochs`, how many ran (float32).
    """
    count = sequences["reward"].shape[0]
    size = count // minibatches
    zeros = {key: tf.constant(0.0) for key in metric_keys}

    def epoch(done, _, stop):
        del stop
        order = tf.reshape(tf.argsort(epoch_keys[done])[: minibatches * size], [minibatches, size])

        def step(index, totals):
            batch = {key: tf.gather(value, order[index]) for key, value in sequences.items()}
            metrics = gradient_step(batch)
            return index + 1, {key: totals[key] + metrics[key] for key in totals}

        _, totals = tf.while_loop(lambda index, _: index < minibatches, step, (0, zeros))
        means = {key: value / minibatches for key, value in totals.items()}
        if cross_replica_sum is not None:
            keys = sorted(means)
            averaged = average_over_ranks([means[key] for key in keys], cross_replica_sum)
            means = dict(zip(keys, averaged))
        stop = tf.constant(False)
        if target_kl:
            stop = means["approx_kl"] > 1.5 * target_kl
        return done + 1, means, stop

    done, metrics, _ = tf.while_loop(
        lambda done, _, stop: (done < epochs) & tf.logical_not(stop),
        epoch,
        (tf.constant(0), zeros, tf.constant(False)),
    )
    metrics["epochs"] = tf.cast(done, tf.float32)
    return metrics


def minibatch_loss(
    network,
    batch: dict,
    kl_beta: tf.Tensor,
    config: Any,
    streams: Sequence[ValueStream] | None = None,
    extra_losses: Mapping[str, tf.Tensor] | None = None,
    entropy_coef: tf.Tensor | float | None = None,
):
    """Total loss and diagnostics of one minibatch of sequences.

    The losses are a dict, weighted in one place: `policy` (1), `value` (`value_coef`; the sum of
    every stream's value loss, each clipped by `value_clip` when set), `entropy` (`entropy_coef`,
    of the negated entropy) and any `extra_losses` (1 each, e.g. RND's predictor).

    Args:
        network: Maps (observ, reset, state) to a `NetworkOutput` (a policy, values by stream).
        batch: The minibatch: `observ`, `reset`, `state`, `action`, `log_prob`, `advantage`, and
            `value{key}` and `return{key}` per stream.
        kl_beta: The KL penalty coefficient (for `policy_loss: kl_penalty`).
        config: `policy_loss`, `clip_ratio`, `value_clip`, `value_coef`, `entropy_coef`, ...
        streams: The value streams (default: one extrinsic stream).
        extra_losses: Further named losses of the agent, added with weight 1.
        entropy_coef: The entropy bonus's weight (default: `config.entropy_coef`), e.g. as
            `entropy_schedule` has it decay.

    Returns:
        Tuple (loss, metrics) with scalar tensors; metrics are `<name>_loss` for the policy,
        value and extra losses, `entropy`, `approx_kl` and `clipfrac`.
    """
    streams = streams or (extrinsic(config.discount),)
    output = network(batch["observ"], batch["reset"], batch["state"])
    values = output.values
    log_prob = output.policy.log_prob(batch["action"])
    policy_loss, clipfrac, kl = policy_objective(log_prob, batch, kl_beta, config)
    value_loss = sum(
        losses.value_loss(
            values[s.key], batch["value" + s.key], batch["return" + s.key], config.value_clip
        )
        for s in streams
    )
    entropy = tf.reduce_mean(output.policy.entropy())
    terms = {"policy": policy_loss, "value": value_loss, "entropy": -entropy}
    terms.update(extra_losses or {})
    if entropy_coef is None:
        entropy_coef = config.entropy_coef
    scales = {"value": config.value_coef, "entropy": entropy_coef}
    loss = sum(scales.get(name, 1.0) * term for name, term in terms.items())
    metrics = {f"{name}_loss": term for name, term in terms.items() if name != "entropy"}
    metrics.update(entropy=entropy, approx_kl=kl, clipfrac=clipfrac)
    return loss, metrics


def policy_objective(log_prob, batch: dict, kl_beta: tf.Tensor, config: Any):
    """The configured policy loss of a minibatch; returns (loss, clipfrac, approx_kl)."""
    old_log_prob = batch["log_prob"]
    advantage = batch["advantage"]
    kl = losses.approx_kl(old_log_prob, log_prob)
    clip_ratio = config.clip_ratio
    if config.policy_loss == "clip":
        loss, clipfrac = losses.clip_policy_loss(log_prob, old_log_prob, advantage, clip_ratio)
    elif config.policy_loss == "dual_clip":
        loss, clipfrac = losses.dual_clip_policy_loss(
            log_prob, old_log_prob, advantage, clip_ratio, config.dual_clip
        )
    elif config.policy_loss == "kl_penalty":
        loss = losses.kl_penalty_policy_loss(
            log_prob,
            old_log_prob,
            advantage,
            kl,
            kl_beta,
            config.kl_target,
            config.kl_cutoff_factor,
        )
        _, clipfrac = losses.clip_policy_loss(log_prob, old_log_prob, advantage, clip_ratio)
    else:
        raise ValueError(
            f"Unknown policy_loss {config.policy_loss!r}; accepted: {', '.join(POLICY_LOSSES)}."
        )
    return loss, clipfrac, kl


def average_over_ranks(gradients: list, cross_replica_sum) -> list:
    """Mean of each gradient over MPI ranks, with one collective for all of them."""
    flat = tf.concat([tf.reshape(g, [-1]) for g in gradients], 0)
    count = cross_replica_sum(tf.ones([1], tf.float64))[0]
    flat = tf.cast(cross_replica_sum(tf.cast(flat, tf.float64)) / count, tf.float32)
    sizes = [int(np.prod(g.shape)) for g in gradients]
    return [tf.reshape(part, g.shape) for part, g in zip(tf.split(flat, sizes), gradients)]


def rare_branch(pred: tf.Tensor, true_fn) -> None:
    """`tf.cond(pred, true_fn, tf.no_op)` for a branch that is rarely taken, such as the update.

    In a `tf.function`, TF lowers a cond into Switch/Merge nodes that the executor visits on
    every call, taken or not: for the update inside the rollout loop that cost about 0.1 ms per
    simulation step (15% of it). Unlowered, the If op calls the branch only when it is taken.
    """
    result = tf.cond(pred, true_fn, tf.no_op)
    if_op = result.op.inputs[0].op if isinstance(result, tf.Tensor) else None
    if if_op is not None and if_op.type == "If":  # Else an eager call or a changed TF: as is.
        if_op._set_attr("_lower_using_switch_merge", attr_value_pb2.AttrValue(b=False))


def no_value(_) -> tf.Operation:
    """A no-op, for `tf.cond` branches that call a function returning nothing."""
    return tf.no_op()


def _join_batches(gathered: tf.Tensor, axis: int = 0) -> tf.Tensor:
    """[ranks, ..., batch, ...] gathered tensors as one batch: ranks' batches side by side."""
    moved = tf.experimental.numpy.moveaxis(gathered, 0, axis)  # [..., ranks, batch, ...]
    shape = moved.shape.as_list()
    return tf.reshape(moved, shape[:axis] + [shape[axis] * shape[axis + 1]] + shape[axis + 2 :])


def _normalizers(observ_space, size: int, config, cross_replica_sum):
    """The observation normalizer and the reward scaler the config asks for (else Nones)."""
    observ_normalizer = reward_scaler = None
    if config.normalize_observ:
        observ_normalizer = StreamingNormalize(
            observ_space.shape,
            clip=5.0,
            cross_replica_sum=cross_replica_sum,
            normalized=normalized_entries(observ_space),
        )
    if config.normalize_reward:
        reward_scaler = RewardScaler(
            size, config.discount, clip=10.0, cross_replica_sum=cross_replica_sum
        )
    return observ_normalizer, reward_scaler
