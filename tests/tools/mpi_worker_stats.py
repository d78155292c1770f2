"""MPI worker for tests/tools/test_mpi.py: running statistics agree with numpy across ranks.

Run as `mpirun -n 2 python tests/tools/mpi_worker_stats.py`. Each rank draws different data
(different batch sizes too, one batch empty on rank 1), updates a `RunningMeanStd(comm=comm)`
eagerly and a `StreamingNormalize` inside `tf.function`, and checks that both hold the statistics of
all ranks' data concatenated; rank 0 also checks the statistics gathered from every rank. Each rank
prints `OK rank=<r>` or exits 1.
"""

import sys

import numpy as np
import tensorflow as tf
from mpi4py import MPI

from agents.tools.collectives import mpi_cross_replica_sum
from agents.tools.normalize import RunningMeanStd, StreamingNormalize

SHAPE = (2, 3)


def _local_batches(rank):
    rng = np.random.default_rng(rank)
    sizes = [5, 0, 7] if rank else [3, 4, 9]
    return [rng.normal(10.0 * rank + i, rank + 1.0, (n, *SHAPE)) for i, n in enumerate(sizes)]


def _mismatches(stats, data):
    """Names of the statistics that differ from numpy on `data`."""
    expected = {
        "rms.mean": data.mean(0),
        "rms.var": data.var(0),
        "tf.mean": data.mean(0),
        "tf.var": data.var(0),
        "rms.count": len(data),
        "tf.count": len(data),
    }
    return [name for name, value in expected.items() if not np.allclose(stats[name], value, 1e-10)]


def main():
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    rms = RunningMeanStd(SHAPE, epsilon=0.0, comm=comm)
    normalizer = StreamingNormalize(SHAPE, cross_replica_sum=mpi_cross_replica_sum(comm))
    update = tf.function(normalizer.update)
    batches = _local_batches(rank)
    for batch in batches:
        rms.update(batch)
        update(tf.constant(batch))
    stats = {
        "rms.mean": rms.mean.numpy(),
        "rms.var": rms.var.numpy(),
        "rms.count": rms.count.numpy(),
        "tf.mean": normalizer.mean.numpy(),
        "tf.var": normalizer.var.numpy(),
        "tf.count": normalizer.count.numpy(),
    }
    # All collectives happen before any check, so a failing rank cannot leave the other one waiting.
    data = np.concatenate([b for local in comm.allgather(batches) for b in local])
    every_rank_stats = comm.gather(stats, root=0)
    failures = [f"rank {rank}: {name}" for name in _mismatches(stats, data)]
    if rank == 0:
        for other, other_stats in enumerate(every_rank_stats):
            failures += [f"rank {other} (gathered): {n}" for n in _mismatches(other_stats, data)]
    if failures:
        print(f"FAIL rank={rank}: {failures}", flush=True)
        sys.exit(1)
    print(f"OK rank={rank} count={len(data)}", flush=True)


if __name__ == "__main__":
    main()
