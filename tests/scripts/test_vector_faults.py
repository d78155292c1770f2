"""Faults of environments stepped by a vector backend (`env_backend`), through the command line.

The faulty env 1 of `faulty_envs` misbehaves in its 40th step, in the call from train env step 64
to 96; the message names the vector env, the env in it where that can be told, the step and what
came, as for the python backend.
"""

import glob
import os

import pytest

from agents.scripts import train
from tests.scripts import faulty_envs
from tests.scripts.capture import run_main

_FAILED_AT = 2 * (faulty_envs.FAULT_AFTER - 1)  # Train env steps made before the fault.


def _train(tmp_path, fault, backend):
    env = faulty_envs.env_id(f"Faulty-{fault}-v0")
    argv = ["--config=debug", f"--logdir={tmp_path}", "--set", f"env={env}"]
    argv += ["--set", f"env_backend={backend}", "--set", "checkpoint_every=64"]
    code, stdout, stderr = run_main(train.main, argv)
    (run_dir,) = glob.glob(os.path.join(tmp_path, "*-debug*"))
    assert "Done" not in stdout
    assert os.path.isfile(os.path.join(run_dir, "checkpoints", "ckpt-64.index"))
    assert not glob.glob(os.path.join(run_dir, "checkpoints", "ckpt-96*"))
    return code, stderr


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["gymnasium-sync", "gymnasium-async"])
def test_an_env_that_raises_in_a_vector_env_is_named_with_its_traceback(backend, tmp_path):
    code, stderr = _train(tmp_path, "step", backend)
    assert code == 1
    assert stderr.startswith(
        f"error: Stopped at env step {_FAILED_AT}: Train vector env, environment 1 "
        "(Faulty-step-v0) failed in step: Traceback (most recent call last)"
    )
    assert "RuntimeError: injected fault in step 40" in stderr
    assert "Worker" not in stderr  # gymnasium's own log lines of the failure are not repeated.


def test_a_non_finite_observation_of_a_vector_env_is_one_line(tmp_path):
    code, stderr = _train(tmp_path, "nan_observ", "gymnasium-sync")
    assert code == 1
    assert stderr.startswith(
        f"error: Stopped at env step {_FAILED_AT}: Train vector env, environment 1 "
        "(Faulty-nan_observ-v0) returned from step a non-finite observation"
    )
    assert stderr.count("\n") == 1


def test_a_wrong_shape_in_a_vector_env_is_named(tmp_path):
    code, stderr = _train(tmp_path, "bad_shape", "gymnasium-sync")
    assert code == 1
    assert stderr.startswith(f"error: Stopped at env step {_FAILED_AT}: Train vector env")
    assert "(Faulty-bad_shape-v0) failed in step" in stderr
    assert stderr.rstrip().splitlines()[-1].startswith("ValueError")  # gymnasium's stacking.


def test_an_id_envpool_lacks_is_one_line_naming_the_other_backends(tmp_path):
    pytest.importorskip("envpool")
    env = faulty_envs.env_id("Faulty-none-v0")
    argv = ["--config=debug", f"--logdir={tmp_path}", "--set", f"env={env}"]
    code, stdout, stderr = run_main(train.main, [*argv, "--set", "env_backend=envpool"])
    assert code == 2 and stderr.count("\n") == 1
    assert "EnvPool has no 'tests.scripts.faulty_envs:Faulty-none-v0'" in stderr
    assert "gymnasium-sync or gymnasium-async" in stderr


@pytest.mark.slow
def test_a_worker_that_dies_in_an_async_vector_env_ends_the_process_with_one_line(tmp_path):
    """A worker killed mid-step leaves the others' pipes in no known state: the run stops naming
    the env, and the process ends (its surviving workers are ended, not waited for)."""
    import subprocess
    import sys

    env = faulty_envs.env_id("Faulty-kill-v0")
    argv = [sys.executable, "-m", "agents.scripts.train", "--config=debug", f"--logdir={tmp_path}",
            "--set", f"env={env}", "env_backend=gymnasium-async"]  # fmt: skip
    result = subprocess.run(
        argv, capture_output=True, text=True, timeout=180,
        env=dict(os.environ, PYTHONPATH=os.getcwd()),
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Train vector env (Faulty-kill-v0) failed in step" in errors[0]
