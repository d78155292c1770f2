"""An exported policy as an ONNX model: actions from onnxruntime and numpy, with no TensorFlow.

tf2onnx converts the SavedModel's deterministic policy (`export.export_policy`), so the model
holds what the SavedModel holds: the observation normalizer, the network, the action mask of a
dict observation, and the clipping of actions to a Box action space's bounds. Its inputs and
outputs:

- `observation`: float32 [batch, *shape], raw (a dict observation packed, see
  `agents.tools.dict_observations`; the model's metadata `observation_dict` names its keys).
- `reset` and `state` (recurrent policies only): bool [batch], true at an episode's first step,
  and float32 [batch, size], the `next_state` of the previous step (zeros at the first).
- `action`: the policy's mode, clipped; `next_state` (recurrent policies only).
- `finite`: bool [batch]. ONNX has no op that raises an error, so, as in the SavedModel's
  `tflite` signature, a row whose observation had a NaN or infinite entry is flagged false and
  acted on with those entries set to zero.
"""

from __future__ import annotations

import os
from typing import Any

import tensorflow as tf

from agents.config.errors import UsageError
from agents.ppo.export import SIGNATURE_FINITE, SIGNATURE_INPUT, SIGNATURE_OUTPUT

OPSET = 17  # onnxruntime runs it everywhere; tf2onnx 1.17's default (15) lacks nothing needed.
OBSERVATION_DICT = "observation_dict"  # The metadata key of a dict policy's keys.
NEXT_STATE = "next_state"  # Apart from the input `state`: ONNX names a value once.


def save_onnx(saved_model: Any, path: str) -> str:
    """Convert a loaded exported policy (`tf.saved_model.load`) to ONNX and write it to `path`.

    The file is written whole or not at all (a temporary file renamed into place).

    Args:
        saved_model: The SavedModel that `agents.ppo.export.export_policy` wrote, loaded.
        path: The `.onnx` file to write; its folder is made if missing.

    Returns:
        The path.

    Raises:
        UsageError: tf2onnx or onnx is not installed (the message names the extra).
    """
    onnx, tf2onnx = converter_modules()
    function, signature = _deterministic_function(saved_model)
    model, _ = tf2onnx.convert.from_function(function, input_signature=signature, opset=OPSET)
    describe = getattr(saved_model, "observation_dict", None)  # Older exports lack it.
    layout = describe().numpy().decode() if describe is not None else ""
    if layout:
        onnx.helper.set_model_props(model, {OBSERVATION_DICT: layout})
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    partial = f"{path}.partial"
    onnx.save(model, partial)
    os.replace(partial, path)
    return path


def converter_modules() -> tuple[Any, Any]:
    """The `onnx` and `tf2onnx` modules (tf2onnx imports TensorFlow).

    Raises:
        UsageError: One of them is not installed (the message names the extra).
    """
    try:
        import onnx  # The onnx extra: optional.
        import tf2onnx
    except ImportError as error:
        raise UsageError(
            f"ONNX export needs tf2onnx and onnx ({error.name} is missing): "
            'pip install -e ".[onnx]".'
        ) from None
    return onnx, tf2onnx


def _deterministic_function(saved_model: Any) -> tuple[Any, list[tf.TensorSpec]]:
    """The policy's deterministic step as a tf.function over named inputs, and its signature.

    A feed-forward policy (empty state) is its `serving_default`; a recurrent one its `step`,
    with the state an input and an output. Both flag non-finite rows as `tflite` does.
    """
    serve = saved_model.signatures["serving_default"]
    (observ,) = serve.structured_input_signature[1].values()
    observ = tf.TensorSpec(observ.shape, tf.float32, name=SIGNATURE_INPUT)
    state_size = int(saved_model.initial_state(tf.constant(1, tf.int32)).shape[1])
    if not state_size:

        def feed_forward(observation):
            observation, finite = finite_rows(observation)
            action = serve(observation=observation)[SIGNATURE_OUTPUT]
            return {SIGNATURE_OUTPUT: action, SIGNATURE_FINITE: finite}

        return tf.function(feed_forward, autograph=False), [observ]
    reset = tf.TensorSpec([None], tf.bool, name="reset")
    state = tf.TensorSpec([None, state_size], tf.float32, name="state")

    def recurrent(observation, reset, state):
        observation, finite = finite_rows(observation)
        action, next_state = saved_model.step(observation, reset, state)
        return {SIGNATURE_OUTPUT: action, NEXT_STATE: next_state, SIGNATURE_FINITE: finite}

    return tf.function(recurrent, autograph=False), [observ, reset, state]


def finite_rows(observ: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """`observ` [batch, ...] with its NaN and infinite entries set to zero, and whether each row
    was finite (bool [batch]).

    tf2onnx turns a select into arithmetic (`x * cond + y * (1 - cond)`, where NaN * 0 is NaN)
    unless its condition is a NaN or infinity test, so the entries are zeroed by `IsNaN` and
    `IsInf` conditions (the `tflite` signature's `abs(x) <= max` would let NaN through here).
    """
    zeros = tf.zeros_like(observ)
    nan = tf.math.is_nan(observ)
    observ = tf.where(nan, zeros, observ)
    infinite = tf.math.is_inf(observ)
    observ = tf.where(infinite, zeros, observ)
    entry_bad = tf.logical_or(nan, infinite)
    finite = tf.logical_not(tf.reduce_any(entry_bad, axis=list(range(1, observ.shape.rank))))
    return observ, finite
