"""Export a trained policy as a TensorFlow SavedModel that needs no `agents` import to run.

The SavedModel serves TF Serving and TFLite through its `serving_default` signature: a float32
`observation` batch in, the deterministic `action` batch out, float32 throughout (the observation
normalizer's statistics are stored as float32), convertible to TFLite builtin ops for feed-forward
policies.
"""

from __future__ import annotations

import types

import tensorflow as tf

from agents.ppo.weights import Weights

SIGNATURE_INPUT = "observation"
SIGNATURE_OUTPUT = "action"


class _ExportedPolicy(tf.Module):
    """Raw observations in, deterministic actions out, with the observation normalizer inside."""

    def __init__(self, agent) -> None:
        super().__init__(name="policy")
        # Not an attribute: SavedModel would walk and save the whole agent (its rollout buffer,
        # optimizer, ...), which took most of the export's time. The policy needs only these.
        self._network = types.SimpleNamespace(model=agent.network, normalize=agent.normalize)
        # SavedModel, like checkpoints, misses nested Keras 3 layers: held as `Weights`.
        self.weights = Weights(agent.network)
        self._shift, self._scale, self._clip = _float32_normalization(agent.observ_normalizer)
        network = agent.network
        self._observ_shape = list(agent.observation_space.shape)
        self._observ_dtype = tf.as_dtype(agent.observation_space.dtype)
        observ = tf.TensorSpec([None, *self._observ_shape], tf.float32, name=SIGNATURE_INPUT)
        state = tf.TensorSpec([None, *network.initial_state(1).shape[1:]], tf.float32)
        self.serve = tf.function(self._serve, input_signature=[observ], autograph=False)
        self.__call__ = tf.function(
            self._act_any,
            input_signature=[tf.TensorSpec(None, tf.float32, name=SIGNATURE_INPUT)],
            autograph=False,
        )
        self.step = tf.function(
            self._step,
            input_signature=[observ, tf.TensorSpec([None], tf.bool, name="reset"), state],
            autograph=False,
        )
        self.initial_state = tf.function(
            lambda batch_size: network.initial_state(batch_size),
            input_signature=[tf.TensorSpec([], tf.int32, name="batch_size")],
            autograph=False,
        )

    def _serve(self, observ: tf.Tensor) -> dict[str, tf.Tensor]:
        """The `serving_default` signature: a named action for a batch of observations."""
        return {SIGNATURE_OUTPUT: self._act(observ)}

    def _act_any(self, observ: tf.Tensor) -> tf.Tensor:
        """Actions for one observation `[*shape]` or a batch `[batch, *shape]`."""
        leading = tf.shape(observ)[: tf.rank(observ) - len(self._observ_shape)]
        action = self._act(tf.reshape(observ, [-1, *self._observ_shape]))
        return tf.reshape(action, tf.concat([leading, tf.shape(action)[1:]], 0))

    def _act(self, observ: tf.Tensor) -> tf.Tensor:
        """Actions for a batch of observations, each the first step of its episode."""
        batch = tf.shape(observ)[0]
        state = self._network.model.initial_state(batch)
        action, _ = self._step(observ, tf.ones([batch], tf.bool), state)
        return action

    def _step(self, observ: tf.Tensor, reset: tf.Tensor, state: tf.Tensor):
        """One step of a recurrent policy: returns (action, new state)."""
        output = self._network.model(self._normalize(observ)[:, None], reset[:, None], state)
        return output.policy.mode()[:, 0], output.state

    def _normalize(self, observ: tf.Tensor) -> tf.Tensor:
        if self._shift is None:  # No normalizer: pixels stay uint8 for the network to scale.
            return self._network.normalize(tf.cast(observ, self._observ_dtype))
        observ = (observ - self._shift) * self._scale
        if self._clip is not None:
            observ = tf.clip_by_value(observ, -self._clip, self._clip)
        return observ


def _float32_normalization(normalizer):
    """`(shift, scale, clip)` float32 variables equal to `normalizer.transform`, or Nones."""
    if normalizer is None:
        return None, None, None
    shift = normalizer.mean if normalizer._center else tf.zeros_like(normalizer.mean)
    scale = tf.ones_like(normalizer.var)
    if normalizer._scale:
        scale = 1.0 / tf.sqrt(normalizer.var + normalizer._var_epsilon)
    shift = tf.Variable(tf.cast(shift, tf.float32), trainable=False, name="observ_shift")
    scale = tf.Variable(tf.cast(scale, tf.float32), trainable=False, name="observ_scale")
    return shift, scale, normalizer._clip


def _frozen_serving(module: _ExportedPolicy):
    """`module.serve` with its weights as constants, as the `serving_default` signature.

    TFLite's converter leaves Keras 3 weights as resource variables that its interpreter never
    initializes (the converted model returned garbage), so the signature carries them as constants.
    """
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2,
    )

    frozen = convert_variables_to_constants_v2(module.serve.get_concrete_function())
    (spec,) = module.serve.input_signature
    module.frozen_serve = tf.function(
        lambda observation: {SIGNATURE_OUTPUT: frozen(observation)[0]},
        input_signature=[spec],
        autograph=False,
    )
    return module.frozen_serve.get_concrete_function()


def export_policy(agent, path: str) -> str:
    """Save `agent`'s deterministic policy as a SavedModel at `path`.

    The loaded object (`tf.saved_model.load(path)`) is callable on one raw float32 observation or
    a batch, and returns the mode of the policy, normalization included. Its `serving_default`
    signature maps `observation` [batch, *shape] to `action` (TF Serving, TFLite). Recurrent
    policies also offer `step(observ, reset, state) -> (action, state)` and
    `initial_state(batch_size)`.

    Returns:
        The path.
    """
    module = _ExportedPolicy(agent)
    signatures = {"serving_default": _frozen_serving(module)}
    tf.saved_model.save(module, path, signatures=signatures)
    return path
