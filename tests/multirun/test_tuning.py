"""The tuner: search spaces, Optuna's suggestions, pruning, and a study through the CLI."""

import os

import pytest

from agents.config.errors import UsageError
from agents.multirun import tuning, tuning_space

optuna = pytest.importorskip("optuna")


def test_a_space_file_is_read_and_bad_entries_are_one_line(tmp_path):
    path = tmp_path / "space.yaml"
    path.write_text(
        "learning_rate: {type: float, low: 1.0e-4, high: 1.0e-2, log: true}\n"
        "num_minibatches: {type: categorical, choices: [2, 4]}\n"
        "update_epochs: {type: int, low: 1, high: 3}\n"
    )
    space = tuning_space.load_space(str(path))
    values = tuning_space.suggest(
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
            tuning_space.load_space(str(path))
    assert tuning_space.load_space(None) == tuning_space.DEFAULT_SPACE


@pytest.mark.parametrize(
    "entry, message",
    [
        ("learning_rate: {type: float, low: 0.1, high: 0.01}", "low 0.1 is above high 0.01"),
        ("learning_rate: {type: float, low: 0, high: 0.01, log: true}", "needs low > 0, got 0"),
        ("learning_rate: {type: float, low: abc, high: 0.01}", "low and high must be numbers"),
        ("learning_rate: {type: float, low: .nan, high: 0.01}", "must be finite"),
        ("update_epochs: {type: int, low: 1.5, high: 4}", "must be integers"),
        ("update_epochs: {type: categorical, choices: 4}", "must be a non-empty list"),
        ("discount: {type: float, low: 0.9, high: 1.02}", "1.02 is outside what the key accepts"),
        ("num_agents: {type: categorical, choices: [4, -2]}", "-2 is outside what the key accep"),
    ],
)
def test_a_bad_range_ends_the_command_with_one_line_before_any_trial(tmp_path, entry, message):
    from agents.scripts import tune
    from tests.scripts.capture import run_main

    space = tmp_path / "space.yaml"
    space.write_text(entry + "\n")
    argv = ["--config=debug", "--trials", "2", "--logdir", str(tmp_path), "--space", str(space)]
    code, stdout, stderr = run_main(tune.main, argv)
    assert code == 2 and stdout == ""
    assert stderr.count("\n") == 1 and message in stderr, stderr
    assert stderr.startswith(f"error: Search space {str(space)!r}: {entry.split(':')[0]}: ")
    assert list(tmp_path.iterdir()) == [space]  # No study was created.


def test_a_space_given_in_python_is_checked_before_any_trial(tmp_path):
    space = {"discount": {"type": "float", "low": 0.9, "high": 1.02}}
    with pytest.raises(UsageError, match=r"^Search space: discount: .*1.02 is outside what"):
        tuning.tune("debug", 2, str(tmp_path), space=space)
    assert not list(tmp_path.iterdir())


def _quick_study(tmp_path, seed, trials, name="s"):
    """A study of `tuning`'s sampler over a space of two keys, on an objective of no training."""
    tmp_path.mkdir(exist_ok=True)
    study = tuning._open_study(name, f"sqlite:///{tmp_path / 'tune.db'}", seed)
    space = {"learning_rate": tuning_space.DEFAULT_SPACE["learning_rate"],
             "clip_ratio": tuning_space.DEFAULT_SPACE["clip_ratio"]}  # fmt: skip
    study.optimize(lambda trial: -tuning_space.suggest(trial, space)["learning_rate"], trials)
    return [trial.params for trial in study.trials]


def test_each_trial_draws_its_own_values_and_a_study_of_the_same_seed_draws_them_again(tmp_path):
    first = _quick_study(tmp_path / "a", seed=3, trials=2)
    grown = _quick_study(tmp_path / "a", seed=3, trials=2)  # A second call of the same study.
    assert grown[:2] == first and len(grown) == 4
    rates = [params["learning_rate"] for params in grown]
    assert len(set(rates)) == 4  # One sampler seeded once repeated trials 0-1 as trials 2-3.
    assert _quick_study(tmp_path / "b", seed=3, trials=4) == grown  # Reproducible by seed.
    assert _quick_study(tmp_path / "c", seed=4, trials=1)[0] != grown[0]
    assert tuning.trial_seed(3, 0) != tuning.trial_seed(3, 1) != tuning.trial_seed(4, 1)


def test_processes_creating_one_study_at_once_all_open_it(tmp_path):
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(4) as pool:
        pool.starmap(_quick_study, [(tmp_path, 0, 1)] * 4)  # All with the same seed.
    study = optuna.load_study(study_name="s", storage=f"sqlite:///{tmp_path / 'tune.db'}")
    assert len({trial.params["learning_rate"] for trial in study.trials}) == 4


def test_a_trial_stopped_by_a_signal_is_tried_again_with_its_values_once(tmp_path):
    study = tuning._open_study("s", f"sqlite:///{tmp_path / 'tune.db'}", 0)
    space = {"learning_rate": tuning_space.DEFAULT_SPACE["learning_rate"]}

    def stopped(trial):
        tuning_space.suggest(trial, space)
        trial.set_user_attr(tuning.STOPPED_ATTR, 15)
        raise tuning.TuningStoppedError(15, trial.number, "run")

    with pytest.raises(tuning.TuningStoppedError):
        study.optimize(stopped, 1, catch=())
    assert tuning.retry_stopped(study) == [0]
    assert tuning.retry_stopped(study) == []  # Queued once, not per call.
    study.optimize(lambda trial: tuning_space.suggest(trial, space)["learning_rate"], 1)
    again = study.trials[1]
    assert again.params == study.trials[0].params and again.user_attrs[tuning.RETRY_ATTR] == 0


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


@pytest.mark.slow
def test_sigterm_to_tune_saves_the_trial_in_one_line_and_the_next_call_tries_it_again(tmp_path):
    import glob
    import signal
    import subprocess
    import sys
    import time

    from agents.scripts import tune
    from tests.scripts.capture import run_main

    argv = ["--config=debug", "--trials", "1", "--logdir", str(tmp_path), "--set"]
    process = subprocess.Popen(
        [sys.executable, "-m", "agents.scripts.tune", *argv, "train_steps=10000000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not glob.glob(str(tmp_path / "*trial0*" / "metrics.jsonl")):  # A report is out.
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM
    assert "Traceback" not in stderr and stderr.startswith("SIGTERM: stopping after this step.")
    last = stderr.splitlines()[-1]
    assert last.startswith("Stopped by signal 15 in trial 0 (saved: ")
    assert last.endswith("Run the same command to go on; that trial's values are tried again.")
    assert os.path.isfile(glob.glob(str(tmp_path / "*trial0*" / "policy" / "saved_model.pb"))[0])
    code, stdout, stderr = run_main(tune.main, [*argv, "train_steps=256"])
    assert code == 0, stderr
    assert "trial 0 was stopped by a signal: its values are tried again" in stdout
    study = optuna.load_study(study_name="debug", storage=f"sqlite:///{tmp_path / 'tune-debug.db'}")
    stopped, again = study.trials
    assert stopped.state.name == "FAIL" and again.state.name in ("COMPLETE", "PRUNED")
    assert again.params == stopped.params


def test_a_studys_config_file_is_read_once_on_its_way_to_every_trials_run(tmp_path, monkeypatch):
    """The config.yaml a study starts from becomes one `ConfigSource` where it enters; each
    trial's run is planned from that, not from the file again."""
    import builtins
    import types

    from agents.config import files
    from agents.multirun import quiet_run
    from agents.scripts import configs
    from agents.training.trainer import Trainer

    files.save_config(configs.debug(), str(tmp_path), "debug", seed=7)
    path = str(tmp_path / files.CONFIG_FILE)
    opened, real_open = [], builtins.open

    def counting_open(file, *args, **kwargs):
        if os.fspath(file) == path if isinstance(file, (str, os.PathLike)) else False:
            opened.append(file)
        return real_open(file, *args, **kwargs)

    planned = []

    def plan_only(config, logdir, seed, overrides, name, callbacks=()):
        """The trial's run as far as its plan (config, name, seed), without training it."""
        trainer = Trainer(config, logdir, seed=seed, overrides=overrides, name=name)
        trainer.close()
        planned.append((trainer.name, trainer.seed, dict(trainer.config)))
        score = float(len(planned))
        return types.SimpleNamespace(
            run_dir=trainer.run_dir, stopped=False, signum=None, env_steps=0, eval_score=score
        )

    monkeypatch.setattr(builtins, "open", counting_open)
    monkeypatch.setattr(quiet_run, "train_quietly", plan_only)
    study = tuning.tune(path, 3, str(tmp_path / "logs"), seed=1, say=lambda line: None)
    monkeypatch.undo()
    assert len(opened) == 1, opened
    assert len(study.trials) == 3 and [name for name, _, _ in planned] == ["debug"] * 3
    assert all(seed == 1 for _, seed, _ in planned)  # The study's seed, not the file's 7.
    for _, _, config in planned:  # The file's values, each trial's suggestions over them.
        assert config["num_agents"] == configs.debug()["num_agents"] == 2
