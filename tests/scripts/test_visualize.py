"""Tests for the visualize script: restore a trained run and render its policy."""

import os

import imageio.v2 as imageio
import pytest

from agents.config import files
from agents.scripts import configs, visualize
from agents.training.loop import phases
from agents.training.run import Run


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    run_dir = str(tmp_path_factory.mktemp("run"))
    config = configs.debug()
    files.save_config(config, run_dir, "debug")
    session = Run(config, run_dir)
    try:
        list(phases(session))
    finally:
        session.close()
    return run_dir


@pytest.mark.slow
def test_writes_one_video_per_episode_and_prints_returns(trained_run, tmp_path, capsys):
    outdir = str(tmp_path / "videos")
    argv = ["--run_dir", trained_run, "--outdir", outdir, "--num_episodes", "2"]
    assert visualize.main(argv) == 0
    run = os.path.basename(trained_run)
    assert sorted(os.listdir(outdir)) == [f"{run}-episode-000.mp4", f"{run}-episode-001.mp4"]
    reader = imageio.get_reader(os.path.join(outdir, f"{run}-episode-000.mp4"))
    assert reader.get_meta_data()["fps"] == 30  # Pendulum's render_fps.
    frames = [frame for frame in reader]  # noqa: C416 (list() asks len(), which is inf here)
    assert len(frames) == 201 and frames[0].ndim == 3  # Reset frame + 200 Pendulum steps.
    output = capsys.readouterr().out
    assert output.count("Episode") == 2 and "Restored" in output
    assert "Mean return over 2 episodes: " in output
    # A second call writes new files beside the first ones instead of overwriting them.
    argv = ["--run_dir", trained_run, "--outdir", outdir, "--num_episodes", "1", "--fps", "10"]
    assert visualize.main(argv) == 0
    assert f"{run}-episode-000-2.mp4" in os.listdir(outdir)
    assert (
        imageio.get_reader(os.path.join(outdir, f"{run}-episode-000-2.mp4")).get_meta_data()["fps"]
        == 10
    )


def test_eval_only_prints_mean_and_std_without_videos(trained_run, tmp_path, capsys):
    argv = ["--run_dir", trained_run, "--eval_only", "--num_episodes", "2"]
    assert visualize.main(argv) == 0
    output = capsys.readouterr().out
    assert output.count("Episode") == 2 and "->" not in output
    assert "Mean return over 2 episodes: " in output and " +- " in output
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_deterministic_policy_gives_same_return_for_same_seed(trained_run, tmp_path):
    args = visualize.parse_args(["--run_dir", trained_run, "--outdir", str(tmp_path)])
    args.num_episodes = 1
    assert visualize.visualize(args) == visualize.visualize(args)


def test_clear_error_without_checkpoint(tmp_path, capsys):
    files.save_config(configs.debug(), str(tmp_path), "debug")
    assert visualize.main(["--run_dir", str(tmp_path), "--outdir", str(tmp_path / "v")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: No checkpoint in") and "Traceback" not in error


def test_clear_error_for_directory_that_is_no_run(tmp_path, capsys):
    assert visualize.main(["--run_dir", str(tmp_path), "--outdir", str(tmp_path / "v")]) == 2
    assert "No config.yaml" in capsys.readouterr().err


def _copy_with_env(trained_run, tmp_path, env_id):
    import shutil

    import yaml

    copy = str(tmp_path / "run")
    shutil.copytree(trained_run, copy)
    path = os.path.join(copy, "config.yaml")
    with open(path) as handle:
        saved = yaml.safe_load(handle)
    saved["config"]["env"] = env_id
    with open(path, "w") as handle:
        yaml.safe_dump(saved, handle)
    return copy


@pytest.mark.parametrize(
    "env_id, message",
    [
        ("agents_api/my_env-v0", "an environment given to agents.train as a Python callable"),
        ("NoSuchEnv-v0", "Unknown environment 'NoSuchEnv-v0'"),
    ],
)
def test_an_environment_that_cannot_be_made_here_is_one_line(
    trained_run, tmp_path, capsys, env_id, message
):
    run = _copy_with_env(trained_run, tmp_path, env_id)
    assert visualize.main(["--run_dir", run, "--outdir", str(tmp_path / "v")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and message in error and "Traceback" not in error


def test_mujocos_rendering_error_names_mujoco_gl(trained_run, tmp_path, capsys, monkeypatch):
    fatal = type("FatalError", (Exception,), {"__module__": "mujoco"})

    def no_opengl(*args, **kwargs):
        raise fatal("gladLoadGL error\nmore lines")

    monkeypatch.setattr(visualize, "run_episode", no_opengl)
    assert visualize.main(["--run_dir", trained_run, "--outdir", str(tmp_path / "v")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: Cannot render Pendulum-v1: gladLoadGL error. Without a display")
    assert "MUJOCO_GL=egl" in line and "MUJOCO_GL=osmesa" in line


def test_batch_ppos_logdir_flag_names_the_run_directory(trained_run, tmp_path, capsys):
    outdir = str(tmp_path / "videos")
    argv = ["--logdir", trained_run, "--outdir", outdir, "--num_episodes", "1"]
    assert visualize.main(argv) == 0
    run = os.path.basename(trained_run)
    assert os.listdir(outdir) == [f"{run}-episode-000.mp4"]
    assert "Episode 0: return" in capsys.readouterr().out
