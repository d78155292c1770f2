"""Resume compares before it restores: changed keys, finished runs, runs without checkpoints."""

import os
import shutil

import pytest

from tests.scripts import runs


def _snapshot(run_dir):
    """Every file of the run with its size and modification time."""
    files = {}
    for root, _, names in os.walk(run_dir):
        for name in names:
            path = os.path.join(root, name)
            if name != "run.lock":
                files[path] = (os.path.getsize(path), os.path.getmtime(path))
    return files


@pytest.mark.parametrize(
    "override, old, new",
    [
        ("network=recurrent_gaussian", "'auto'", "'recurrent_gaussian'"),
        ("num_agents=4", "2", "4"),
        ("policy_layers=[16]", "[8]", "[16]"),
        ("normalize_observ=False", "True", "False"),
    ],
)
def test_a_changed_key_that_shapes_the_weights_is_named_before_anything_loads(
    run_copy, override, old, new
):
    before = _snapshot(run_copy)
    code, stdout, stderr = runs.resume(run_copy, "--set", override, "train_steps=512")
    key = override.split("=")[0]
    assert code == 2 and stdout == ""
    (line,) = stderr.splitlines()
    assert line.startswith(f"error: Run '{run_copy}' was trained with {key}={old}, not {new}:")
    assert "cannot be read" not in line and f"--set {key}=..." in line
    assert _snapshot(run_copy) == before


def test_resuming_a_finished_run_says_so_and_which_key_continues_it(run_copy):
    before = _snapshot(run_copy)
    code, stdout, stderr = runs.resume(run_copy)
    assert code == 2 and stdout == ""
    assert stderr.splitlines()[-1] == (
        f"error: Run '{run_copy}' is finished: it trained 256 env steps of train_steps=256. "
        "Continue it with --set train_steps=N (N > 256)."
    )
    assert _snapshot(run_copy) == before  # No second curve, no new policy.


def test_a_run_with_progress_but_no_checkpoints_is_refused(run_copy):
    shutil.rmtree(os.path.join(run_copy, "checkpoints"))
    before = _snapshot(run_copy)
    code, stdout, stderr = runs.resume(run_copy, "--set", "train_steps=512")
    assert code == 2 and stdout == ""
    assert stderr.splitlines()[-1] == (
        f"error: Run '{run_copy}' trained to env step 256 but holds no checkpoint: resuming "
        "would start over inside it. Move the run directory aside, or start a new run from its "
        f"config: --config={run_copy}/config.yaml"
    )
    assert _snapshot(run_copy) == before
