"""Scoring exploration's shown runs again from their saved policies."""

import pytest

from benchmarks import common, exploration
from benchmarks import exploration_rescore as rescore
from benchmarks.pages import exploration_page


def _record(started, task, arm, seed, success):
    return dict(
        started=started,
        date=started[:16],
        commit="abc1234",
        machine="CPU, 2 cores",
        load=1.0,
        task=task,
        arm=arm,
        seed=seed,
        env_id=f"MiniGrid-{task}",
        config=exploration.config_name(task, arm),
        episodes=100,
        discount=0.999,
        train_steps=10,
        wall_seconds=1.0,
        curve=[[10, 0.5]],
        success_stochastic=success,
        success_mode=success,
        return_stochastic=0.5,
        return_mode=0.5,
    )


def test_the_shown_runs_of_the_task_are_scored_again_and_nothing_else(tmp_path, monkeypatch):
    old = _record("2026-01-01 10:00:00", "keycorridor", "rnd", 0, 0.1)
    new = [
        _record("2026-02-01 10:00:00", "keycorridor", arm, 0, 0.88) for arm in ("rnd", "control")
    ]
    other = _record("2026-02-01 10:00:00", "doorkey16", "rnd", 0, 0.95)
    for record in new:
        name = f"20260201T100000-{record['config']}-s0"
        (tmp_path / "keycorridor" / record["arm"] / name).mkdir(parents=True)
    played = []

    def score(run_dir, env_id, episodes):
        played.append((run_dir, env_id, episodes))
        return dict(
            success_stochastic=0.91, success_mode=0.92, return_stochastic=0.8, return_mode=0.81
        )

    monkeypatch.setattr(common, "score_on_minigrid", score)
    result = rescore.rescore([old, *new, other], "keycorridor", str(tmp_path), 500)
    assert (
        result[0] == old and result[3] == other
    )  # An older sitting and another task: as they were.
    assert [p[0].split("/")[-1] for p in played] == [
        "20260201T100000-keycorridor_rnd-s0",
        "20260201T100000-keycorridor-s0",  # The control's directory, not the RND arm's.
    ]
    assert {p[2] for p in played} == {500}
    for before, after in zip(new, result[1:3], strict=True):
        assert after["success_stochastic"] == 0.91 and after["episodes"] == 500
        assert after["curve"] == before["curve"] and after["commit"] == before["commit"]
        assert set(after["rescored"]) == {"date", "commit", "machine"}
    text = " ".join(exploration_page.page(result).split())
    assert "MiniGrid-keycorridor: the scores of its 2 runs were taken again" in text
    assert "over 500 episodes each" in text
    assert "100 or 500 episodes per seed" in text  # DoorKey's still over 100.


def test_a_run_directory_that_is_missing_or_ambiguous_is_named(tmp_path):
    record = _record("2026-02-01 10:00:00", "keycorridor", "rnd", 1, 0.9)
    with pytest.raises(SystemExit, match="0 run directories match .*keycorridor_rnd-s1; need"):
        rescore.run_dir(str(tmp_path), record)
    # Another sitting's run of the same config and seed (a day later) is not this record's.
    for stamp in ("20260201T100000", "20260201T100500", "20260202T100000"):
        (tmp_path / "keycorridor" / "rnd" / f"{stamp}-keycorridor_rnd-s1").mkdir(parents=True)
    record = dict(record, date="2026-02-01 10:30")  # Scored at 10:30: both 10:00 and 10:05 fit.
    with pytest.raises(SystemExit, match="2 run directories match"):
        rescore.run_dir(str(tmp_path), record)
    (tmp_path / "keycorridor" / "rnd" / "20260201T100500-keycorridor_rnd-s1").rmdir()
    found = rescore.run_dir(str(tmp_path), record)
    assert found.endswith("20260201T100000-keycorridor_rnd-s1")


def test_scoring_seeds_the_sampled_actions_as_well_as_the_episodes(monkeypatch):
    import agents

    seeds = []
    monkeypatch.setattr(agents, "load_policy", lambda run_dir, seed=None: seeds.append(seed))

    def evaluate(policy, make, episodes, seed, deterministic, **kwargs):
        seeds.append(seed)
        return type("Evaluation", (), dict(success_rate=0.5, mean=0.25))

    monkeypatch.setattr(agents, "evaluate", evaluate)
    scores = common.score_on_minigrid("run", "MiniGrid-Empty-5x5-v0", 10, seed=7)
    # Unseeded samples gave a policy scored twice two sampled scores (0.94 and 0.96).
    assert seeds == [7, 7, 7] and scores["success_stochastic"] == 0.5


def test_each_native_minigrid_bank_is_named_once_and_python_envs_none():
    configs = ["keycorridor", "keycorridor_rnd", "doorkey16_noveld", "pendulum"]
    banks = exploration.layout_banks(configs, [])
    assert banks == [("MiniGrid-KeyCorridorS3R3-v0", 2**20), ("MiniGrid-DoorKey-16x16-v0", 2**20)]
    assert exploration.layout_banks(["keycorridor"], ["layout_bank=64"]) == [
        ("MiniGrid-KeyCorridorS3R3-v0", 64)
    ]
    assert exploration.layout_banks(["keycorridor"], ["native_env=False"]) == []
