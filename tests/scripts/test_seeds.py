"""`train --seeds`: one run per seed in its own process, a failed seed reported, a table."""

import os
import re
import subprocess
import sys

import pytest

from tests.scripts import faulty_envs
from tests.scripts.capture import run_main


def _train(*argv, cwd):
    return subprocess.run(
        [sys.executable, "-m", "agents.scripts.train", "--config=debug", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=os.getcwd()),
    )


@pytest.mark.slow
def test_seeds_train_apart_a_failed_seed_is_reported_and_the_others_finish(tmp_path):
    env = faulty_envs.env_id("Faulty-reset-v0")  # Fails where an env is reset with seed 1.
    result = _train(
        "--seeds", "1", "5", "--parallel", "2", "--set", f"env={env}", "--logdir", "logs",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Seeds 1, 5: 2 runs at a time."
    failed = [line for line in lines if line.startswith("     1  failed: ")]
    assert len(failed) == 1 and "failed in reset" in failed[0]
    assert "injected fault in reset" in result.stderr  # The whole error, once.
    (done,) = [line for line in lines if re.match(r"\s+5\s+-?\d+\.\d\d\s", line)]
    assert done.split()[3] == "256" and done.endswith("-s5")
    assert lines[-1].startswith("final eval over 1 finished seeds: mean ")
    # Each run stamps its directory when it starts, so either seed's may sort first.
    runs = {run.rsplit("-", 1)[1]: run for run in os.listdir(tmp_path / "logs")}
    assert sorted(runs) == ["s1", "s5"]
    assert os.path.isdir(tmp_path / "logs" / runs["s5"] / "policy")


def test_seeds_refuses_a_seed_or_a_timestamp_beside_it(tmp_path, monkeypatch):
    from agents.scripts import train

    monkeypatch.chdir(tmp_path)
    code, _, stderr = run_main(train.main, ["--config=debug", "--seeds", "0", "1", "--seed", "3"])
    assert code == 2
    assert stderr.strip() == "error: --seeds starts new runs of its own: drop --seed."
    assert not os.path.exists(tmp_path / "logdir")


def test_parallel_zero_is_refused_not_read_as_all_cores(tmp_path, monkeypatch, capsys):
    import agents
    from agents.scripts import train

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        train.main(["--config=debug", "--seeds", "0", "1", "--parallel", "0"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert error.endswith("argument --parallel: '0' is not a positive integer (1, 2, ...)")

    message = r"^parallel \(runs at once\) must be at least 1, got 0.$"
    with pytest.raises(ValueError, match=message):
        agents.train("debug", logdir=str(tmp_path), seeds=[0, 1], parallel=0, verbose=0)
    assert not os.path.exists(tmp_path / "logdir") and os.listdir(tmp_path) == []


@pytest.mark.slow
def test_the_python_api_trains_seeds_their_summary_aggregates_them_and_plot_draws_them(
    tmp_path, monkeypatch
):
    import agents
    from agents.multirun.seeds import summary_lines
    from agents.scripts import plot

    outcomes = agents.train("debug", logdir=str(tmp_path), seeds=[4, 2], parallel=2, verbose=0)
    assert [outcome.seed for outcome in outcomes] == [4, 2]
    assert all(outcome.ok and outcome.result.env_steps == 256 for outcome in outcomes)
    assert outcomes[0].result.run_dir.endswith("-debug-s4")
    summary = summary_lines(outcomes)[-1]
    assert summary.startswith("final eval over 2 finished seeds: mean ")
    mean = float(summary.split("mean ")[1].split()[0])
    finals = [outcome.result.eval_score for outcome in outcomes]
    assert abs(mean - sum(finals) / 2) < 0.006  # Printed with two decimals.
    monkeypatch.chdir(tmp_path)  # The plot's globs are relative.
    code, stdout, stderr = run_main(plot.main, ["--runs", "*-debug-s*", "--out", "c.svg"])
    assert code == 0, stderr
    row = stdout.splitlines()[1].split()
    assert row[:2] == ["debug", "2"] and abs(float(row[2]) - mean) < 0.006
    assert (tmp_path / "c.svg").is_file()


@pytest.mark.slow
def test_sigterm_to_the_seeds_process_stops_every_run_saved_and_exported(tmp_path):
    """Both running seeds save and export; the third never starts, and the aggregate does not
    average stopped runs as if they were final."""
    import signal

    process = subprocess.Popen(
        [sys.executable, "-m", "agents.scripts.train", "--config=debug", "--seeds", "0", "1", "2",
         "--parallel", "2", "--set", "train_steps=1000000", "--logdir", "logs"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=os.getcwd()),
    )  # fmt: skip
    evals = set()
    for line in process.stdout:  # Both runs trained and evaluated once: stop them.
        if ": eval at env step" in line:
            evals.add(line.split(":")[0])
        if len(evals) == 2:
            break
    process.send_signal(signal.SIGTERM)
    rest, stderr = process.communicate(timeout=300)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    rows = [line for line in rest.splitlines() if line.endswith("(stopped by a signal)")]
    assert len(rows) == 2
    assert "     2  not started: stopped by a signal" in rest.splitlines()
    assert "seed 2: started" not in rest and "final eval over" not in rest
    assert len(os.listdir(tmp_path / "logs")) == 2
    for run in os.listdir(tmp_path / "logs"):
        assert os.path.isfile(tmp_path / "logs" / run / "policy" / "saved_model.pb")
