"""Ranks: the MPI ranks as an agent sees them, one object instead of three arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from agents.tools.collectives import CrossReplicaSum, mpi_all_gather, mpi_cross_replica_sum
from agents.tools.mpi import World


class Ranks(NamedTuple):
    """How many ranks train together, and the collectives that join them.

    The default is a single process: no collectives.

    Attributes:
        size: Number of ranks (the learning-rate schedule counts all ranks' steps).
        cross_replica_sum: Sums a float64 tensor over the ranks
            (`collectives.mpi_cross_replica_sum`); gradients and normalizer statistics are then
            averaged over them. None: one rank.
        all_gather: Gathers tensors of all ranks (`collectives.mpi_all_gather`), for agents
            whose ranks share their rollouts. None: one rank.
    """

    size: int = 1
    cross_replica_sum: CrossReplicaSum | None = None
    all_gather: Callable | None = None


def ranks_of(world: World) -> Ranks:
    """The `Ranks` of an MPI world (no collectives in a world of one)."""
    return Ranks(world.size, mpi_cross_replica_sum(world.comm), mpi_all_gather(world.comm))


ONE_PROCESS = Ranks()  # A single process: no collectives.
