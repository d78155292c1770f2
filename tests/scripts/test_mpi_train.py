"""Data-parallel training under `mpirun -n 2`: one launch checks training, one a failing rank.

Each launch starts two TensorFlow processes; `mpi_worker_train.py` holds the checks. Skipped when
the MPI launcher is missing.
"""

import os
import subprocess
import sys
import time

import pytest

WORKER = os.path.join(os.path.dirname(__file__), "mpi_worker_train.py")
MPIRUN = os.path.join(os.path.dirname(sys.executable), "mpirun")

pytestmark = pytest.mark.skipif(
    not os.path.exists(MPIRUN), reason=f"mpirun not found next to the interpreter at {MPIRUN}"
)


def _launch(mode, logdir, timeout):
    """`mpirun -n 2 python mpi_worker_train.py <mode> <logdir>`; returns (result, seconds)."""
    start = time.perf_counter()
    result = subprocess.run(
        [MPIRUN, "-n", "2", sys.executable, WORKER, mode, str(logdir)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
    )
    return result, time.perf_counter() - start


def test_two_ranks_train_identically_and_write_one_run(tmp_path):
    result, _ = _launch("check", tmp_path, timeout=300)  # ~2 min idle; a guard against hangs.
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for name in (
        "normalizer statistics equal numpy's",
        "steps",
        "parameters identical after updates",
        "observation statistics merged",
        "sampling differs per rank",
        "update of both ranks' rollouts",
        "global batch: one process's updates",
        "gradient is the mean over ranks",
        "one run directory",
        "only rank 0 prints",
        "files",
        "env steps",
        "reports",
        "resume continues",
        "rnd parameters identical after updates",
        "rnd statistics merged",
        "visited cells of all ranks",
        "native env steps",
        "native parameters identical after updates",
        "native envs differ per rank",
    ):
        assert f"OK {name}\n" in result.stdout, output


def test_a_failing_rank_ends_the_job_naming_it(tmp_path):
    result, seconds = _launch("fail", tmp_path, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "rank 1 failed: RuntimeError: injected failure" in result.stderr, output
    # Well within the time of a training run of a million steps: rank 0 did not hang.
    assert seconds < 60, output


def test_a_killed_rank_ends_the_job(tmp_path):
    result, seconds = _launch("kill", tmp_path, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    # The launcher names the dead process; rank 0, waiting in a collective, is ended with it.
    assert "KILLED" in output or "signal 9" in output, output
    assert seconds < 60, output
