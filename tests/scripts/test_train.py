"""Tests for the training script: run directories, resuming, bad input and interruption.

Every run uses the `debug` config (256 train env steps of Pendulum); `main` runs in-process, and
only the Ctrl-C test starts a process.
"""

import glob
import json
import os
import shutil
import signal

import pytest
import yaml

from agents.config import files
from agents.config.errors import UsageError
from agents.scripts import configs, train
from agents.training import reporting, results
from tests.scripts import faulty_envs
from tests.scripts.capture import run_main, training_process

_TIMESTAMP = "20000101T000000"  # The stamp of copies of the first run.
_DICT_OBSERVATION = faulty_envs.env_id("DictObservation-v0")
_TUPLE_ACTION = faulty_envs.env_id("TupleAction-v0")


def _run(argv):
    """`train.main(argv)` in-process; returns (exit code, stdout, stderr)."""
    return run_main(train.main, argv)


def _files(directory):
    """Relative path -> contents of every file under `directory`."""
    result = {}
    for path in glob.glob(os.path.join(directory, "**"), recursive=True):
        if os.path.isfile(path):
            with open(path, "rb") as handle:
                result[os.path.relpath(path, directory)] = handle.read()
    return result


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """A finished debug run with `learning_rate=0.001`: (logdir, run_dir, code, stdout, stderr).

    Episodes of 50 steps end within the run, so that its learning curve has points.
    """
    logdir = str(tmp_path_factory.mktemp("logdir"))
    argv = ["--config=debug", f"--logdir={logdir}", "--set", "learning_rate=0.001"]
    code, stdout, stderr = _run(argv + ["--set", "max_episode_steps=50"])
    runs = os.listdir(logdir)
    run_dir = os.path.join(logdir, runs[0]) if len(runs) == 1 else None
    return logdir, run_dir, code, stdout, stderr


def _copy_run(run_dir, logdir):
    """Copy a run under `logdir` as `<_TIMESTAMP>-debug`; returns the copy's path."""
    copy = os.path.join(logdir, f"{_TIMESTAMP}-debug")
    shutil.copytree(run_dir, copy)
    return copy


def test_new_run_writes_config_checkpoints_and_summaries(first_run):
    logdir, run_dir, code, stdout, _ = first_run
    assert code == 0
    assert len(os.listdir(logdir)) == 1
    timestamp, name, seed = os.path.basename(run_dir).split("-")
    assert (name, seed) == ("debug", "s0") and len(timestamp) == len(_TIMESTAMP)
    with open(os.path.join(run_dir, "config.yaml")) as handle:
        saved = yaml.safe_load(handle)
    assert saved["name"] == "debug"
    assert saved["config"]["learning_rate"] == 0.001
    assert isinstance(saved["config"]["learning_rate"], float)
    assert saved["config"]["train_steps"] == 256
    assert os.path.isfile(os.path.join(run_dir, "checkpoints", "checkpoint"))
    assert glob.glob(os.path.join(run_dir, "checkpoints", "ckpt-*.index"))
    # One TensorBoard entry: train and eval summaries and the hparams in the run directory.
    assert glob.glob(os.path.join(run_dir, "events.out.tfevents.*"))
    assert not os.path.exists(os.path.join(run_dir, "train"))
    assert {"train/mean_length", "eval/mean_score", "loss/policy_loss"} <= _tags(run_dir)
    lines = stdout.splitlines()
    assert lines[0] == f"Starting run {run_dir} at env step 0."
    assert any(line.startswith("train  env step") for line in lines)
    # Which policy evaluation scored, on its line, in its records and in TensorBoard's Text tab.
    evals = [line for line in lines if line.startswith(" eval  env step")]
    assert evals and all(" episodes, mode)" in line for line in evals)
    with open(os.path.join(run_dir, "metrics.jsonl")) as handle:
        records = [json.loads(line) for line in handle]
    assert {r["phase"]: r.get("policy") for r in records} == {"train": None, "eval": "mode"}
    (text,) = _text(run_dir, "eval/policy")
    assert text == "Evaluation acts by the policy's mode (deterministic)."
    assert lines[-1] == f"Done: 256 env steps in {run_dir}."


