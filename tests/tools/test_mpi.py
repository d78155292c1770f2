"""Tests for the MPI helpers: a fake communicator in process, then two real ranks under mpirun."""

import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from agents.ppo.normalize import StreamingNormalize
from agents.tools.mpi import mpi_cross_replica_sum
from agents.tools.running_mean_std import RunningMeanStd

WORKER = os.path.join(os.path.dirname(__file__), "mpi_worker_stats.py")
MPIRUN = os.path.join(os.path.dirname(sys.executable), "mpirun")


class _TwoRankComm:
    """Rank 0 of a fake two-rank world; rank 1 holds `other`, one batch per update.

    Each update makes two reductions, [count, sum] then the squared deviations from the global mean;
    `Allreduce` adds what rank 1 would contribute to each.
    """

    def __init__(self, other):
        self._other = list(other)  # [n, d] batches
        self._totals = []

    def Get_size(self):  # noqa: N802 (mpi4py's name)
        return 2

    def Allreduce(self, send, recv):  # noqa: N802 (mpi4py's name)
        batch = self._other[len(self._totals) // 2]
        if len(self._totals) % 2 == 0:
            contribution = np.concatenate([[len(batch)], batch.sum(0)])
        else:
            global_mean = self._totals[-1][1:] / self._totals[-1][0]
            contribution = np.square(batch - global_mean).sum(0)
        recv[...] = send + contribution.reshape(send.shape)
        self._totals.append(recv.ravel().copy())


class _OneRankComm:
    def Get_size(self):  # noqa: N802 (mpi4py's name)
        return 1


def _batches(seed, sizes):
    rng = np.random.default_rng(seed)
    return [rng.normal(5.0 * seed, 1.0 + seed, (n, 3)) for n in sizes]


def test_cross_replica_sum_is_none_for_a_single_process():
    assert mpi_cross_replica_sum(None) is None
    assert mpi_cross_replica_sum(_OneRankComm()) is None


def test_cross_replica_sum_keeps_shape_inside_tf_function():
    cross_replica_sum = mpi_cross_replica_sum(_TwoRankComm(_batches(1, [2])))
    total = tf.function(cross_replica_sum)(tf.constant([1.0, 0.0, 0.0, 0.0]))
    assert total.shape == (4,) and total.dtype == tf.float64
    np.testing.assert_allclose(total[0], 3.0)


def test_fake_two_ranks_give_statistics_of_concatenation():
    local, other = _batches(0, [4, 0, 6]), _batches(1, [3, 5, 0])
    rms = RunningMeanStd((3,), epsilon=0.0, comm=_TwoRankComm(other))
    normalizer = StreamingNormalize(
        (3,), cross_replica_sum=mpi_cross_replica_sum(_TwoRankComm(other))
    )
    update = tf.function(normalizer.update)
    for batch in local:
        rms.update(batch)
        update(tf.constant(batch))
    data = np.concatenate(local + other)
    for mean, var in [(rms.mean, rms.var), (normalizer.mean.numpy(), normalizer.var.numpy())]:
        np.testing.assert_allclose(mean, data.mean(0), rtol=1e-10)
        np.testing.assert_allclose(var, data.var(0), rtol=1e-10)
    assert rms.count == normalizer.count.numpy() == len(data)


def test_two_mpi_ranks_agree_with_numpy():
    if not os.path.exists(MPIRUN):
        pytest.skip(f"mpirun not found next to the interpreter at {MPIRUN}")
    result = subprocess.run(
        [MPIRUN, "-n", "2", sys.executable, WORKER],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "OK rank=0" in result.stdout and "OK rank=1" in result.stdout, output
