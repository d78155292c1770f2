"""MPI for data-parallel training: launch detection and the `World` of ranks (the TensorFlow
collectives between ranks are in `agents.tools.collectives`).

Nothing here imports mpi4py or TensorFlow at module level: `init_world` imports mpi4py (which
initializes MPI) only when an MPI launcher started this process, so a plain `python -m ...` runs as
a world of one without MPI, and environment child processes stay light.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import sys
import time
import traceback
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

import numpy as np

# Set by MPI launchers in each rank's environment: MPICH/Intel MPI (Hydra), Open MPI, PMIx, MVAPICH.
LAUNCHER_VARIABLES = (
    "PMI_SIZE",
    "PMI_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "PMIX_RANK",
    "MV2_COMM_WORLD_SIZE",
)
ABORT_GRACE_SECONDS = 1.0  # For the launcher to forward a failing rank's last words.


def launched_by_mpi(environ: Mapping[str, str] | None = None) -> bool:
    """Whether an MPI launcher (mpirun, mpiexec, srun with PMI) started this process."""
    environ = os.environ if environ is None else environ
    return any(name in environ for name in LAUNCHER_VARIABLES)


# Set by `srun` in each task of a job step: how many tasks the step started.
STEP_TASKS_VARIABLE = "SLURM_STEP_NUM_TASKS"


def unconnected_tasks(environ: Mapping[str, str] | None = None) -> int:
    """The task count of an `srun` step whose tasks no MPI launcher connects, else 0.

    `srun` without a process-management interface that MPI reads (`--mpi=pmi2` or `pmix`)
    starts each task as a world of one: every task would train a whole run of its own, all in
    one logdir. A batch script's own environment (SLURM_NTASKS without a step) is not a step.
    """
    environ = os.environ if environ is None else environ
    if launched_by_mpi(environ):
        return 0
    try:
        tasks = int(environ.get(STEP_TASKS_VARIABLE, "1"))
    except ValueError:
        return 0
    return tasks if tasks > 1 else 0


@dataclasses.dataclass(frozen=True)
class World:
    """The ranks of a data-parallel job, and the few collectives training needs.

    The default is a world of one process without MPI, where every method is a cheap no-op. All
    methods but `abort` are collectives: every rank must call them in the same order.

    Attributes:
        comm: An `mpi4py.MPI.Comm`, or None in a single process.
        rank: This process's rank, 0 to size - 1.
        size: Number of ranks.
        local_size: Number of ranks on this host (they share its cores).
    """

    comm: Any | None = None
    rank: int = 0
    size: int = 1
    local_size: int = 1

    @property
    def is_root(self) -> bool:
        """Whether this is rank 0, the one that writes files and prints progress."""
        return self.rank == 0

    def bcast(self, value: Any) -> Any:
        """Rank 0's `value` (any picklable object), on every rank."""
        return value if self.comm is None else self.comm.bcast(value, root=0)

    def allgather(self, value: Any) -> list:
        """The `value` of every rank, in rank order."""
        return [value] if self.comm is None else self.comm.allgather(value)

    def concat(self, array: Any, axis: int = -1) -> np.ndarray:
        """Every rank's array joined along `axis` in rank order (the env batch axis by default)."""
        return np.concatenate([np.asarray(part) for part in self.allgather(array)], axis)

    def any(self, flag: bool) -> bool:
        """Whether `flag` is true on at least one rank."""
        return bool(flag) if self.comm is None else self.comm.allreduce(int(bool(flag))) > 0

    def broadcast_variables(self, variables: Iterable[Any]) -> None:
        """Assign rank 0's values to the TF variables, given in the same order on every rank."""
        variables = list(variables)
        if self.comm is None or not variables:
            return
        values = self.bcast([v.numpy() for v in variables] if self.is_root else None)
        if len(values) != len(variables):
            raise ValueError(
                f"Rank 0 sent {len(values)} variables, rank {self.rank} has "
                f"{len(variables)}: the ranks built different models."
            )
        if not self.is_root:
            for variable, value in zip(variables, values):
                variable.assign(value)

    def agree(self, error: BaseException | None) -> None:
        """Raise on every rank when `error` is set on any rank, so that none waits for the others.

        The rank that failed re-raises its `error`; the others raise an error of the same type when
        it can be built from a message (e.g. a usage error), else RuntimeError, naming the rank.
        """
        if self.comm is None:
            if error is not None:
                raise error
            return
        failure = None if error is None else (_picklable_type(error), str(error))
        failures = [(rank, f) for rank, f in enumerate(self.allgather(failure)) if f is not None]
        if error is not None:
            raise error
        if failures:
            rank, (kind, message) = failures[0]
            try:
                other = kind(f"rank {rank}: {message}")
            except Exception:  # A type whose constructor needs other arguments.
                other = RuntimeError(f"rank {rank} failed: {kind.__name__}: {message}")
            raise other

    def abort(self, error: BaseException) -> NoReturn:
        """End the whole job after a failure on this rank, naming the rank (never returns).

        Other ranks may be waiting in a collective that this rank will never join: `Abort` makes
        the launcher stop them all, instead of leaving them to hang. The report goes out in one
        unbuffered write, and the launcher gets a moment to forward it: `Abort` tears down the
        job's output streams, and what they still held would be lost.
        """
        description = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        report = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        report += f"rank {self.rank} failed: {description}\n"
        sys.stdout.flush()
        sys.stderr.flush()
        os.write(2, report.encode(errors="replace"))
        time.sleep(ABORT_GRACE_SECONDS)
        self.comm.Abort(1)
        raise SystemExit(1)  # Unreachable: Abort ends the process.


def _picklable_type(error: BaseException) -> type:
    """The error's type if it can travel to other ranks (pickled by name), else RuntimeError."""
    try:
        pickle.dumps(type(error))
    except Exception:  # E.g. a class defined inside a function.
        return RuntimeError
    return type(error)


def init_world(environ: Mapping[str, str] | None = None) -> World:
    """The world this process belongs to: MPI's when an MPI launcher started it, else one rank.

    Importing mpi4py initializes MPI, so it happens only under a launcher (see
    `LAUNCHER_VARIABLES`); without one, MPI is neither imported nor needed.
    """
    if not launched_by_mpi(environ):
        return World()
    from mpi4py import MPI  # Importing it initializes MPI: launched ranks only.

    comm = MPI.COMM_WORLD
    local_size = comm.Split_type(MPI.COMM_TYPE_SHARED).Get_size()
    return World(comm, comm.Get_rank(), comm.Get_size(), local_size)


# A scheduler's (SLURM's --cpus-per-task) or the user's thread count for each process, first found.
THREAD_VARIABLES = ("SLURM_CPUS_PER_TASK", "OMP_NUM_THREADS")


def rank_threads(cores: int, local_size: int, environ: Mapping[str, str] = os.environ) -> int:
    """Threads for one of `local_size` ranks on a host of `cores`: the first positive count of
    `THREAD_VARIABLES` that is set, else an even share of the cores (at least 1)."""
    for name in THREAD_VARIABLES:
        value = environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return max(1, cores // max(1, local_size))