def test_new_run_ends_with_learning_curve_and_policy_and_no_bar(first_run):
    run_dir, code, stdout, stderr = first_run[1:]
    assert code == 0
    assert stdout.splitlines()[-3:-1] == [
        f"Learning curve: {run_dir}/learning_curve.png",
        f"Policy (SavedModel): {run_dir}/policy",
    ]
    with open(os.path.join(run_dir, "learning_curve.png"), "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.path.isfile(os.path.join(run_dir, "policy", "saved_model.pb"))
    assert stderr == ""  # No progress bar where stderr is no terminal.


def test_a_result_that_cannot_be_written_is_one_line_and_nothing_to_plot_a_warning(capsys):
    def fail():
        raise OSError("No space left on device\nsecond line")

    def nothing():
        raise UsageError("No mean_score summaries")

    assert results._write("Learning curve", fail, print) == (
        "Learning curve not written: OSError: No space left on device"
    )
    assert results._write("Learning curve", nothing, print) is None
    assert results._write("Policy (SavedModel)", lambda: "/some/path", print) is None
    output = capsys.readouterr()
    assert output.err == "warning: Learning curve not written: No mean_score summaries\n"
    assert output.out == "Policy (SavedModel): /some/path\n"


def test_a_failed_export_leaves_the_previous_policy_whole(tmp_path):
    path = tmp_path / "policy"
    path.mkdir()
    (path / "saved_model.pb").write_text("the previous export")

    def export(target):
        os.makedirs(target)
        with open(os.path.join(target, "saved_model.pb"), "w") as handle:
            handle.write("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        results.atomic_directory(str(path), export)
    assert sorted(os.listdir(tmp_path)) == ["policy"]
    assert (path / "saved_model.pb").read_text() == "the previous export"
    results.atomic_directory(str(path), os.makedirs)
    assert os.listdir(path) == [] and sorted(os.listdir(tmp_path)) == ["policy"]


def test_a_failed_export_exits_1_and_the_resume_command_writes_it(tmp_path, monkeypatch):
    def full_disk(path, export):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(results, "atomic_directory", full_disk)
    code, _, stderr = _run(["--config=debug", f"--logdir={tmp_path}"])
    assert code == 1
    line = stderr.strip().splitlines()[-1]
    assert line.startswith("error: Policy (SavedModel) not written: OSError: [Errno 28] No space")
    assert "the checkpoint is saved. Write the results again with: python -m " in line
    (run_dir,) = glob.glob(os.path.join(tmp_path, "*-debug*"))
    assert not os.path.exists(os.path.join(run_dir, "policy"))
    monkeypatch.undo()
    timestamp = os.path.basename(run_dir).split("-")[0]
    code, stdout, _ = _run(["--config=debug", f"--logdir={tmp_path}", f"--timestamp={timestamp}"])
    assert code == 0
    assert (
        stdout.splitlines()[-1] == f"Run {run_dir} was finished at env step 256; wrote its results."
    )
    assert os.path.isfile(os.path.join(run_dir, "policy", "saved_model.pb"))


def test_session_restores_the_latest_checkpoint(first_run):
    from agents.training.run import Run

    run_dir = first_run[1]
    session = Run(files.load_config(run_dir, "debug"), run_dir)
    try:
        assert session.env_steps == 256
        # 256 env steps / (16 steps x 2 envs) = 8 updates of 2 epochs x 2 minibatches.
        assert int(session.agent.optimizer.iterations.numpy()) == 32
        assert session.agent.optimizer.learning_rate.numpy() == pytest.approx(0.001)
        # Only training observations update the normalizer: one per env step.
        assert session.agent.observ_normalizer.count.numpy() == 256
    finally:
        session.close()


def test_resume_continues_training_and_keeps_the_saved_config(first_run, tmp_path):
    run_dir = _copy_run(first_run[1], str(tmp_path))
    argv = ["--config=debug", f"--logdir={tmp_path}", f"--timestamp={_TIMESTAMP}"]
    code, stdout, stderr = _run(argv + ["--set", "train_steps=512"])
    assert code == 0, stderr
    lines = stdout.splitlines()
    assert lines[0] == f"Resuming run {run_dir} at env step 256."
    assert lines[-2] == f"Policy (SavedModel): {run_dir}/policy"  # Over the copied one.
    assert lines[-1] == f"Done: 512 env steps in {run_dir}."
    assert "warning" not in stderr
    with open(os.path.join(run_dir, "config.yaml")) as handle:
        saved = yaml.safe_load(handle)["config"]
    assert saved["train_steps"] == 512 and saved["learning_rate"] == 0.001


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--config=nope"], ["'nope'", "pendulum", "debug"]),
        (["--set", "nope=1"], ["'nope=1'", "learning_rate", "num_agents"]),
        (["--set", "learning_rate=abc"], ["learning_rate", "'abc'", "float"]),
        (["--set", "num_agents=2.5"], ["num_agents", "got 2.5", "an int"]),
        (["--timestamp", "19990101T000000"], ["19990101T000000", "none"]),
        (["--set", "env=NoSuchEnv-v0"], ["'NoSuchEnv-v0'"]),
        (["--env_processes", "--set", "env=NoSuchEnv-v0"], ["'NoSuchEnv-v0'"]),
        (["--set", f"env={_DICT_OBSERVATION}"], ["key 'mission' is a Text", "Box, Discrete"]),
        (["--set", f"env={_TUPLE_ACTION}"], ["action space Tuple", "Box, Discrete and Multi"]),
        (["--set", "policy_loss=bogus"], ["'bogus'", "clip", "dual_clip"]),
        (["--set", "num_agents=0"], ["num_agents", "an int >= 1", "got 0"]),
        (["--set", "target_kl=abc"], ["target_kl", "'abc'", "a float > 0.0 or None"]),
        (["--set", "value_clip=-1"], ["value_clip", "> 0.0 or None", "got -1.0"]),
    ],
)
def test_bad_input_is_one_line_error_and_leaves_no_run(argv, expected, tmp_path):
    if not argv[0].startswith("--config"):
        argv = ["--config=debug"] + argv
    code, stdout, stderr = _run(argv + [f"--logdir={tmp_path}"])
    assert code == 2
    assert stderr.startswith("error: ") and stderr.count("\n") == 1, stderr
    for text in expected:
        assert text in stderr
    assert "Traceback" not in stderr and "Starting" not in stdout
    assert os.listdir(tmp_path) == []


