"""Export a trained policy as a TensorFlow SavedModel that needs no `agents` import to run.

The SavedModel serves TF Serving through its `serving_default` signature: a float32 `observation`
batch in, the deterministic `action` batch out, float32 throughout (the observation normalizer's
statistics are stored as float32). Actions of a bounded (Box) action space are clipped to its
bounds inside the model, as the environments clipped them in training; `unclipped` gives the
policy's mode as it is. A non-finite observation is refused: the functions and `serving_default`
fail with an error naming `observation` (TensorFlow's `CheckNumerics`), so no NaN action reaches
a controller.

TFLite's builtin ops cannot raise an error, so the `tflite` signature (convert with
`signature_keys=["tflite"]`) returns `finite` beside `action`: false for a row whose observation
was not finite, whose action is then that of the observation with those entries set to zero.

Beside the deterministic functions, `sample_step` draws actions from the policy's distribution
and `value` gives the value estimate; both are functions of their inputs, the seed included (no
generator inside), so the same seed and inputs give the same actions in any order of calls.
"""

from __future__ import annotations

import types

import numpy as np
import tensorflow as tf
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

from agents.ppo.networks.contract import Weights, act
from agents.tools.dict_observations import PackedDict, describe

SIGNATURE_INPUT = "observation"
SIGNATURE_OUTPUT = "action"
SIGNATURE_FINITE = "finite"
TFLITE_SIGNATURE = "tflite"
EXPORT_MODULE = "_export_module"  # The agent's attribute that keeps its export module.
_FLOAT32_MAX = float(np.finfo(np.float32).max)


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
        self._normalized = getattr(agent.observ_normalizer, "normalized", None)
        self._low, self._high = _action_bounds(agent.action_space)
        network = agent.network
        self._observ_shape = list(agent.observation_space.shape)
        self._observ_dtype = tf.as_dtype(agent.observation_space.dtype)
        observ = tf.TensorSpec([None, *self._observ_shape], tf.float32, name=SIGNATURE_INPUT)
        state = tf.TensorSpec([None, *network.initial_state(1).shape[1:]], tf.float32)
        self.serve = tf.function(self._serve, input_signature=[observ], autograph=False)
        self.serve_tflite = tf.function(
            self._serve_tflite, input_signature=[observ], autograph=False
        )
        self.unclipped = tf.function(
            lambda observation: self._mode(self._checked(observation)),
            input_signature=[observ],
            autograph=False,
        )
        self.__call__ = tf.function(
            self._act_any,
            input_signature=[tf.TensorSpec(None, tf.float32, name=SIGNATURE_INPUT)],
            autograph=False,
        )
        reset = tf.TensorSpec([None], tf.bool, name="reset")
        self.step = tf.function(self._step, input_signature=[observ, reset, state], autograph=False)
        # Stateless sampling: a seed is an input like the observation, so a deployment can
        # replay an episode, and the module holds no generator whose position a SavedModel
        # would have to save.
        self.sample_step = tf.function(
            self._sample_step,
            input_signature=[observ, reset, state, tf.TensorSpec([2], tf.int32, name="seed")],
            autograph=False,
        )
        self.value = tf.function(
            self._value, input_signature=[observ, reset, state], autograph=False
        )
        # A packed dict observation's keys, so that `agents.Policy` packs dicts as training did.
        layout = describe(agent.observation_space.dict_space) if _packed(agent) else ""
        self.observation_dict = tf.function(
            lambda: tf.constant(layout), input_signature=[], autograph=False
        )
        self.initial_state = tf.function(
            lambda batch_size: network.initial_state(batch_size),
            input_signature=[tf.TensorSpec([], tf.int32, name="batch_size")],
            autograph=False,
        )

    def copy_statistics(self, normalizer) -> None:
        """Take `normalizer`'s statistics of now (a later export of the same agent)."""
        if self._shift is not None:
            shift, scale = _float32_statistics(normalizer)
            self._shift.assign(shift)
            self._scale.assign(scale)

    def _serve(self, observ: tf.Tensor) -> dict[str, tf.Tensor]:
        """The `serving_default` signature: a named action for a batch of observations."""
        return {SIGNATURE_OUTPUT: self._act(self._checked(observ))}

    def _serve_tflite(self, observ: tf.Tensor) -> dict[str, tf.Tensor]:
        """The `tflite` signature: builtin ops only, so non-finite rows are flagged, not raised."""
        entry_ok = tf.abs(observ) <= _FLOAT32_MAX  # False for NaN and +-inf.
        rank = len(self._observ_shape)
        finite = tf.reduce_min(tf.cast(entry_ok, tf.float32), axis=list(range(1, rank + 1)))
        action = self._act(tf.where(entry_ok, observ, tf.zeros_like(observ)))
        return {SIGNATURE_OUTPUT: action, SIGNATURE_FINITE: finite > 0.5}

    def _act_any(self, observ: tf.Tensor) -> tf.Tensor:
        """Actions for one observation `[*shape]` or a batch `[batch, *shape]`."""
        leading = tf.shape(observ)[: tf.rank(observ) - len(self._observ_shape)]
        action = self._act(tf.reshape(self._checked(observ), [-1, *self._observ_shape]))
        return tf.reshape(action, tf.concat([leading, tf.shape(action)[1:]], 0))

    def _act(self, observ: tf.Tensor) -> tf.Tensor:
        """Clipped actions for a batch of observations, each the first step of its episode."""
        return self._clip_action(self._mode(observ))

    def _mode(self, observ: tf.Tensor) -> tf.Tensor:
        """The policy's mode for a batch of observations, each the first step of its episode."""
        batch = tf.shape(observ)[0]
        state = self._network.model.initial_state(batch)
        action, _ = self._mode_step(observ, tf.ones([batch], tf.bool), state)
        return action

    def _step(self, observ: tf.Tensor, reset: tf.Tensor, state: tf.Tensor):
        """One step of a recurrent policy: returns (clipped action, new state)."""
        action, state = self._mode_step(self._checked(observ), reset, state)
        return self._clip_action(action), state

    def _mode_step(self, observ: tf.Tensor, reset: tf.Tensor, state: tf.Tensor):
        output = self._network_step(observ, reset, state)
        return output.policy.mode()[:, 0], output.state

    def _network_step(self, observ: tf.Tensor, reset: tf.Tensor, state: tf.Tensor):
        """The network's output for raw observations: normalized here, as in every function."""
        return act(self._network.model, self._normalize(observ), reset, state)

    def _sample_step(self, observ: tf.Tensor, reset: tf.Tensor, state: tf.Tensor, seed: tf.Tensor):
        """One step with a sampled action: returns (clipped action, new state).

        gSDE policies draw fresh noise from the Gaussian of each step given its features (the
        exploration matrix that training holds for some steps is not part of the policy).
        """
        output = self._network_step(self._checked(observ), reset, state)
        action = output.policy.sample(seed=seed)[:, 0]
        return self._clip_action(action), output.state

    def _value(self, observ: tf.Tensor, reset: tf.Tensor, state: tf.Tensor) -> tf.Tensor:
        """The extrinsic value [B] of a step that `step` would take from `state`.

        Only the environment's reward stream: further streams (RND's intrinsic one) serve
        training's exploration and mean nothing to a deployment.
        """
        return self._network_step(self._checked(observ), reset, state).value

    @staticmethod
    def _checked(observ: tf.Tensor) -> tf.Tensor:
        """The observation, or an InvalidArgumentError naming it if an entry is NaN or inf."""
        return tf.debugging.check_numerics(observ, "non-finite observation")

    def _clip_action(self, action: tf.Tensor) -> tf.Tensor:
        if self._low is None:
            return action
        return tf.clip_by_value(action, self._low, self._high)

    def _normalize(self, observ: tf.Tensor) -> tf.Tensor:
        if self._shift is None:  # No normalizer: pixels stay uint8 for the network to scale.
            return self._network.normalize(tf.cast(observ, self._observ_dtype))
        raw = observ
        observ = (observ - self._shift) * self._scale
        if self._clip is not None:
            observ = tf.clip_by_value(observ, -self._clip, self._clip)
        if self._normalized is not None:  # A packed dict's one-hots and mask pass as they are.
            observ = tf.where(self._normalized, observ, raw)
        return observ


