"""Tests for the MPI helpers: a fake communicator in process, then two real ranks under mpirun."""

import os
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from agents.tools import collectives, mpi
from agents.tools.collectives import mpi_all_gather, mpi_cross_replica_sum
from agents.tools.mpi import World, init_world, launched_by_mpi, unconnected_tasks
from agents.tools.normalize import RunningMeanStd, StreamingNormalize

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


class _RankOneComm:
    """Rank 1 of a fake two-rank world whose rank 0 contributes `root` to every collective."""

    def __init__(self, root):
        self._root = root

    def bcast(self, value, root=0):
        return self._root

    def allgather(self, value):
        return [self._root, value]

    def allreduce(self, value):
        return self._root + value


class _RecordingComm:
    """Records the size of each reduction; each takes a while, as a slow peer would."""

    def __init__(self):
        self.sizes = []

    def Get_size(self):  # noqa: N802 (mpi4py's name)
        return 2

    def Allreduce(self, send, recv):  # noqa: N802 (mpi4py's name)
        time.sleep(0.002)
        self.sizes.append(send.size)
        recv[...] = 2 * send


class _GatherComm:
    """Rank 1 of a fake two-rank world whose rank 0 sends `root` (a float64 vector)."""

    def __init__(self, root):
        self.root, self.calls = root, 0

    def Get_size(self):  # noqa: N802 (mpi4py's name)
        return 2

    def Get_rank(self):  # noqa: N802 (mpi4py's name)
        return 1

    def Allgather(self, send, recv):  # noqa: N802 (mpi4py's name)
        self.calls += 1
        recv[0], recv[1] = self.root, send


def _batches(seed, sizes):
    rng = np.random.default_rng(seed)
    return [rng.normal(5.0 * seed, 1.0 + seed, (n, 3)) for n in sizes]


def test_cross_replica_sum_is_none_for_a_single_process():
    assert mpi_cross_replica_sum(None) is None
    assert mpi_cross_replica_sum(_OneRankComm()) is None


def test_launched_by_mpi_reads_the_launchers_variables():
    assert not launched_by_mpi({"PATH": "/bin"})
    for name in ("PMI_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK"):
        assert launched_by_mpi({name: "2"}), name
    assert init_world({}) == World()


def test_an_srun_step_without_a_launcher_is_unconnected_tasks():
    assert unconnected_tasks({"SLURM_STEP_NUM_TASKS": "4"}) == 4
    assert unconnected_tasks({"SLURM_STEP_NUM_TASKS": "4", "PMI_RANK": "0"}) == 0  # --mpi=pmi2.
    assert unconnected_tasks({"SLURM_STEP_NUM_TASKS": "1"}) == 0
    # A batch script's own environment is no step: a plain run in it trains alone, as asked.
    assert unconnected_tasks({"SLURM_NTASKS": "4", "SLURM_PROCID": "0"}) == 0
    assert unconnected_tasks({"SLURM_STEP_NUM_TASKS": "x"}) == 0


def test_without_a_launcher_mpi_is_not_imported():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI", "OMPI", "PMIX"))}
    code = "import sys; from agents.scripts import train; w = train.mpi.init_world(); "
    code += "print(w.size, 'mpi4py' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.stdout.split() == ["1", "False"], result.stderr


def test_rank_threads_follow_the_scheduler_then_the_user_then_a_share_of_the_cores():
    assert mpi.rank_threads(16, 4, {}) == 4
    assert mpi.rank_threads(2, 4, {}) == 1  # More ranks than cores: one thread each.
    assert mpi.rank_threads(16, 4, {"OMP_NUM_THREADS": "2"}) == 2
    slurm = {"SLURM_CPUS_PER_TASK": "3", "OMP_NUM_THREADS": "2"}
    assert mpi.rank_threads(16, 4, slurm) == 3
    assert mpi.rank_threads(16, 4, {"OMP_NUM_THREADS": "0", "SLURM_CPUS_PER_TASK": "x"}) == 4
    assert collectives.share_cores(World(), {}) is None  # One process, no variable: TF's own pools.


def test_a_world_of_one_keeps_everything_local():
    world = World()
    assert world.is_root and world.bcast("x") == "x" and world.allgather(3) == [3]
    assert world.concat(np.ones([2, 3])).shape == (2, 3)
    assert world.any(True) and not world.any(False)
    world.agree(None)
    with pytest.raises(KeyError, match="mine"):
        world.agree(KeyError("mine"))


def test_collectives_of_a_rank_other_than_zero():
    world = World(_RankOneComm(np.zeros([2, 1])), rank=1, size=2)
    assert world.concat(np.ones([2, 2])).tolist() == [[0, 1, 1]] * 2
    assert World(_RankOneComm(0), 1, 2).any(True)
    assert not World(_RankOneComm(0), 1, 2).any(False)
    variables = [tf.Variable([1.0, 2.0]), tf.Variable(3, dtype=tf.int64)]
    World(_RankOneComm([np.array([5.0, 6.0]), np.int64(7)]), 1, 2).broadcast_variables(variables)
    assert variables[0].numpy().tolist() == [5.0, 6.0] and variables[1].numpy() == 7
    with pytest.raises(ValueError, match="different models"):
        World(_RankOneComm([np.zeros(2)]), 1, 2).broadcast_variables(variables)