def test_srun_tasks_no_mpi_launcher_connects_are_refused_in_one_line(tmp_path, monkeypatch):
    """`srun -n 2` without `--mpi=pmi2`: each task is a world of one and would train alone."""
    monkeypatch.setenv("SLURM_STEP_NUM_TASKS", "2")
    for name in (
        "PMI_SIZE",
        "PMI_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "PMIX_RANK",
        "MV2_COMM_WORLD_SIZE",
    ):
        monkeypatch.delenv(name, raising=False)
    code, stdout, stderr = run_main(train.main, ["--config=debug", f"--logdir={tmp_path}"])
    assert code == 2 and stdout == ""
    assert stderr.startswith("error: srun started 2 tasks (SLURM_STEP_NUM_TASKS=2) that no MPI ")
    assert "srun --mpi=pmi2" in stderr and "mpirun -n 2" in stderr and stderr.count("\n") == 1
    assert os.listdir(tmp_path) == []


def test_failed_resume_leaves_the_run_untouched(first_run, capsys):
    logdir, run_dir = first_run[:2]
    timestamp = os.path.basename(run_dir).split("-")[0]
    before = _files(run_dir)
    resume = [f"--logdir={logdir}", f"--timestamp={timestamp}"]
    assert train.main(["--config=debug", *resume, "--set", "env=NoSuchEnv-v0"]) == 2
    assert "NoSuchEnv-v0" in capsys.readouterr().err
    assert train.main(["--config=debug", *resume, "--set", "policy_layers=[16]"]) == 2
    assert "was trained with policy_layers=[8], not [16]" in capsys.readouterr().err
    # The run directory's name holds the config name: another config finds no such run.
    assert train.main(["--config=pendulum", *resume]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: No run") and timestamp in error
    assert os.path.basename(run_dir) in error  # Lists the runs that exist.
    assert _files(run_dir) == before


def test_run_whose_config_disagrees_with_config_is_refused(tmp_path):
    run_dir = tmp_path / f"{_TIMESTAMP}-debug"  # Named debug, but a pendulum run's config.
    run_dir.mkdir()
    files.save_config(configs.pendulum(), str(run_dir), "pendulum")
    code, stdout, stderr = _run(
        ["--config=debug", f"--logdir={tmp_path}", f"--timestamp={_TIMESTAMP}"]
    )
    assert code == 2 and stdout == ""
    assert stderr == (
        f"error: Run {str(run_dir)!r} was trained with --config=pendulum, not --config=debug.\n"
    )


def test_load_config_rejects_another_config_name(first_run):
    with pytest.raises(UsageError, match=r"--config=debug, not --config=pendulum"):
        files.load_config(first_run[1], "pendulum")


def test_unwritable_logdir(tmp_path):
    (tmp_path / "file.txt").write_text("not a directory")
    logdir = str(tmp_path / "file.txt" / "logs")
    code, _, stderr = _run(["--config=debug", f"--logdir={logdir}"])
    assert code == 2
    assert stderr.startswith("error: Cannot write to logdir") and logdir in stderr


# SIGHUP (a closed terminal), SIGQUIT (Ctrl-\\) and SIGUSR1 (a scheduler's warning) stop a run
# as SIGTERM does.
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1])
def test_sigterm_stops_at_a_step_and_saves(signum, tmp_path, monkeypatch):
    format_report = reporting.report_line

    def format_and_terminate(report, *args):  # Signals arrive while the loop runs.
        signal.raise_signal(signum)
        return format_report(report, *args)

    monkeypatch.setattr(reporting, "report_line", format_and_terminate)
    previous = signal.getsignal(signum)
    code, stdout, stderr = _run(["--config=debug", f"--logdir={tmp_path}"])
    assert code == 128 + signum
    assert signal.getsignal(signum) is previous
    (run_dir,) = glob.glob(os.path.join(tmp_path, "*-debug*"))
    timestamp = os.path.basename(run_dir).split("-")[0]
    # Stopped before the step after the first report, at 128 env steps.
    assert stdout.splitlines()[2].startswith("train  env step       128")
    assert "Done" not in stdout
    assert "Interrupted at env step 128; checkpoint saved. Resume with: " in stderr
    assert f"--timestamp={timestamp}" in stderr
    assert os.path.isfile(os.path.join(run_dir, "checkpoints", "ckpt-128.index"))
    # The results are written on a stop too; no episode of 200 steps ended, so no curve.
    assert stdout.splitlines()[-1] == f"Policy (SavedModel): {run_dir}/policy"
    assert "warning: Learning curve not written: No mean_score summaries" in stderr


