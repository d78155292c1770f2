"""InGraphBatchEnv: a batch of environments as TensorFlow operations and variables."""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterator

import gymnasium as gym
import numpy as np
import tensorflow as tf

from agents.tools.transitions import Transitions


class InGraphBatchEnv(Transitions):
    """Step and reset a `BatchEnv` from inside `tf.function` through `tf.numpy_function`.

    The latest transition lives in the variables of `Transitions`: `observ`, `action`, `reward`,
    `terminated`, `truncated` and `done` (either of the two), plus the `score` (return so far) and
    `length` of the running episodes. `done` starts True so that the first simulation step resets
    every environment.

    Discrete and MultiDiscrete actions are int32, continuous actions float32. Float observations are
    float32; uint8 observations (pixels) keep their dtype.

    A Python exception inside an environment surfaces from TensorFlow as a `tf.errors.OpError`;
    run the graph under `with batch_env.python_errors():` to get the original exception instead.

    Args:
        batch_env: A `BatchEnv` (or anything with its interface).
    """

    def __init__(self, batch_env) -> None:
        observ_space = batch_env.observation_space
        if not isinstance(observ_space, gym.spaces.Box):
            raise ValueError(
                f"Unsupported observation space {observ_space}: only Box observations are accepted."
            )
        self._observ_dtype = tf.uint8 if observ_space.dtype == np.uint8 else tf.float32
        self._action_dtype, action_shape = _action_signature(batch_env.action_space)
        super().__init__(
            "in_graph_batch_env",
            len(batch_env),
            (observ_space.shape, self._observ_dtype),
            (action_shape, self._action_dtype),
        )
        self._batch_env = batch_env
        self._size = len(batch_env)
        self._error: BaseException | None = None
        self.observation_space = observ_space
        self.action_space = batch_env.action_space

    def __len__(self) -> int:
        return self._size

    @property
    def batch_env(self):
        """The `BatchEnv` this steps (None while it holds none; see `hold`)."""
        return self._batch_env

    def hold(self, batch_env) -> None:
        """Step `batch_env` from now on, or nothing (None).

        The ops traced from this object call it back by reference, so a graph traced once
        serves another batch of environments of the same spaces and count: a later run's, where
        a process keeps its compiled calls. Holding None lets an idle object's environments go.
        """
        if batch_env is not None and len(batch_env) != self._size:
            raise ValueError(f"{len(batch_env)} environments given where {self._size} are stepped.")
        self._batch_env, self._error = batch_env, None

    def simulate(self, action: tf.Tensor) -> None:
        """Step all environments and store the transition in the variables."""
        # Reading `done` orders the environment call after earlier writes (e.g. a reset): automatic
        # control dependencies order stateful ops per resource, and the Python call touches none.
        observ, reward, terminated, truncated = tf.numpy_function(
            _weak_method(self._step),
            [action, self.done.read_value()],
            [self._observ_dtype, tf.float32, tf.bool, tf.bool],
            stateful=True,
        )
        observ.set_shape(self.observ.shape)
        for tensor in (reward, terminated, truncated):
            tensor.set_shape([len(self)])
        self._record(action, observ, reward, terminated, truncated)

    def reset(self, indices: tf.Tensor | None = None) -> tf.Tensor:
        """Reset the environments at `indices` (all when None); returns their observations."""
        if indices is None:
            indices = tf.range(len(self))
        indices = tf.convert_to_tensor(indices, tf.int32)
        observ = tf.numpy_function(
            _weak_method(self._reset),
            [indices, self.done.read_value()],
            self._observ_dtype,
            stateful=True,
        )
        observ.set_shape(tf.TensorShape([None]).concatenate(self.observ.shape[1:]))
        self._restart(indices, observ)
        return observ

    def close(self) -> None:
        """Close the environments."""
        if self._batch_env is not None:
            self._batch_env.close()

    @contextlib.contextmanager
    def python_errors(self) -> Iterator[None]:
        """Re-raise the environment's own exception when a graph op that stepped it fails."""
        self._error = None
        try:
            yield
        except tf.errors.OpError:
            if self._error is None:
                raise
            error, self._error = self._error, None
            raise error from None

    def _step(self, action: np.ndarray, done: np.ndarray):
        try:
            if done.any():
                raise RuntimeError(
                    f"Environment(s) {np.flatnonzero(done).tolist()} finished their episode and "
                    "must be reset before stepping."
                )
            # BatchEnv checked the results (shapes, dtypes, finiteness; see tools.env_checks).
            observ, reward, terminated, truncated, _ = self._batch_env.step(action)
        except BaseException as error:
            self._error = error
            raise
        return (
            observ.astype(self._observ_dtype.as_numpy_dtype, copy=False),
            reward,
            terminated,
            truncated,
        )

    def _reset(self, indices: np.ndarray, done: np.ndarray) -> np.ndarray:
        del done  # Only read to order this call after earlier steps.
        try:
            observ = self._batch_env.reset(indices)
        except BaseException as error:
            self._error = error
            raise
        return observ.astype(self._observ_dtype.as_numpy_dtype, copy=False)


def _weak_method(method: Callable) -> Callable:
    """`method` called through a weak reference to its object.

    `tf.numpy_function` keeps the Python function it calls alive as long as the outermost graph,
    which for a `tf.function` traced eagerly is the process-wide default graph: a bound method
    would keep this env, and the environments it holds, alive after the run that built it.
    """
    reference, name = weakref.WeakMethod(method), method.__name__

    def call(*args):
        bound = reference()
        if bound is None:
            raise RuntimeError(f"{name}: its InGraphBatchEnv no longer exists.")
        return bound(*args)

    call.__name__ = name
    return call


def _action_signature(space: gym.Space) -> tuple[tf.DType, tuple[int, ...]]:
    if isinstance(space, (gym.spaces.Discrete, gym.spaces.MultiDiscrete)):
        return tf.int32, space.shape
    if isinstance(space, gym.spaces.Box):
        return tf.float32, space.shape
    raise ValueError(
        f"Unsupported action space {space}: accepted are Box, Discrete and MultiDiscrete."
    )
