"""The tuner: search spaces, Optuna's suggestions, pruning, and a study through the CLI."""

import pytest

from agents.config.errors import UsageError
from agents.multirun import tuning

optuna = pytest.importorskip("optuna")


def test_a_space_file_is_read_and_bad_entries_are_one_line(tmp_path):
    path = tmp_path / "space.yaml"
    path.write_text(
        "learning_rate: {type: float, low: 1.0e-4, high: 1.0e-2, log: true}\n"
        "num_minibatches: {type: categorical, choices: [2, 4]}\n"
        "update_epochs: {type: int, low: 1, high: 3}\n"
    )
    space = tuning.load_space(str(path))
    values = tuning.suggest(
        optuna.trial.FixedTrial({"learning_rate": 1e-3, "num_minibatches": 4, "update_epochs": 2}),
        space,
    )
    assert values == {"learning_rate": 1e-3, "num_minibatches": 4, "update_epochs": 2}
    for text, message in [
        ("colour: {type: float, low: 0, high: 1}\n", "'colour' is no config key"),
        ("learning_rate: {type: float, low: 0}\n", "give {type: float|int, low, high}"),
        ("", "is empty"),
    ]:
        path.write_text(text)
        with pytest.raises(UsageError, match=message):
            tuning.load_space(str(path))
    assert tuning.load_space(None) == tuning.DEFAULT_SPACE


def test_the_pruning_callback_reports_eval_scores_and_stops_where_told():
    class Trial:
        def __init__(self, prune_at):
            self.reports, self._prune_at = [], prune_at

        def report(self, value, step):
            self.reports.append((step, value))

        def should_prune(self):
            return len(self.reports) == self._prune_at

    class Run:
        env_steps, stopped_by = 0, None

        def stop(self, reason):
            self.stopped_by = reason

    class Report:
        def __init__(self, phase, score, steps):
            self.phase, self.score, self.metrics = phase, score, {"env_steps": steps}

    trial, run = Trial(prune_at=2), Run()
    pruning = tuning.Pruning(trial)
    pruning.on_report(run, Report("train", 1.0, 100))
    pruning.on_report(run, Report("eval", float("nan"), 100))  # No finished episode: no report.
    pruning.on_report(run, Report("eval", -5.0, 128))
    assert not pruning.pruned and run.stopped_by is None
    pruning.on_report(run, Report("eval", -7.0, 256))
    assert trial.reports == [(128, -5.0), (256, -7.0)]
    assert pruning.pruned and run.stopped_by == "pruned by the median pruner at env step 256"


@pytest.mark.slow
def test_debug_trials_prune_resume_and_write_a_best_config_that_reproduces(tmp_path, monkeypatch):
    from agents.scripts import train, tune
    from tests.scripts.capture import run_main

    monkeypatch.chdir(tmp_path)  # The logdir and the best config's path are relative.
    argv = ["--config=debug", "--logdir", "logs", "--trials"]
    code, stdout, stderr = run_main(tune.main, [*argv, "4"])
    assert code == 0, stderr
    lines = stdout.splitlines()
    rows = [line.split() for line in lines if line[:5].strip().isdigit()]
    assert len(rows) == 4 and {row[1] for row in rows} <= {"complete", "pruned"}
    assert any(row[1] == "pruned" for row in rows)  # Pruning is active on debug budgets.
    best = lines[-1]
    assert best.startswith("Best trial ") and best.endswith("tune-debug-best/config.yaml")
    score = best.split("eval ")[1].split(";")[0]
    code, stdout, stderr = run_main(train.main, ["--config=logs/tune-debug-best/config.yaml"])
    assert code == 0, stderr
    assert f"Final eval {score}," in stdout  # The best trial's score, trained again.
    code, stdout, _ = run_main(tune.main, [*argv, "5"])
    assert code == 0 and "4 of 5 trials done" in stdout.splitlines()[0]
    assert sum(line[:5].strip().isdigit() for line in stdout.splitlines()) == 5