# Each eval env plays one 200-step episode: the evaluation's second call of 100 steps ends them.
@pytest.mark.parametrize("signalled_call, eval_calls, episodes", [(1, 1, 0), (2, 2, 2)])
def test_a_signal_during_an_evaluation_ends_it_after_that_call_and_saves(
    signalled_call, eval_calls, episodes, tmp_path, monkeypatch
):
    from agents.training.run import Run

    calls = []
    eval_call = Run.eval_call

    def eval_and_terminate(self, reset):
        calls.append(reset)
        if len(calls) == signalled_call:
            signal.raise_signal(signal.SIGTERM)
        return eval_call(self, reset)

    monkeypatch.setattr(Run, "eval_call", eval_and_terminate)
    code, stdout, stderr = _run(["--config=debug", f"--logdir={tmp_path}"])
    assert code == 128 + signal.SIGTERM
    assert len(calls) == eval_calls  # A signal in the first call cuts the evaluation there.
    (eval_line,) = [line for line in stdout.splitlines() if line.startswith(" eval")]
    assert eval_line.startswith(" eval  env step       128  score ")
    assert f"({episodes:3d} episodes, mode)" in eval_line
    # An evaluation that its last call completed keeps its score.
    assert ("interrupted by the stop" in eval_line) == (episodes == 0)
    assert "Interrupted at env step 128; checkpoint saved. Resume with: " in stderr
    (run_dir,) = glob.glob(os.path.join(tmp_path, "*-debug*"))
    assert os.path.isfile(os.path.join(run_dir, "checkpoints", "ckpt-128.index"))


@pytest.mark.slow
def test_ctrl_c_saves_a_checkpoint_and_exits_130(tmp_path):
    stderr_path = tmp_path / "stderr.txt"
    argv = ["--config=debug", f"--logdir={tmp_path / 'logs'}", "--set", "train_steps=1000000"]
    with open(stderr_path, "w") as errors, training_process(argv, errors) as process:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
    error = stderr_path.read_text()
    assert "Traceback" not in error
    assert "Resume with: python -m agents.scripts.train --config=debug" in error
    (run_dir,) = glob.glob(os.path.join(tmp_path, "logs", "*-debug*"))
    assert f"--timestamp={os.path.basename(run_dir).split('-')[0]}" in error
    assert glob.glob(os.path.join(run_dir, "checkpoints", "ckpt-*.index"))


def _tags(run_dir):
    """The summary tags in a run directory's event files."""
    from tensorboard.backend.event_processing import event_accumulator

    accumulator = event_accumulator.EventAccumulator(run_dir)
    accumulator.Reload()
    return set(accumulator.Tags()[event_accumulator.TENSORS])


def _text(run_dir, tag):
    """The text summaries of `tag` in a run directory's event files."""
    import tensorflow as tf
    from tensorboard.backend.event_processing import event_accumulator

    accumulator = event_accumulator.EventAccumulator(run_dir)
    accumulator.Reload()
    events = accumulator.Tensors(tag) if tag in accumulator.Tags()["tensors"] else []
    return [tf.make_ndarray(event.tensor_proto).item().decode() for event in events]