def _packed(agent) -> bool:
    return isinstance(agent.observation_space, PackedDict)


def _module_of(agent) -> _ExportedPolicy:
    """The agent's export module, built at its first export and kept with it: a later export
    of the agent (its best policy at each new best, a kept agent's next run) traces none of its
    functions again. The weights are the network's own variables; the normalizer's statistics
    are copied at each export."""
    module = getattr(agent, EXPORT_MODULE, None)
    if module is None:
        module = _ExportedPolicy(agent)
        object.__setattr__(agent, EXPORT_MODULE, module)  # Not tracked as the agent's part.
    else:
        module.copy_statistics(agent.observ_normalizer)
    return module


def _float32_normalization(normalizer):
    """`(shift, scale, clip)` float32 variables equal to `normalizer.transform`, or Nones."""
    if normalizer is None:
        return None, None, None
    shift, scale = _float32_statistics(normalizer)
    shift = tf.Variable(shift, trainable=False, name="observ_shift")
    scale = tf.Variable(scale, trainable=False, name="observ_scale")
    return shift, scale, normalizer._clip


def _float32_statistics(normalizer) -> tuple[tf.Tensor, tf.Tensor]:
    """`(shift, scale)` as float32 tensors: `transform(x)` is `(x - shift) * scale`, clipped."""
    shift = normalizer.mean if normalizer._center else tf.zeros_like(normalizer.mean)
    scale = tf.ones_like(normalizer.var)
    if normalizer._scale:
        scale = 1.0 / tf.sqrt(normalizer.var + normalizer._var_epsilon)
    return tf.cast(shift, tf.float32), tf.cast(scale, tf.float32)


