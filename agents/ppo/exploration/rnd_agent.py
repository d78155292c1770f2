"""RNDPPO: PPO with a CNN+GRU policy, two value heads and random network distillation."""

from __future__ import annotations

import tensorflow as tf

from agents.ppo import streams
from agents.ppo.algorithm import PPO
from agents.ppo.exploration.e3b import E3B
from agents.ppo.exploration.episodic import EpisodicVisits, count_bonus
from agents.ppo.exploration.rnd import RND, choose_torso
from agents.ppo.exploration.rnd_view import rnd_view
from agents.ppo.networks.cnn_gru import cnn_gru
from agents.ppo.networks.mlp import make_network
from agents.tools.collectives import ONE_PROCESS, Ranks
from agents.tools.normalize import RewardScaler


class RNDPPO(PPO):
    """PPO for pixel observations with an exploration bonus (Burda et al., 2018).

    The policy is a `CnnGruPolicy` with a value head per stream; it acts one step at a time and
    scores `chunk_length`-step sequences for the loss, as every network does. RND is a component
    of the agent (`components["rnd"]`): after each rollout, its prediction error on the next
    frames is the intrinsic reward, scaled by the running std of its discounted return.
    Two GAE streams follow: intrinsic (`gamma_int`, non-episodic: episode ends do not cut it)
    and extrinsic (`discount`, episodic, truncated episodes bootstrapped). The advantage is
    `int_coef * A_int + ext_coef * A_ext`; the loss adds both value heads' errors and the RND
    predictor's loss. With `int_coef=0` the same agent is the no-exploration control.

    With `bonus: noveld` the intrinsic reward is NovelD's (Zhang et al., 2021) instead: the
    growth of RND's error from an observation to the next, `max(e(s') - alpha * e(s), 0)`, paid
    only where `s'` is a first visit within its episode (`EpisodicVisits`, keyed by a hash of
    the observation RND reads), then scaled the same way.

    With `bonus: count` it is the episodic count bonus of "Revisiting Intrinsic Reward for
    Exploration" (Henaff et al., 2023): `1 / sqrt(N(s'))`, with `N(s')` the visits to the hash
    bucket of `s'` so far in its episode; no RND is built or trained.

    NovelD's and the count's visits count observations, or with `visit_key: agent` the agent
    of a native env that says what it is (`agent_key`: a grid world's cell, direction and
    carried object), read from the env's states as each observation is made.

    With `bonus: e3b` it is E3B's elliptical episodic bonus (Henaff et al., 2022; `E3B`): the
    norm of `s'`'s learned embedding under the inverse of the episode's embeddings so far (none
    for a step that ends an episode, whose `s'` is the next episode's first observation); the
    embedding trains by inverse dynamics (a loss beside PPO's); discrete actions only. Its
    rewards are scaled as its reference scales them (`int_reward_scale: auto`): over the std of
    the bonuses themselves, clipped to 1, since an episode's first observations score
    `|phi|^2 / ridge`, orders above the rest.

    Args: as `PPO`; the config also needs `policy_size`, `hidsize`, `memsize`, `extrahid`,
    `rec_gate_init`, `gamma_int`, `int_coef`, `ext_coef`, `rnd_feature_size` and
    `rnd_predictor_proportion`, and `bonus`, `noveld_alpha`, `visit_key`, `episodic_buckets`.
    """

    LOSS_METRICS = PPO.LOSS_METRICS + ("predictor_loss",)
    METRICS = PPO.METRICS + (
        "predictor_loss",
        "intrinsic_reward",
        "value_int",
        "value_ext",
        "explained_variance_int",
    )

    def __init__(
        self,
        batch_env,
        config,
        seed: int = 0,
        ranks: Ranks = ONE_PROCESS,
    ):
        self.episodic = None
        self._num_envs, self._action_space = len(batch_env), batch_env.action_space
        if config.bonus in ("count", "e3b"):  # No RND: its predictor neither trains nor reports.
            self.LOSS_METRICS = PPO.LOSS_METRICS
            self.METRICS = tuple(m for m in self.METRICS if m != "predictor_loss")
        if config.bonus == "count":
            self.METRICS = self.METRICS + ("episodic_count",)  # The mean visits of a step.
        if config.bonus == "e3b":
            _check_discrete(batch_env.action_space)
            self.LOSS_METRICS = self.LOSS_METRICS + ("inverse_dynamics_loss",)
            self.METRICS = self.METRICS + ("inverse_dynamics_loss",)
        if config.bonus == "noveld":
            self.METRICS = self.METRICS + ("first_visits",)  # The share of steps that were.
        self._agent_keys = None
        if config.bonus in ("noveld", "count"):
            shape = rnd_view(batch_env.observation_space).shape
            if config.visit_key == "agent":
                self._agent_keys = _agent_keys(batch_env)
                shape = tuple(self._agent_keys().shape[1:])
            self.episodic = EpisodicVisits(len(batch_env), shape, config.episodic_buckets, seed)
        # RND's update averages over ranks (see `compilation.replicated_update`): no gather.
        super().__init__(batch_env, config, seed, ranks._replace(all_gather=None))
        # RND's: over the std of the intrinsic return, unclipped. E3B's reference: over the std
        # of the rewards themselves (a return of discount 0), clipped to 1.
        scale = config.int_reward_scale
        by_reward = scale == "reward" or scale == "auto" and config.bonus == "e3b"
        self.intrinsic_scaler = RewardScaler(
            len(batch_env),
            0.0 if by_reward else config.gamma_int,
            clip=1.0 if by_reward else None,
            cross_replica_sum=ranks.cross_replica_sum,
        )

    def checkpointables(self) -> dict:
        items = super().checkpointables()
        items["intrinsic"] = self.intrinsic_scaler
        return items

    @property
    def rnd(self) -> RND:
        """The exploration bonus: a fixed target network and a trained predictor."""
        return self.components["rnd"]

    def _make_components(self, observ_space, config):
        self._rnd_view = rnd_view(observ_space)
        shape = self._rnd_view.shape
        torso = choose_torso(shape, config.rnd_network, config.conv_stack)
        if config.bonus == "count":
            return {}
        if config.bonus == "e3b":
            e3b = E3B(
                shape,
                int(self._action_space.n),
                self._num_envs,
                embedding_size=config.e3b_embedding_size,
                ridge=config.e3b_ridge,
                torso=torso,
                torso_width=config.rnd_hidden,
                conv_stack=config.conv_stack,
                conv_matmul=self._xla_update,
            )
            return {"e3b": e3b}
        rnd = RND(
            shape,
            torso=torso,
            torso_width=config.rnd_hidden,
            conv_stack=config.conv_stack,
            conv_matmul=self._xla_update,
            feature_size=config.rnd_feature_size,
            cross_replica_sum=self._sum,
            proportion_of_exp_used_for_predictor_update=config.rnd_predictor_proportion,
        )
        return {"rnd": rnd}

    def _make_network(self, observ_space, action_space, config):
        """The CNN+GRU on frames (`network: auto` where RND's conv stack fits them); otherwise
        the network `config.network` names (auto: by the action space), with value heads for
        the extrinsic and intrinsic streams."""
        if (
            config.network == "auto"
            and choose_torso(observ_space.shape, "auto", config.conv_stack) == "conv"
        ):
            return cnn_gru(observ_space, action_space, config, conv_matmul=self._xla_update)
        return make_network(observ_space, action_space, config, value_streams=("", "_int"))

    def _value_streams(self, config):
        return (
            streams.extrinsic(config.discount, config.ext_coef),
            streams.ValueStream("_int", config.gamma_int, episodic=False, coef=config.int_coef),
        )

    def _stream_coefs(self):
        """The intrinsic weight falls linearly to 0 over the run with `int_coef_schedule:
        linear` (as the learning rate's schedule), so the bonus stops steering the final
        policy; the extrinsic one stays."""
        coefs = super()._stream_coefs()
        if self._config.int_coef_schedule == "linear":
            coefs["_int"] = coefs["_int"] * self._remaining()
        return coefs

    def _observation_specs(self):
        if self.episodic is None:
            return {}
        return {"episodic_key": tf.TensorSpec([], tf.int32)}

    def _observation_fields(self, observ):
        if self.episodic is None:
            return {}
        return {"episodic_key": self._visit_keys(observ)}

    def _visit_keys(self, observ):
        """The episodic keys of observations [N, ...]: of their hash, or of the env's agent
        (`visit_key: agent`; the env's current states are those of `observ`)."""
        if self._agent_keys is not None:
            return self.episodic.keys(self._agent_keys())
        return self.episodic.keys(self._rnd_view(observ))

    def _stream_rewards(self, data, next_observ):
        """The intrinsic reward (RND's error on the next frames, NovelD's bonus, or the
        episodic count bonus), scaled by its return's std."""
        if "e3b" in self.components:
            return self._e3b_rewards(data, next_observ)
        if "rnd" not in self.components:
            return self._count_rewards(data, next_observ)
        # As stored: normalized where the agent normalizes observations.
        next_frames = tf.concat([data["observ"][1:], self.normalize(next_observ)[None]], 0)
        next_frames = self._rnd_view(next_frames)
        self.rnd.update_observation_stats(next_frames)
        if self.episodic is None:
            reward_int = self.rnd.intrinsic_reward(next_frames)
        else:
            reward_int, first = self._noveld_reward(data, next_observ, next_frames)
        data["next_observ"] = next_frames  # The predictor trains on them.
        metrics = {
            "intrinsic_reward": tf.reduce_mean(reward_int),
            "value_int": tf.reduce_mean(data["value_int"]),
            "value_ext": tf.reduce_mean(data["value"]),
        }
        if self.episodic is not None:
            metrics["first_visits"] = tf.reduce_mean(tf.cast(first, tf.float32))
        return {
            "": data["reward"],
            "_int": self.intrinsic_scaler.scale_rollout(reward_int),
        }, metrics

    def _count_rewards(self, data, next_observ):
        """The episodic count bonus of each step's next observation (see the class)."""
        counts = self.episodic.visit_counts(
            self._next_keys(data, next_observ), data["terminated"] | data["truncated"]
        )
        reward_int = count_bonus(counts)
        metrics = {
            "intrinsic_reward": tf.reduce_mean(reward_int),
            "value_int": tf.reduce_mean(data["value_int"]),
            "value_ext": tf.reduce_mean(data["value"]),
            "episodic_count": tf.reduce_mean(tf.cast(counts, tf.float32)),
        }
        return {
            "": data["reward"],
            "_int": self.intrinsic_scaler.scale_rollout(reward_int),
        }, metrics

    def _e3b_rewards(self, data, next_observ):
        """E3B's bonus of each step's next observation (see the class)."""
        next_frames = tf.concat([data["observ"][1:], self.normalize(next_observ)[None]], 0)
        next_frames = self._rnd_view(next_frames)
        starts = data["terminated"] | data["truncated"]
        bonus = self.components["e3b"].bonus(next_frames, starts)
        # A step that ends an episode is followed by the next one's first observation: not the
        # step's doing, and under a fresh inverse its bonus is |phi|^2 / ridge, orders above
        # the bonuses within an episode, which the intrinsic returns' std would then scale.
        reward_int = tf.where(starts, 0.0, bonus)
        data["next_observ"] = next_frames  # The inverse dynamics train on them.
        metrics = {
            "intrinsic_reward": tf.reduce_mean(reward_int),
            "value_int": tf.reduce_mean(data["value_int"]),
            "value_ext": tf.reduce_mean(data["value"]),
        }
        return {
            "": data["reward"],
            "_int": self.intrinsic_scaler.scale_rollout(reward_int),
        }, metrics

    def _next_keys(self, data, next_observ):
        """The episodic keys of each step's next observation, [T, N]."""
        last = self._visit_keys(next_observ)
        return tf.concat([data["episodic_key"][1:], last[None]], 0)

    def _noveld_reward(self, data, next_observ, next_frames):
        """NovelD's bonus of each step of a [T, N] rollout, and its first-visit flags."""
        frames = tf.concat([self._rnd_view(data["observ"][:1]), next_frames], 0)
        error = self.rnd.intrinsic_reward(frames)  # e(s_0), e(s_1), ..., e(s_T)
        growth = tf.nn.relu(error[1:] - self._config.noveld_alpha * error[:-1])
        keys = self._next_keys(data, next_observ)
        first = self.episodic.first_visits(keys, data["terminated"] | data["truncated"])
        return growth * tf.cast(first, tf.float32), first

    def _extra_losses(self, batch):
        if "e3b" in self.components:
            valid = ~(batch["terminated"] | batch["truncated"])  # Else s' is a reset's.
            loss = self.components["e3b"].inverse_dynamics_loss(
                self._rnd_view(batch["observ"]), batch["next_observ"], batch["action"], valid
            )
            return {"inverse_dynamics": loss}
        if "rnd" not in self.components:
            return {}
        return {"predictor": self.rnd.predictor_loss(batch["next_observ"])}

    @property
    def warm_up_steps(self) -> int:
        return self._config.rnd_init_steps if "rnd" in self.components else 0

    def warm_up(self, frames) -> None:
        """RND's observation statistics start from a random agent's frames."""
        self.rnd.initialize_observation_stats(self._rnd_view(tf.convert_to_tensor(frames)))


def _check_discrete(action_space) -> None:
    """E3B's inverse dynamics predict the action: a discrete one.

    Raises:
        ValueError: For another action space, naming it and the bonuses that take it.
    """
    if not hasattr(action_space, "n") or getattr(action_space, "shape", None) != ():
        raise ValueError(
            f"bonus=e3b needs a discrete action space (its inverse dynamics predict the "
            f"action); got {action_space}: use bonus=rnd, noveld or count."
        )


def _agent_keys(batch_env):
    """The batch env's `agent_keys` (`visit_key: agent`).

    Raises:
        ValueError: For an env without them.
    """
    if not getattr(batch_env, "has_agent_key", False):
        raise ValueError(
            "visit_key: agent counts a native grid env's agent (its cell, direction and "
            "carried object); this env has none (a native MiniGrid id has). Use visit_key: "
            "observation."
        )
    return batch_env.agent_keys
