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


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_failing_rank_ends_the_job_naming_it(tmp_path):
    result, seconds = _launch("fail", tmp_path, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "rank 1 failed: RuntimeError: injected failure" in result.stderr, output
    # Well within the time of a training run of a million steps: rank 0 did not hang.
    assert seconds < 60, output


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["kill", "exit"])
def test_a_dead_rank_ends_the_job_keeping_the_checkpoint_and_the_resume_command(tmp_path, mode):
    import tensorflow as tf

    result, seconds = _launch(mode, tmp_path, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    if mode == "kill":  # The launcher names the dead process; rank 0 is ended with it.
        assert "KILLED" in output or "signal 9" in output, output
    assert seconds < 60, output
    (run_dir,) = tmp_path.iterdir()
    hint = "resume from the latest checkpoint with: mpirun -n 2 python -m agents.scripts.train"
    assert hint in result.stdout and f"--timestamp={run_dir.name}" in result.stdout, output
    latest = tf.train.latest_checkpoint(str(run_dir / "checkpoints"))
    assert latest is not None and int(latest.rsplit("-", 1)[1]) >= 1, os.listdir(run_dir)
    assert tf.train.load_checkpoint(latest).get_variable_to_shape_map()  # Whole, readable.


@pytest.mark.slow
def test_sigterm_to_the_launcher_saves_every_rank_and_prints_the_resume_command(tmp_path):
    """Also a launch through a hostfile of two slots on this host (MPICH's `-f`)."""
    import signal

    (tmp_path / "hosts").write_text("localhost:2\n")
    command = [MPIRUN, "-f", str(tmp_path / "hosts"), "-n", "2", sys.executable, "-m"]
    command += ["agents.scripts.train", "--config=debug", f"--logdir={tmp_path / 'logs'}"]
    launcher = subprocess.Popen(
        [*command, "--set", "train_steps=10000000"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while not list((tmp_path / "logs").glob("*/checkpoints/checkpoint")):
        assert launcher.poll() is None and time.monotonic() < deadline, launcher.communicate()
        time.sleep(0.2)
    launcher.send_signal(signal.SIGTERM)
    stdout, stderr = launcher.communicate(timeout=60)
    assert launcher.returncode == 128 + signal.SIGTERM, stdout + stderr
    (run_dir,) = (tmp_path / "logs").iterdir()
    resume = f"--logdir={tmp_path / 'logs'} --timestamp={run_dir.name}"
    line = stderr.splitlines()[-1]
    assert line.startswith("Interrupted at env step ") and "; checkpoint saved. " in line, stderr
    assert line.endswith(
        f"Resume with: mpirun -n 2 python -m agents.scripts.train --config=debug {resume}"
    )
    assert "Traceback" not in stderr and "rank 1" not in stderr
