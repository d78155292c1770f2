"""TensorFlow access to MPI collectives: a cross-replica sum for in-graph statistics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

CrossReplicaSum = Callable[[tf.Tensor], tf.Tensor]


def mpi_cross_replica_sum(comm: Any | None) -> CrossReplicaSum | None:
    """Builds a function that sums a float64 tensor over all ranks of an MPI communicator.

    The returned function wraps `comm.Allreduce` in `tf.numpy_function`, so it runs eagerly and
    inside `tf.function` alike and keeps the static shape of its input. The op is stateful: inside a
    `tf.function`, automatic control dependencies keep the collectives in program order, which every
    rank must share (each rank calls the same reductions in the same order, or all of them hang).

    mpi4py is never imported here: a communicator of size > 1 means its owner has already
    initialized MPI, and `Allreduce` sums by default, so importing this module leaves MPI alone.

    Args:
      comm: An `mpi4py.MPI.Comm` (or any object with `Get_size()` and `Allreduce(send, recv)`), or
        None.

    Returns:
      A function `tensor -> tensor` returning the element-wise float64 sum over ranks, or None when
      `comm` is None or has a single rank (callers treat None as "single process").
    """
    if comm is None or comm.Get_size() == 1:
        return None

    def allreduce(array: np.ndarray) -> np.ndarray:
        send = np.asarray(array, dtype=np.float64, order="C")
        recv = np.empty_like(send)
        comm.Allreduce(send, recv)
        return recv

    def cross_replica_sum(tensor: tf.Tensor) -> tf.Tensor:
        tensor = tf.cast(tensor, tf.float64)
        total = tf.numpy_function(allreduce, [tensor], tf.float64, stateful=True)
        total.set_shape(tensor.shape)
        return total

    return cross_replica_sum
