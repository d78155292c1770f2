"""RNDPPO: PPO with a CNN+GRU policy, two value heads and random network distillation."""

from __future__ import annotations

import tensorflow as tf

from agents.ppo import advantages, losses, update
from agents.ppo.algorithm import PPO
from agents.ppo.cnn_gru import CnnGruPolicy
from agents.ppo.rnd import RND, IntrinsicRewardScaler, combined_advantage


class RNDPPO(PPO):
    """PPO for pixel observations with an exploration bonus (Burda et al., 2018).

    The policy is a `CnnGruPolicy`: its rollout head acts one step at a time, its opt head scores
    `chunk_length`-step sequences for the loss. After each rollout, RND's prediction error on the
    next frames is the intrinsic reward, scaled by the running std of its discounted return.
    Two GAE streams follow: intrinsic (`gamma_int`, non-episodic: episode ends do not cut it)
    and extrinsic (`discount`, episodic, truncated episodes bootstrapped). The advantage is
    `int_coef * A_int + ext_coef * A_ext`; the loss adds both value heads' errors and the RND
    predictor's loss. With `int_coef=0` the same agent is the no-exploration control.

    Args: as `PPO`; the config also needs `policy_size`, `hidsize`, `memsize`, `extrahid`,
    `rec_gate_init`, `gamma_int`, `int_coef`, `ext_coef`, `rnd_feature_size` and
    `rnd_predictor_proportion`.
    """

    LOSS_METRICS = PPO.LOSS_METRICS + ("predictor_loss",)
    METRICS = PPO.METRICS + (
        "predictor_loss",
        "intrinsic_reward",
        "value_int",
        "value_ext",
        "explained_variance_int",
    )

    def __init__(self, batch_env, config, seed: int = 0, cross_replica_sum=None):
        super().__init__(batch_env, config, seed, cross_replica_sum)
        self.intrinsic_scaler = IntrinsicRewardScaler(
            len(batch_env), config.gamma_int, cross_replica_sum=cross_replica_sum
        )

    def checkpointables(self) -> dict:
        items = super().checkpointables()
        items.update({f"rnd_{key}": value for key, value in self.rnd.checkpointables().items()})
        items["intrinsic"] = self.intrinsic_scaler
        return items

    def _make_network(self, observ_space, action_space, config):
        # Built here so that it exists when the optimizer is built for the trainable variables.
        self.rnd = RND(
            observ_space.shape,
            feature_size=config.rnd_feature_size,
            cross_replica_sum=self._sum,
            proportion_of_exp_used_for_predictor_update=config.rnd_predictor_proportion,
        )
        return CnnGruPolicy(
            observ_space.shape,
            action_space,
            policy_size=config.policy_size,
            hidsize=config.hidsize,
            memsize=config.memsize,
            extrahid=config.extrahid,
            rec_gate_init=config.rec_gate_init,
        )

    def _extra_buffer_specs(self) -> dict:
        return {"value_int": tf.TensorSpec([], tf.float32)}

    def _trainable_variables(self) -> list:
        return list(self.network.trainable_variables) + list(self.rnd.trainable_variables)

    def _act(self, observ, seed):
        output = self.network.rollout(observ, self._new, self._state, seed=seed)
        fields = dict(log_prob=-output.neglogp, value=output.vpred_ext, value_int=output.vpred_int)
        return output.action, fields, output.state

    def _values(self, observ):
        reset = tf.zeros([self._size, 1], tf.bool)
        output = self.network(observ[:, None], reset, self._state)
        return output.vpred_ext[:, 0], output.vpred_int[:, 0]

    def _value(self, observ):
        return self._values(observ)[0]

    def _targets(self, data, next_observ):
        config = self._config
        next_frames = tf.concat([data["observ"][1:], next_observ[None]], 0)
        self.rnd.update_observation_stats(next_frames)
        reward_int = self.rnd.intrinsic_reward(next_frames)
        bootstrap_ext, bootstrap_int = self._values(next_observ)
        extrinsic = update.rollout_targets(data, bootstrap_ext, config)
        never = tf.zeros_like(data["truncated"])
        next_int = advantages.next_values(
            data["value_int"], bootstrap_int, tf.zeros_like(reward_int), never
        )
        advantage_int = advantages.lambda_advantage(
            self.intrinsic_scaler.scale(reward_int),
            data["value_int"],
            next_int,
            never,
            never,
            config.gamma_int,
            config.gae_lambda,
        )
        advantage = combined_advantage(
            advantage_int, extrinsic["advantage"], config.int_coef, config.ext_coef
        )
        if config.normalize_advantages:
            advantage = advantages.normalize_advantages(advantage)
        data.update(
            advantage=advantage,
            next_observ=next_frames,
            **{"return": extrinsic["return"], "return_int": advantage_int + data["value_int"]},
        )
        metrics = {
            "explained_variance": advantages.explained_variance(data["value"], data["return"]),
            "explained_variance_int": advantages.explained_variance(
                data["value_int"], data["return_int"]
            ),
            "intrinsic_reward": tf.reduce_mean(reward_int),
            "value_int": tf.reduce_mean(data["value_int"]),
            "value_ext": tf.reduce_mean(data["value"]),
        }
        return data, metrics

    def _loss(self, batch):
        config = self._config
        output = self.network(batch["observ"], batch["reset"], batch["state"])
        log_prob = output.policy.log_prob(batch["action"])
        policy_loss, clipfrac, kl = update.policy_objective(log_prob, batch, self.kl_beta, config)
        value_loss = losses.two_head_value_loss(
            output.vpred_int,
            batch["return_int"],
            output.vpred_ext,
            batch["return"],
            config.value_coef,
        )
        entropy = tf.reduce_mean(output.policy.entropy())
        predictor_loss = self.rnd.predictor_loss(batch["next_observ"])
        loss = policy_loss + value_loss - config.entropy_coef * entropy + predictor_loss
        metrics = dict(
            policy_loss=policy_loss,
            value_loss=value_loss,
            entropy=entropy,
            approx_kl=kl,
            clipfrac=clipfrac,
            predictor_loss=predictor_loss,
        )
        return loss, metrics