def _action_bounds(space) -> tuple[np.ndarray | None, np.ndarray | None]:
    """float32 `(low, high)` of a Box action space, or Nones for other spaces."""
    if not hasattr(space, "low") or not np.issubdtype(space.dtype, np.floating):
        return None, None
    return np.asarray(space.low, np.float32), np.asarray(space.high, np.float32)


def _frozen(function):
    """`function` (a signature's tf.function) with its weights as constants, as a signature.

    TFLite's converter leaves Keras 3 weights as resource variables that its interpreter never
    initializes (the converted model returned garbage), so signatures carry them as constants.
    """
    concrete = function.get_concrete_function()
    frozen = convert_variables_to_constants_v2(concrete)
    keys = sorted(concrete.structured_outputs)  # The frozen function returns a flat list.
    (spec,) = function.input_signature
    wrapper = tf.function(
        lambda observation: dict(zip(keys, frozen(observation))),
        input_signature=[spec],
        autograph=False,
    )
    return wrapper, wrapper.get_concrete_function()


def export_policy(agent, path: str) -> str:
    """Save `agent`'s deterministic policy as a SavedModel at `path`.

    The loaded object (`tf.saved_model.load(path)`) is callable on one raw float32 observation or
    a batch, and returns the mode of the policy, normalization included, clipped to a Box action
    space's bounds (`unclipped(observation)` gives it unclipped). Its `serving_default` signature
    maps `observation` [batch, *shape] to `action` (TF Serving); `tflite` adds `finite` (TFLite).
    Every policy offers `step(observ, reset, state) -> (action, state)` and
    `initial_state(batch_size)` (an empty state for feed-forward policies). Non-finite
    observations are refused (see the module docstring).

    `sample_step(observ, reset, state, seed) -> (action, state)` is `step` with the action
    sampled from the policy's distribution (clipped as the mode is); `seed` is an int32 [2]
    tensor, and the same seed and inputs give the same actions. `value(observ, reset, state)`
    is the value estimate [batch] of the environment's reward stream for the step `step` would
    take, on the same normalized observation; with `normalize_reward` it is in the scaled
    reward's units. Neither changes `serving_default` or `tflite`, which stay deterministic.

    Returns:
        The path.
    """
    module = _module_of(agent)
    module.frozen_serve, serving = _frozen(module.serve)
    module.frozen_tflite, tflite = _frozen(module.serve_tflite)
    signatures = {"serving_default": serving, TFLITE_SIGNATURE: tflite}
    tf.saved_model.save(module, path, signatures=signatures)
    return path
