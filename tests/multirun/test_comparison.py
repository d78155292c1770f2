"""Runs compared: grouped, their final scores tabled and their curves drawn over seeds."""

import json
import os
import pathlib

import numpy as np
import pytest

from agents.config import files, schema
from agents.config.errors import UsageError
from agents.multirun import aggregates, comparison


def _run(root, name, seed, scores, env="Pendulum-v1", steps=(100, 200, 300)):
    run_dir = os.path.join(root, f"20260101T00000{seed}-{name}-s{seed}")
    os.makedirs(run_dir)
    config = dict(schema.defaults(), env=env, train_steps=steps[len(scores) - 1])
    files.save_config(config, run_dir, name, seed=seed)
    with open(os.path.join(run_dir, "metrics.jsonl"), "w") as handle:
        for index, (step, score) in enumerate(zip(steps, scores)):
            handle.write(json.dumps({"phase": "train", "env_steps": step, "score": -1.0}) + "\n")
            record = {"phase": "eval", "env_steps": step, "score": score, "wall_time": index}
            handle.write(json.dumps(record) + "\n")
    return run_dir


def test_runs_are_grouped_by_config_and_their_final_scores_tabled(tmp_path):
    for seed, last in enumerate([-200.0, -150.0, -900.0, -170.0]):
        _run(tmp_path, "pendulum", seed, [-1000.0, -500.0, last])
    _run(tmp_path, "cartpole", 0, [10.0, 200.0, 500.0], env="CartPole-v1")
    runs = [comparison.read_run(path) for path in comparison.find_runs([f"{tmp_path}/*"])]
    groups = comparison.group_runs(runs)
    assert list(groups) == ["cartpole", "pendulum"] and len(groups["pendulum"]) == 4
    assert sorted(run.seed for run in groups["pendulum"]) == [0, 1, 2, 3]
    rows = {row["group"]: row for row in comparison.table(groups, reps=1000)}
    finals = [-200.0, -150.0, -900.0, -170.0]
    assert rows["pendulum"]["mean"] == pytest.approx(np.mean(finals))
    assert rows["pendulum"]["iqm"] == pytest.approx(-185.0)  # Mean of -200 and -170.
    assert rows["pendulum"]["iqm_ci"] == aggregates.bootstrap_ci(finals, aggregates.iqm, 1000)
    assert rows["cartpole"]["runs"] == 1 and rows["cartpole"]["mean_ci"] == (500.0, 500.0)
    text = comparison.format_table(list(rows.values()))
    assert "pendulum" in text and "-355.00 [" in text
    by_env = comparison.group_runs([comparison.read_run(run.run_dir, "env") for run in runs])
    assert set(by_env) == {"env=Pendulum-v1", "env=CartPole-v1"}


def test_a_run_below_its_budget_is_left_out_of_the_finals_and_listed(tmp_path):
    for seed, last in enumerate([-200.0, -150.0]):
        _run(tmp_path, "pendulum", seed, [-1000.0, last])
    still = _run(tmp_path, "pendulum", 2, [-1000.0, -300.0, -100.0])
    with open(os.path.join(still, "config.yaml")) as handle:
        text = handle.read()
    with open(os.path.join(still, "config.yaml"), "w") as handle:
        handle.write(text.replace("train_steps: 300", "train_steps: 1000"))
    groups = comparison.group_runs(
        [comparison.read_run(path) for path in comparison.find_runs([f"{tmp_path}/*"])]
    )
    (row,) = comparison.table(groups, reps=100)
    assert row["runs"] == 2 and row["mean"] == pytest.approx(-175.0)
    text = comparison.format_table([row])
    assert text.splitlines()[-2:] == [
        "not finished (still training or stopped; left out of the table):",
        f"  {still}: env step 300 of 1000",
    ]


def test_plots_are_written_as_png_or_svg_and_bad_input_is_one_line(tmp_path):
    for seed in range(3):
        _run(tmp_path, "pendulum", seed, [-1000.0 + seed, -500.0, -200.0 - seed])
    groups = comparison.group_runs(
        [comparison.read_run(path) for path in comparison.find_runs([f"{tmp_path}/*"])]
    )
    svg = comparison.plot(groups, str(tmp_path / "out" / "curves.svg"))
    assert pathlib.Path(svg).read_text().lstrip().startswith("<?xml")
    png = comparison.plot(groups, str(tmp_path / "curves.png"), x="wall_time")
    assert pathlib.Path(png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(UsageError, match="give a .png or .svg path"):
        comparison.plot(groups, str(tmp_path / "curves.jpg"))
    with pytest.raises(UsageError, match="Unknown x axis 'time'"):
        comparison.plot(groups, str(tmp_path / "c.png"), x="time")
    with pytest.raises(UsageError, match="names no run directory"):
        comparison.find_runs([str(tmp_path / "nothing*")])
    with pytest.raises(UsageError, match="Unknown config key 'colour'"):
        comparison.read_run(groups["pendulum"][0].run_dir, "colour")


def test_runs_without_a_common_range_are_drawn_each_not_refused(tmp_path):
    """Against wall time, runs that evaluated once each at different times share no range: no
    mean exists, so each run is drawn, and the legend says so."""
    import matplotlib

    for seed in range(2):
        run_dir = _run(tmp_path, "pendulum", seed, [-300.0 - seed], steps=(100,))
        with open(os.path.join(run_dir, "metrics.jsonl"), "w") as handle:
            record = {"phase": "eval", "env_steps": 100, "score": -300.0, "wall_time": 1.0 + seed}
            handle.write(json.dumps(record) + "\n")
    groups = comparison.group_runs(
        [comparison.read_run(path) for path in comparison.find_runs([f"{tmp_path}/*"])]
    )
    with pytest.raises(ValueError, match="share no range"):
        aggregates.band([(run.wall_time, run.scores) for run in groups["pendulum"]])
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # Text as text, to be read here.
        svg = comparison.plot(groups, str(tmp_path / "curves.svg"), x="wall_time")
    text = pathlib.Path(svg).read_text()
    assert "pendulum (2 runs without a common range: each run)" in text
    assert text.count("pendulum (") == 1  # One legend entry for the group.
