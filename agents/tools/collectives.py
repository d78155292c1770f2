"""TensorFlow across MPI ranks: each rank's share of the host's threads, and the sums and gathers
of tensors over ranks that run eagerly and inside `tf.function` alike, and `Ranks`, the ranks
as an agent sees them (one object instead of three arguments).

The `World` they work on (its communicator, ranks and launch) is `agents.tools.mpi`'s, which
loads no TensorFlow: environment child processes and the launcher's checks stay light.
"""

from __future__ import annotations

import os
import sys
import weakref
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np
import tensorflow as tf

from agents.tools.mpi import THREAD_VARIABLES, World, rank_threads

CrossReplicaSum = Callable[[tf.Tensor], tf.Tensor]


def share_cores(world: World, environ: Mapping[str, str] = os.environ) -> int | None:
    """Limit TensorFlow to this rank's threads (`rank_threads`); returns the thread count.

    Each of K ranks on a host would otherwise start a thread pool as large as the host, K times
    oversubscribing its cores; a scheduler that gives each task its CPUs says how many in
    `SLURM_CPUS_PER_TASK`. Call before TensorFlow runs its first op; a process that already ran
    one keeps its threads. Does nothing (returns None) in a world of one without a thread
    variable set.
    """
    if world.size == 1 and not any(environ.get(name) for name in THREAD_VARIABLES):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = rank_threads(cores or 1, world.local_size, environ)
    try:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
    except RuntimeError:  # TensorFlow is initialized already.
        sys.stderr.write(
            f"warning: TensorFlow ran before this rank could limit it to {threads} threads, so "
            f"{world.local_size} ranks on this host share its cores with more threads than "
            "cores; import agents before running TensorFlow ops.\n"
        )
    return threads


# id(communicator) -> (weak reference to it, the counter that orders its in-graph reductions). A
# module-level cache, because callers build their reduction functions independently from the
# communicator alone; mpi4py communicators are not hashable, hence the ids.
_ORDER_VARIABLES: dict[int, tuple[weakref.ref, Any]] = {}


def _order_variable(comm: Any):
    entry = _ORDER_VARIABLES.get(id(comm))
    if entry is None or entry[0]() is not comm:
        with tf.init_scope():  # Eagerly, also when first called while tracing a tf.function.
            variable = tf.Variable(0, dtype=tf.int64, trainable=False, name="collective_order")
        entry = _ORDER_VARIABLES[id(comm)] = (weakref.ref(comm), variable)
    return entry[1]


def mpi_cross_replica_sum(comm: Any | None) -> CrossReplicaSum | None:
    """Builds a function that sums a float64 tensor over all ranks of an MPI communicator.

    The returned function wraps `comm.Allreduce` in `tf.numpy_function`, so it runs eagerly and
    inside `tf.function` alike and keeps the static shape of its input. Every rank must call the
    same reductions in the same order, or all of them hang. Inside a `tf.function`, automatic
    control dependencies order stateful ops that share no resource only at the top level: a
    reduction with a constant input (e.g. the rank count) could run before a loop whose body holds
    other reductions, in an order that differs between ranks. So every reduction reads and then
    writes `order`, a counter variable, and the variable's use keeps all reductions in program
    order, nested ones included. All functions built for one communicator share its `order`, so
    that reductions made through different ones (e.g. by two normalizers) stay ordered too.

    mpi4py is never imported here: a communicator of size > 1 means its owner has already
    initialized MPI, and `Allreduce` sums by default, so importing this module leaves MPI alone.

    Args:
      comm: An `mpi4py.MPI.Comm` (or any object with `Get_size()` and `Allreduce(send, recv)`), or
        None.

    Returns:
      A function `tensor -> tensor` returning the element-wise float64 sum over ranks, or None when
      `comm` is None or has a single rank (callers treat None as "single process"). Its `order`
      attribute counts the reductions made.
    """
    if comm is None or comm.Get_size() == 1:
        return None
    order = _order_variable(comm)

    def allreduce(array: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        send = np.asarray(array, dtype=np.float64, order="C")
        recv = np.empty_like(send)
        comm.Allreduce(send, recv)
        return recv, count + 1

    def cross_replica_sum(tensor: tf.Tensor) -> tf.Tensor:
        tensor = tf.cast(tensor, tf.float64)
        total, count = tf.numpy_function(
            allreduce, [tensor, order.read_value()], [tf.float64, tf.int64], stateful=True
        )
        order.assign(count)  # The next reduction reads `order` after this write.
        total.set_shape(tensor.shape)
        return total

    cross_replica_sum.order = order
    return cross_replica_sum


def mpi_all_gather(comm: Any | None):
    """Builds a function that gathers tensors of every rank, as `mpi_cross_replica_sum` sums.

    The returned function takes a list of tensors (any dtypes whose values float64 holds
    exactly: floats of 32 bits or less, ints of 32 bits or less, bools, uint8) and returns, for
    each, the tensors of all ranks stacked on a new first axis, [ranks, *shape], in its dtype.
    One `Allgather` moves them all. It shares the communicator's `order` variable with the sums,
    so gathers and sums stay in program order on every rank.

    Returns:
        The function, or None when `comm` is None or has a single rank. Its `rank` attribute is
        this rank's index.
    """
    if comm is None or comm.Get_size() == 1:
        return None
    order, ranks = _order_variable(comm), comm.Get_size()

    def allgather(flat: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        send = np.ascontiguousarray(flat, dtype=np.float64)
        recv = np.empty((ranks, send.size), np.float64)
        comm.Allgather(send, recv)
        return recv, count + 1

    def all_gather(tensors: list) -> list:
        flat = tf.concat([tf.reshape(tf.cast(t, tf.float64), [-1]) for t in tensors], 0)
        gathered, count = tf.numpy_function(
            allgather, [flat, order.read_value()], [tf.float64, tf.int64], stateful=True
        )
        order.assign(count)
        gathered.set_shape([ranks, flat.shape[0]])
        sizes = [t.shape.num_elements() for t in tensors]
        parts = tf.split(gathered, sizes, axis=1)
        return [
            tf.cast(tf.reshape(part, [ranks, *t.shape]), t.dtype) for part, t in zip(parts, tensors)
        ]

    all_gather.rank = comm.Get_rank()
    return all_gather


class Ranks(NamedTuple):
    """How many ranks train together, and the collectives that join them.

    The default is a single process: no collectives.

    Attributes:
        size: Number of ranks (the learning-rate schedule counts all ranks' steps).
        cross_replica_sum: Sums a float64 tensor over the ranks (`mpi_cross_replica_sum`);
            gradients and normalizer statistics are then averaged over them. None: one rank.
        all_gather: Gathers tensors of all ranks (`mpi_all_gather`), for agents whose ranks
            share their rollouts. None: one rank.
    """

    size: int = 1
    cross_replica_sum: CrossReplicaSum | None = None
    all_gather: Callable | None = None


def ranks_of(world: World) -> Ranks:
    """The `Ranks` of an MPI world (no collectives in a world of one)."""
    return Ranks(world.size, mpi_cross_replica_sum(world.comm), mpi_all_gather(world.comm))


ONE_PROCESS = Ranks()  # A single process: no collectives.