def test_agree_raises_rank_zeros_error_on_the_other_ranks():
    world = World(_RankOneComm((ValueError, "bad value")), rank=1, size=2)
    with pytest.raises(ValueError, match="^rank 0: bad value$"):
        world.agree(None)
    World(_RankOneComm(None), rank=1, size=2).agree(None)


def test_reductions_keep_program_order_around_a_loop():
    # Automatic control dependencies alone let the reduction of a constant (no inputs from the
    # loop) run before the loop, whose body holds reductions too: ranks would disagree on order.
    # Two functions for one communicator (e.g. of two normalizers) share the ordering.
    comm = _RecordingComm()
    in_loop, after_loop = mpi_cross_replica_sum(comm), mpi_cross_replica_sum(comm)
    assert in_loop.order is after_loop.order
    weight = tf.Variable(tf.zeros([3]))

    @tf.function
    def update():
        for _ in tf.range(3):
            weight.assign_add(tf.cast(in_loop(weight + 1.0), tf.float32))
        return after_loop(tf.ones([1]))

    for _ in range(3):
        comm.sizes.clear()
        update()
        assert comm.sizes == [3, 3, 3, 1]
    assert in_loop.order.numpy() == 12


def test_all_gather_stacks_every_ranks_tensors_in_their_dtypes_with_one_collective():
    mine = [
        tf.constant([[1.5, -2.0]], tf.float32),
        tf.constant([True, False]),
        tf.constant([[7, 255]], tf.uint8),
        tf.constant([-3], tf.int32),
    ]
    theirs = [np.array([[0.25, 8.0]]), np.array([False, True]), np.array([[0, 9]]), np.array([4])]
    comm = _GatherComm(np.concatenate([np.ravel(a).astype(np.float64) for a in theirs]))
    all_gather = mpi_all_gather(comm)
    assert all_gather.rank == 1 and mpi_all_gather(_OneRankComm()) is None
    gathered = tf.function(all_gather)(mine)
    assert comm.calls == 1
    for result, own, other in zip(gathered, mine, theirs):
        assert result.dtype == own.dtype and result.shape == (2, *own.shape)
        np.testing.assert_array_equal(result[0], other.astype(own.dtype.as_numpy_dtype))
        np.testing.assert_array_equal(result[1], own)
    # The gather counts in the order its communicator's sums keep (see the test below).
    assert mpi_cross_replica_sum(comm).order.numpy() == 1


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


@pytest.mark.slow
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


def test_accumulate_follows_own_data_until_sync_shares_every_ranks():
    local = _batches(0, [4, 6, 5])
    other = _batches(1, [9, 7])  # Rank 1's samples of each period between syncs.
    comm = _TwoRankComm(other)
    normalizer = StreamingNormalize((3,), cross_replica_sum=mpi_cross_replica_sum(comm))
    accumulate, sync = tf.function(normalizer.accumulate), tf.function(normalizer.sync)
    accumulate(tf.constant(local[0]))
    accumulate(tf.constant(local[1]))
    assert comm._totals == []  # No collective while accumulating.
    own = np.concatenate(local[:2])
    np.testing.assert_allclose(normalizer.mean.numpy(), own.mean(0), rtol=1e-10)
    np.testing.assert_allclose(normalizer.var.numpy(), own.var(0), rtol=1e-10)
    sync()
    first = np.concatenate([own, other[0]])
    np.testing.assert_allclose(normalizer.mean.numpy(), first.mean(0), rtol=1e-10)
    np.testing.assert_allclose(normalizer.var.numpy(), first.var(0), rtol=1e-10)
    accumulate(tf.constant(local[2]))
    sync()
    everything = np.concatenate([first, local[2], other[1]])
    np.testing.assert_allclose(normalizer.mean.numpy(), everything.mean(0), rtol=1e-10)
    np.testing.assert_allclose(normalizer.var.numpy(), everything.var(0), rtol=1e-10)
    assert normalizer.count.numpy() == len(everything) and len(comm._totals) == 4
    assert len(normalizer.variables) == 3  # What is pending is never checkpointed.


def test_accumulate_after_a_restore_starts_from_the_restored_statistics(tmp_path):
    saved = StreamingNormalize((3,))
    saved.update(_batches(2, [8])[0])
    path = tf.train.Checkpoint(stats=saved).save(str(tmp_path / "ckpt"))
    local, other = _batches(0, [5]), _batches(1, [4])
    normalizer = StreamingNormalize(
        (3,), cross_replica_sum=mpi_cross_replica_sum(_TwoRankComm(other))
    )
    tf.train.Checkpoint(stats=normalizer).restore(path).assert_existing_objects_matched()
    normalizer.accumulate(local[0])
    normalizer.sync()
    everything = np.concatenate([_batches(2, [8])[0], local[0], other[0]])
    np.testing.assert_allclose(normalizer.mean.numpy(), everything.mean(0), rtol=1e-10)
    np.testing.assert_allclose(normalizer.var.numpy(), everything.var(0), rtol=1e-10)


def test_accumulate_in_a_single_process_is_update():
    data = _batches(0, [5])[0]
    normalizer = StreamingNormalize((3,))
    normalizer.accumulate(data)
    normalizer.sync()  # Nothing to share.
    np.testing.assert_allclose(normalizer.mean.numpy(), data.mean(0), rtol=1e-12)
    np.testing.assert_allclose(normalizer.var.numpy(), data.var(0), rtol=1e-12)
