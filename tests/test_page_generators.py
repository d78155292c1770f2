"""The results pages' generators: the newest sitting is shown, and its figures are computed
from the records (synthetic records here; the committed pages are checked in test_pages.py)."""

import json
import os

import pytest

from agents.multirun import aggregates
from benchmarks import common, sitting, speed_matrix, test_suite
from benchmarks.pages import (
    checks,
    claims,
    env_backends_page,
    exploration_ablations,
    exploration_page,
    exploration_runs,
    first_line_page,
    mujoco_page,
    native_page,
    readme_numbers,
    speed_matrix_page,
    speed_page,
    trees,
)


@pytest.fixture(autouse=True)
def _todays_tree(monkeypatch):
    """Synthetic records' commits count as HEAD's `agents/` tree: the words of an older one are
    tested in test_page_trees.py."""
    monkeypatch.setattr(trees, "git_age", lambda commit: trees.Age(commit, True, 0))


def _sitting(started):
    """The keys every record of one sitting shares (`common.append_record`)."""
    return dict(
        started=started, date=started[:16], commit="abc1234", machine="CPU, 2 cores", load=1.0
    )


def _mujoco(started, seed, score, task="hopper"):
    return dict(
        **_sitting(started),
        task=task,
        env=mujoco_page.REFERENCES[task].env,
        seed=seed,
        parallel=1,
        env_backend="python",
        env_steps=1_024_000,
        eval_mean=score,
        eval_std=10.0,
        seconds=100.0,
        steps_per_second=10_240.0,
        call_steps_per_second=20_000.0,
        rss_mb=900.0,
        curve=[[512_000.0, score / 2], [1_024_000.0, score]],
    )


def test_mujoco_page_shows_the_newest_sitting_of_each_task_with_its_mean_and_checks():
    old = [_mujoco("2026-01-01 10:00:00", seed, 100.0) for seed in range(3)]
    new = [
        _mujoco("2026-02-01 10:00:00", seed, score)
        for seed, score in enumerate((3000.0, 2600.0, 1000.0))
    ]
    text = mujoco_page.page(old + new)
    row = next(line for line in text.splitlines() if line.startswith("| Hopper-v5"))
    assert "3,000 ± 10 | 2,600 ± 10 | 1,000 ± 10 | **2,200** | 2,052 ± 314 | 2,530 |" in row
    assert "100 ± 10" not in text  # The older sitting is not shown.
    # Mean 2,200 < TF-Agents' 2,530, and seed 2's 1,000 < half of it (1,265): both checks fail.
    assert "- FAIL Hopper-v5 mean eval 2200.0 >= TF-Agents 2530" in text
    assert "- FAIL Hopper-v5 worst seed 1000.0 >= 1265" in text
    assert "2026-02-01 10:00 | CPU, 2 cores | commit abc1234" in text


def test_a_median_of_fewer_than_three_records_stops_the_page_naming_the_figure():
    import pytest

    from benchmarks.pages import claims

    two = [_mujoco("2026-02-01 10:00:00", seed, 3000.0) for seed in range(2)]
    with pytest.raises(claims.ClaimError, match="the records hold 2; measure more rounds"):
        mujoco_page.page(two)
    assert claims.median([5.0, 1.0, 3.0]) == 3.0


def test_mujoco_page_without_records_says_so():
    assert "No records yet." in mujoco_page.page([])


def test_mujoco_records_kept_are_the_newest_sitting_of_each_task():
    old = [_mujoco("2026-01-01 10:00:00", seed, 100.0) for seed in range(3)]
    ant = [_mujoco("2026-01-01 10:00:00", 0, 900.0, task="ant")]  # Not run since: kept.
    new = [_mujoco("2026-02-01 10:00:00", seed, 200.0) for seed in range(2)]
    assert mujoco_page.shown(old + ant + new) == new + ant
    # Records copied in from another checkout can follow newer ones: the start decides.
    assert mujoco_page.shown(new + ant + old) == new + ant


def test_exploration_return_level_counts_from_where_it_holds_to_the_end():
    # One early report of a few lucky episodes is not learning: the level must hold.
    lucky = [[1, 0.0], [2, 0.7], [3, 0.0], [4, 0.0]]
    assert exploration_runs.held_from(lucky) is None
    learned = [[1, 0.0], [2, 0.6], [3, 0.4], [4, 0.5], [5, 0.8]]
    assert exploration_runs.held_from(learned) == 4
    assert exploration_runs.held_from([[7, 0.5]]) == 7 and exploration_runs.held_from([]) is None


def _explored(task, arm, seed, success, **keys):
    record = dict(_sitting("2026-11-27 03:30:00"), task=task, arm=arm, seed=seed, env_id=task)
    record.update(train_steps=10, wall_seconds=1.0, curve=[[10, success]], discount=0.999)
    return dict(record, success_stochastic=success, success_mode=0.0, return_stochastic=0.5, **keys)


def _scored(task, arm, seed, sampled, mode, success_curve, overrides=()):
    """A run scoring `sampled` and `mode` on minigrid, with its training success curve."""
    record = _explored(task, arm, seed, sampled, overrides=list(overrides))
    return dict(record, success_mode=mode, success_curve=success_curve)


def test_exploration_page_names_each_tasks_policy_and_how_many_runs_shared_the_machine():
    old = dict(_explored("doorkey16", "rnd", 0, 0.95), started="2026-11-26 19:50:14")
    new = [
        _explored("keycorridor", arm, seed, success, network="recurrent_categorical", concurrent=2)
        for arm, seed, success in [("rnd", 0, 0.95), ("rnd", 1, 0.5), ("control", 0, 0.1)]
    ]
    lines = exploration_page.page([old, *new]).splitlines()
    rows = {line.split(" | ")[0]: line for line in lines if " to " in line}  # Sittings' rows.
    # Records from before the network was recorded ran network=auto: the MLP; concurrency unknown.
    assert "| - | MLP | 0.999 |" in rows["| doorkey16"]
    assert "| 2 | MLP + GRU | 0.999 |" in rows["| keycorridor"]
    # A GRU trained through time says over how many steps; one-step sequences say nothing.
    gru = dict(new[0], chunk_length=32)
    assert exploration_page.policy(gru) == "MLP + GRU (32-step sequences)"
    assert exploration_page.policy(dict(gru, chunk_length=1)) == "MLP + GRU"
    assert exploration_runs.solved(new, "keycorridor", "rnd", policy="sampled") == (1, 2)
    assert exploration_runs.solved(new, "keycorridor", "control", policy="sampled") == (0, 1)
    assert exploration_runs.solved(new, "keycorridor", "rnd") == (0, 2)  # The mode's: all 0.0.
    assert "| keycorridor | rnd | 0 of 2 | 1 of 2 |" in lines  # Both policies, mode first.


def test_exploration_sittings_of_one_library_share_a_task_and_a_rerun_seed_counts_twice(
    monkeypatch,
):
    trees = {"aaa1111": "tree1", "bbb2222": "tree1", "ccc3333": "tree0"}
    monkeypatch.setattr(common, "agents_tree", trees.get)

    def at(commit, started, seed, success):
        run = _explored("multiroom", "rnd", seed, success)
        return dict(run, commit=commit, started=started, date=started[:16])

    older = at("ccc3333", "2026-11-28 01:00:00", 4, 0.1)  # Other library code: left out.
    first = [at("aaa1111", "2026-11-29 01:00:00", seed, 0.5) for seed in (0, 1)]
    second = [at("bbb2222", "2026-11-30 01:00:00", seed, 0.9) for seed in (1, 2)]
    dirty = at("bbb2222-dirty", "2026-11-29 12:00:00", 3, 0.2)  # Uncommitted code: its own.
    runs = exploration_runs.named([older, *first, dirty, *second])
    kept = sorted((r["seed"], r["success_stochastic"]) for r in runs)
    assert kept == [(0, 0.5), (1, 0.5), (1, 0.9), (2, 0.9)]  # Seed 1's two runs, both.
    row = next(line for line in exploration_page.page(runs).splitlines() if " to 2026" in line)
    assert "| aaa1111, bbb2222 |" in row and "2026-11-29 01:00 to 2026-11-30 01:00" in row
    # A record whose commit this checkout does not know stays with its own sitting only.
    assert exploration_runs.named([*first, at("ddd4444", "2026-11-30 02:00:00", 3, 0.9)]) == [
        at("ddd4444", "2026-11-30 02:00:00", 3, 0.9)
    ]


def test_a_sittings_dates_run_from_its_first_runs_start_to_its_last_runs_end():
    run = dict(_explored("obstructedmaze", "noveld", 0, 0.0), date="2026-12-02 15:39")
    long = dict(run, wall_seconds=5_350.0, load=1.1)  # Started 14:09:50: 14:10 to the minute.
    row = next(line for line in exploration_page.page([long]).splitlines() if " 14:10 " in line)
    assert "| 2026-12-02 14:10 to 15:39 | 1.1 |" in row
    overnight = dict(run, seed=1, date="2026-12-03 00:20", wall_seconds=60.0, load=2.25)
    row = next(
        line for line in exploration_page.page([long, overnight]).splitlines() if " 14:10 " in line
    )
    assert "| 2026-12-02 14:10 to 2026-12-03 00:20 | 1.1-2.2 |" in row


def test_a_newer_benchmark_short_of_five_seeds_an_arm_is_under_way_beside_the_last_whole_one(
    monkeypatch,
):
    monkeypatch.setattr(common, "agents_tree", {"old1111": "tree0", "new2222": "tree1"}.get)

    def at(commit, started, arm, seed, mode):
        run = _explored("keycorridor_s4", arm, seed, 0.99)
        return dict(run, commit=commit, started=started, date=started[:16], success_mode=mode)

    old = [
        at("old1111", "2026-11-30 01:00:00", arm, seed, 0.5)
        for seed in range(5)
        for arm in ("rnd", "control", "noveld")
    ]
    new = [
        dict(at("new2222", "2026-12-01 01:00:00", "rnd", seed, mode), machine=machine)
        for seed, mode, machine in [(1, 0.92, "Intel, 2 cores"), (0, 0.95, "AMD, 2 cores")]
    ]
    # Two seeds of one arm at newer code: the whole benchmark keeps the tables.
    assert exploration_runs.named([*old, *new]) == old
    assert exploration_runs.shown_and_under_way([*old, *new])[1] == new
    lines = exploration_page.page([*old, *new]).splitlines()
    # Each seed in order, and each machine the seeds ran on.
    row = "| keycorridor_s4 | new2222 | AMD, 2 cores; Intel, 2 cores | MLP | rnd | 0, 1 | "
    assert f"{row}0.95, 0.92 | 0.99, 0.99 |" in lines
    assert "## Under way" in lines and not any("| new2222 |" in line for line in lines[:40])
    assert all(run in exploration_page.shown([*old, *new]) for run in [*old, *new])  # Kept.
    # Four seeds of each arm are still short; the fifth of each makes it whole, and it takes over.
    more = [
        at("new2222", "2026-12-01 05:00:00", arm, seed, 0.9)
        for seed in range(5)
        for arm in ("control", "noveld")
        if seed < 4
    ] + [at("new2222", "2026-12-01 05:00:00", "rnd", seed, 0.9) for seed in (2, 3)]
    assert exploration_runs.named([*old, *new, *more]) == old
    last = [at("new2222", "2026-12-01 09:00:00", arm, 4, 0.9) for arm in ("rnd", "control")]
    assert exploration_runs.named([*old, *new, *more, *last]) == old  # NovelD has four.
    done = [*new, *more, *last, at("new2222", "2026-12-01 09:00:00", "noveld", 4, 0.9)]
    assert sorted(map(id, exploration_runs.named([*old, *done]))) == sorted(map(id, done))
    assert exploration_runs.shown_and_under_way([*old, *done])[1] == []
    assert "## Under way" not in exploration_page.page([*old, *done])
    # Without a whole benchmark, the newest group is shown, as it always was, and nothing is
    # under way.
    assert exploration_runs.named([*old[:3], *new]) == new
    assert exploration_runs.shown_and_under_way([*old[:3], *new])[1] == []


def test_exploration_page_says_how_many_episodes_scored_each_seed():
    text = lambda runs: " ".join(exploration_page.page(runs).split())  # noqa: E731
    scored = [_explored("doorkey16", "rnd", seed, 0.9, episodes=500) for seed in range(2)]
    assert "500 episodes per seed" in text(scored)
    # A task of an older sitting scored with the earlier default.
    older = _explored("multiroom", "rnd", 0, 0.9, episodes=100)
    assert "100 or 500 episodes per seed" in text([*scored, older])


def _arm_runs(task, arm, successes, held=None):
    """Runs of one arm whose mode scores `successes`; each curve holds 0.5 from `held` (env
    steps; None: never) of a 100-step budget."""
    runs = []
    for seed, success in enumerate(successes):
        run = dict(_explored(task, arm, seed, success), success_mode=success, train_steps=100)
        run["curve"] = [[50, 0.0], [100, 0.0]] if held is None else [[held, 0.6], [100, 0.7]]
        runs.append(run)
    return runs


def test_exploration_aggregates_count_never_as_the_budget_and_order_arms_only_with_five_seeds(
    monkeypatch,
):
    control = _arm_runs("multiroom", "control", [0.0, 0.1, 0.0, 0.2, 0.05])
    rnd = _arm_runs("multiroom", "rnd", [0.95, 0.9, 0.97, 0.92, 0.99], held=20)
    assert exploration_runs.steps_to_solve(control[0], False) == 100  # Never held: the budget.
    assert exploration_runs.steps_to_solve(rnd[0], False) == 20
    lines = exploration_page.page(control + rnd).splitlines()
    (row,) = [line for line in lines if line.startswith("| multiroom | rnd | 5 (5) |")]
    # IQM of 5 seeds: the mean of the middle three (0.92, 0.95, 0.97) with its interval; every
    # RND seed beats every control seed, on success and on steps, in every resample.
    low, high = aggregates.bootstrap_ci([0.95, 0.9, 0.97, 0.92, 0.99], aggregates.iqm)
    assert 0.9 <= low < 0.95 < high <= 0.99
    always = "1.00 [1.00, 1.00]"
    assert row.split(" | ")[3:] == [
        f"0.95 [{low:.2f}, {high:.2f}]",
        "0.0 [0.0, 0.0]",
        "return 0.5 held",  # These records have no success-rate curve.
        always,
        f"{always} |",
    ]
    assert exploration_runs.orderings(control + rnd, "multiroom") == [
        ("rnd", "control", 1.0, (1.0, 1.0))
    ]
    monkeypatch.setattr(readme_numbers, "read", lambda name: control + rnd)
    line = " ".join(readme_numbers.exploration().split())
    mode = "final success of the mode (deterministic policy) over minigrid's episodes: "
    assert f"{mode}RND over control, P = 1.00 [1.00, 1.00]" in line
    # Every RND seed held the return from 20 env steps, no control seed ever did.
    sampled = "steps to solve of the sampled training policy (training return 0.5 held): "
    assert f"{sampled}RND before control, P = 1.00" in line
    assert "too few" not in line
    assert exploration_runs.orderings(control + rnd, "multiroom", "solved") == [
        ("rnd", "control", 1.0, (1.0, 1.0))
    ]
    # The same scores from four seeds each: no ordering is stated, and README says why.
    few = control[:4] + rnd[:4]
    assert exploration_runs.orderings(few, "multiroom") == []
    monkeypatch.setattr(readme_numbers, "read", lambda name: few)
    line = " ".join(readme_numbers.exploration().split())
    assert "4 runs each: " in line and "RND over" not in line
    assert "of 4 (fewer than 5 seeds an arm: not ordered)" in line
    # A long task run with one arm and one seed beside the whole task: the whole task's
    # orderings stand, and the one-arm task says why it has none.
    alone = _arm_runs("keycorridor_s5", "noveld", [0.93])
    monkeypatch.setattr(readme_numbers, "read", lambda name: control + rnd + alone)
    line = " ".join(readme_numbers.exploration().split())
    assert "1 to 5 runs an arm: " in line and "not ordered" not in line
    assert "RND over control, P = 1.00 [1.00, 1.00]" in line
    assert "NovelD 1 [1] of 1 (one arm: nothing to order)" in line
    # Its aggregate is its one value, with no interval (one seed resamples to itself).
    (row,) = [
        line
        for line in exploration_page.page(control + rnd + alone).splitlines()
        if line.startswith("| keycorridor_s5 | noveld | 1 (1) |")
    ]
    assert row.split(" | ")[3:5] == ["0.93 (one seed)", "0.0 (one seed)"]


def test_readme_names_every_machine_of_the_exploration_records_and_each_tasks_own(monkeypatch):
    amd = _arm_runs("multiroom", "rnd", [0.95] * 2)
    intel = [
        dict(run, machine="Intel Xeon (family 6 model 167), 2 cores", date="2026-12-02 05:52")
        for run in _arm_runs("keycorridor_s4", "rnd", [0.9] * 2)
    ]
    monkeypatch.setattr(readme_numbers, "read", lambda name: amd + intel)
    line = " ".join(readme_numbers.exploration().split())
    first = amd[0]["machine"].split(",")[0]
    assert f"to 2026-12-02, {first} and Intel Xeon (family 6 model 167)): " in line
    assert f"at 0.0M env steps on {first}, " in line
    assert "at 0.0M env steps on Intel Xeon (family 6 model 167), " in line
    # One machine: said once, not per task.
    monkeypatch.setattr(readme_numbers, "read", lambda name: amd)
    line = " ".join(readme_numbers.exploration().split())
    assert f"(2026-11-27, {first}): " in line and "env steps on" not in line


def test_steps_to_solve_count_where_the_training_success_rate_held_0_9_where_runs_report_it():
    runs = _arm_runs("multiroom", "control", [0.9] * 2, held=20)  # Return 0.5 held from 20.
    runs[0]["success_curve"] = [[20, 0.95], [40, 0.85], [60, 0.9], [100, 0.97]]
    runs[1]["success_curve"] = [[20, 0.5], [100, 0.89]]  # Never held: the budget.
    assert exploration_runs.solved_by_success(runs)
    assert [exploration_runs.steps_to_solve(r, True) for r in runs] == [60, 100]
    assert [exploration_runs.steps_to_solve(r, False) for r in runs] == [20, 20]
    lines = exploration_page.page(runs).splitlines()
    (row,) = [line for line in lines if line.startswith("| multiroom | control | 2 (2) |")]
    assert row.split(" | ")[5] == "success 0.9 held"
    # Per seed: return 0.5 held from 20, success 0.9 held from 60.
    assert any(line.startswith("| multiroom | control | 0 | 100 | 1 | 20 | 60 |") for line in lines)
    # One run without a success curve (an older record): the task falls back on the return.
    del runs[1]["success_curve"]
    assert not exploration_runs.solved_by_success(runs)
    (row,) = [
        line for line in exploration_page.page(runs).splitlines() if "| control | 2 (2) |" in line
    ]
    assert row.split(" | ")[5] == "return 0.5 held"


def test_runs_with_set_overrides_are_ablations_kept_out_of_the_arms_counts(monkeypatch):
    arms = [dict(_explored("multiroom", "rnd", seed, 0.95), success_mode=0.95) for seed in range(3)]
    tried = _explored("multiroom", "rnd", 3, 0.95, overrides=["int_coef_schedule=linear"])
    tried.update(success_mode=0.95, started="2026-11-28 01:00:00")
    assert exploration_runs.named([*arms, tried]) == arms
    assert exploration_ablations.ablations([*arms, tried]) == [tried]
    monkeypatch.setattr(readme_numbers, "read", lambda name: [*arms, tried])
    line = readme_numbers.exploration()
    assert "RND 3 [3] of 3" in line and "3 runs each" in line
    monkeypatch.setattr(readme_numbers, "read", lambda name: arms[:2])
    assert "RND 2 [2] of 2" in readme_numbers.exploration()


def test_ablation_table_sets_each_ablated_seed_beside_its_named_run_of_the_same_library(
    monkeypatch,
):
    trees = {"aaa1111": "tree1", "bbb2222": "tree1", "ccc3333": "tree0", "ddd4444": "tree9"}
    monkeypatch.setattr(common, "agents_tree", trees.get)

    def run(commit, seed, mode, overrides=(), started="2026-11-29 01:00:00"):
        success = [[2_000_000, 0.5], [9_000_000, 0.95], [19_000_000, 0.97]]
        returns = [[1_000_000, 0.0], [5_000_000, 0.6], [19_000_000, 0.7]]
        record = _scored("multiroom_n6", "rnd", seed, 0.95, mode, success, overrides)
        return dict(record, commit=commit, started=started, curve=returns)

    named = [run("aaa1111", seed, 0.85) for seed in range(3)]
    gru = ["network=recurrent_categorical"]
    tried = [run("bbb2222", 0, 1.0, gru, "2026-11-30 01:00:00")]
    other = [run("ddd4444", 1, 0.5, ["entropy_coef=0.0"], "2026-11-28 01:00:00")]
    lines = exploration_page.page([*named, *other, *tried]).splitlines()
    rows = [line for line in lines if line.startswith("| multiroom_n6 | ") and "M |" in line]
    # The named run of the ablated seed only, at the same agents/ tree, above the ablation's.
    assert rows == [
        "| multiroom_n6 | aaa1111 | CPU, 2 cores | rnd | as named | 0 | 0.85 | 0.95 | 9.0M "
        "| 5.0M |",
        "| multiroom_n6 | bbb2222 | CPU, 2 cores | rnd | `network=recurrent_categorical` | 0 "
        "| 1.00 | 0.95 | 9.0M | 5.0M |",
    ]
    # A newer sitting of other library code takes over the arms' tables; the ablation's rows
    # still stand beside the runs of their own library code, and the superseded group's line
    # stands for the rest: the page keeps every record.
    newer = run("ccc3333", 0, 0.9, started="2026-12-01 01:00:00")
    records = [*named, *tried, newer]
    assert exploration_runs.named(records) == [newer]
    assert rows[0] in exploration_page.page(records).splitlines()
    tabled = exploration_page.tabled(records)
    assert named[0] in tabled and named[1] not in tabled
    assert exploration_page.shown(records) == records
    # Other library code gives no baseline row.
    monkeypatch.setattr(common, "agents_tree", {"aaa1111": "tree1", "bbb2222": "tree2"}.get)
    lines = exploration_page.page([*named, *tried]).splitlines()
    assert not any("| as named |" in line for line in lines)


def test_the_newest_sitting_by_its_start_takes_the_arms_tables_wherever_the_file_holds_it(
    monkeypatch,
):
    monkeypatch.setattr(common, "agents_tree", {"old1111": "tree0", "new2222": "tree1"}.get)
    new = [
        dict(_explored("multiroom_n6", "rnd", seed, 0.99), commit="new2222", started=started)
        for seed, started in [(0, "2026-11-30 06:35:07"), (1, "2026-11-30 07:09:03")]
    ]
    old = [
        dict(_explored("multiroom_n6", arm, 0, 0.5), commit="old1111", started="2026-11-30 02:39")
        for arm in ("rnd", "control")
    ]
    # Older records copied in after newer ones: the newer sitting still holds the tables.
    assert exploration_runs.named([*new, *old]) == new
    assert exploration_runs.named([*old, *new]) == new
    # A seed run twice in one library: both runs, in the order they started, wherever the
    # file has them.
    again = dict(new[0], started="2026-11-30 09:00:00", success_mode=0.5)
    assert exploration_runs.named([again, *new, *old]) == [new[0], new[1], again]
    tried = [dict(r, overrides=["entropy_coef=0"]) for r in (*new, *old)]
    assert exploration_ablations.ablations([*tried[:2], *tried[2:]]) == tried[:2]


def test_an_ablated_arm_of_five_seeds_is_aggregated_against_the_control_and_its_arm_as_named(
    monkeypatch,
):
    trees = {"aaa1111": "tree1", "bbb2222": "tree1", "ccc3333": "tree3"}
    monkeypatch.setattr(common, "agents_tree", trees.get)

    def run(arm, seed, mode, held, overrides=(), commit="aaa1111"):
        success = [[held, 0.95], [10e6, 0.97]] if held else [[5e6, 0.0], [10e6, 0.0]]
        record = _scored("keycorridor_s4", arm, seed, mode, mode, success, overrides)
        started = "2026-12-01 21:00:00" if overrides else record["started"]
        return dict(record, commit=commit, started=started, train_steps=10e6)

    control = [run("control", seed, 0.0, None) for seed in range(5)]
    noveld = [run("noveld", seed, 0.75, 8e6) for seed in range(5)]
    weaker = ["int_coef=0.25"]
    tried = [run("noveld", seed, 0.95, 2e6 + seed, weaker, "bbb2222") for seed in range(5)]
    few = [run("rnd", seed, 0.9, 3e6, ["int_coef=2"], "bbb2222") for seed in range(4)]
    records = [*control, *noveld, *tried, *few]
    assert exploration_ablations.named_alike(tried, records) == control + noveld
    lines = exploration_page.page(records).splitlines()
    rows = [line for line in lines if line.startswith("| keycorridor_s4 | ") and "IQM" not in line]
    (row,) = [line for line in rows if line.count(" | ") > 10]  # Four RND seeds: no aggregate.
    always = "1.00 [1.00, 1.00]"
    # Every ablated seed beats every control seed and every seed as named, on success (0.95
    # against 0.0 and 0.75) and on steps (2M against the budget of 10M and against 8M).
    assert row.split(" | ")[1:] == [
        "noveld",
        "`int_coef=0.25`",
        "5 of 5",
        "0.95 [0.95, 0.95]",
        "2.0 [2.0, 2.0]",
        "success 0.9 held",
        "0 of 5",
        "0 of 5",
        always,
        always,
        always,
        f"{always} |",
    ]
    # A newer sitting of the task takes over the arms' tables; the page keeps every run the
    # aggregated ablation is measured against.
    newer = dict(run("control", 0, 0.0, None, commit="ccc3333"), started="2026-12-02 01:00:00")
    kept = exploration_page.shown([*records, newer])
    assert all(r in kept for r in control + noveld) and newer in kept
    # Against named runs of other library code, no comparison is drawn.
    monkeypatch.setattr(common, "agents_tree", {"aaa1111": "tree1", "bbb2222": "tree2"}.get)
    (row,) = [
        line
        for line in exploration_page.page(records).splitlines()
        if line.startswith("| keycorridor_s4 | noveld | `int_coef=0.25` | 5 of 5 |")
    ]
    assert row.endswith("| 0 of 0 | 0 of 0 | - | - | - | - |")


def _native(kind, started, config, seed, seconds, native=True):
    return dict(
        **_sitting(started),
        kind=kind,
        config=config,
        seed=seed,
        native=native,
        seconds=seconds,
        env="CartPole-v1",
        env_steps=491_520,
        mean=500.0,
        std=0.0,
    )


def test_native_page_keeps_each_kind_of_sitting_apart_and_splits_first_runs_from_later_ones():
    records = [
        _native("native", "2026-01-01 10:00:00", "cartpole_native", 0, 99.0),
        _native("native", "2026-02-01 10:00:00", "cartpole_native", 0, 14.6),
        _native("native", "2026-02-01 10:00:00", "cartpole_native", 1, 10.3),
        _native("native", "2026-02-01 10:00:00", "cartpole_native", 2, 11.8),
        _native("gym", "2026-02-02 10:00:00", "cartpole_native", 0, 10.0),
        _native("gym", "2026-02-02 10:00:00", "cartpole_native", 0, 25.0, native=False),
    ]
    text = native_page.page(records)
    assert "| cartpole_native | 14.6 | 10.3-11.8 | 500.0 | 500.0 | 500.0 |" in text
    assert "99.0" not in text
    assert "the gymnasium runs take 2.5x (cartpole_native) to 2.5x" in text
    assert "## Steady state" not in text  # No steady sitting recorded.


def test_the_suite_record_reads_pytests_counts_and_slowest_tests():
    output = (
        "============ slowest 30 durations ============\n"
        "61.23s call     tests/ppo/test_learning.py::test_pendulum_learns\n"
        "3.01s setup    tests/x.py::test_y[a-b]\n"
        "== 956 passed, 4 skipped, 6 warnings in 1529.01s (0:25:29) ==\n"
    )
    assert test_suite.counts(output) == {"passed": 956, "skipped": 4, "warnings": 6}
    assert test_suite.slowest(output) == [
        [61.23, "call", "tests/ppo/test_learning.py::test_pendulum_learns"],
        [3.01, "setup", "tests/x.py::test_y[a-b]"],
    ]


def test_the_suite_record_sums_each_files_tests_costliest_first():
    durations = [
        [5.0, "call", "tests/a.py::test_one"],
        [4.0, "call", "tests/b.py::test_two[x]"],
        [2.5, "setup", "tests/a.py::test_one"],
        [3.0, "call", "tests/b.py::test_three"],
    ]
    assert list(test_suite.by_file(durations).items()) == [("tests/a.py", 7.5), ("tests/b.py", 7.0)]


def test_the_suite_record_names_the_tests_over_the_slow_line_that_lack_the_mark():
    durations = [
        [3.0, "call", "tests/a.py::test_one"],  # 3.0 + 1.5 of setup: over the line of 4 s.
        [1.5, "setup", "tests/a.py::test_one"],
        [9.0, "call", "tests/b.py::test_two[x]"],  # Marked.
        [3.9, "call", "tests/b.py::test_three"],  # Under the line.
        [4.0, "call", "tests/c.py::test_four"],  # On it.
    ]
    assert test_suite.SLOW_SECONDS == 4.0
    assert test_suite.unmarked_slow(durations, {"tests/b.py::test_two[x]"}) == [
        [4.5, "tests/a.py::test_one"],
        [4.0, "tests/c.py::test_four"],
    ]


def test_readme_numbers_say_which_benchmark_has_no_records_and_keep_the_others(monkeypatch):
    real = readme_numbers.read
    monkeypatch.setattr(
        readme_numbers, "read", lambda name: [] if name == "exploration" else real(name)
    )
    bullets = readme_numbers.block()
    assert "- **Exploration on native MiniGrid**: not measured (no records in" in bullets
    assert "- **MuJoCo** (" in bullets and "- **Exploration from pixels** (" in bullets
    monkeypatch.setattr(readme_numbers, "read", lambda name: [])
    assert readme_numbers.block().count(": not measured (no records in") == 10


def test_a_cpu_named_by_brand_only_is_told_apart_by_family_and_model(tmp_path):
    block = "processor\t: {n}\ncpu family\t: 25\nmodel\t\t: {m}\nmodel name\t: {name}\n\n"
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(block.format(n=0, m=1, name="AMD EPYC") + block.format(n=1, m=9, name="x"))
    assert common.machine(str(cpuinfo)).startswith("AMD EPYC (family 25 model 1), ")
    cpuinfo.write_text(block.format(n=0, m=106, name="Intel(R) Xeon(R) Platinum 8375C CPU"))
    assert common.machine(str(cpuinfo)).startswith("Intel(R) Xeon(R) Platinum 8375C CPU, ")


def test_sittings_name_each_files_commits_machines_and_dates_and_count_them_all():
    one = dict(_sitting("2026-11-27 07:00:00"), commit="aaa1111")
    later = dict(_sitting("2026-11-27 09:30:00"), commit="bbb2222")
    older = dict(
        commit="ccc3333",
        date="2026-11-26 06:22",
        machine_line="2026-11-26 06:22 | 2 CPUs (AMD EPYC), load 0.6, 1.2, 1.4 | Python 3.11",
    )
    lines = checks.sittings(
        {"a.jsonl": [one, later], "b.jsonl": [older], "c.jsonl": [], "d.jsonl": [dict(one)]}
    )
    assert lines == [
        "a.jsonl: 2 records, commit aaa1111, bbb2222; CPU, 2 cores; "
        "2026-11-27 07:00 to 2026-11-27 09:30",
        "b.jsonl: 1 records, commit ccc3333; 2 CPUs (AMD EPYC); 2026-11-26 06:22",
        "c.jsonl: no records",
        "d.jsonl: 1 records, commit aaa1111; CPU, 2 cores; 2026-11-27 07:00",
        "In all: 3 commit(s), 2 machine line(s).",
    ]


def test_speed_matrix_against_another_checkout_alternates_which_runs_first(tmp_path, monkeypatch):
    calls = []

    def measure(family, seconds, checkout, timeout):
        calls.append((family, checkout))
        fast = checkout == str(tmp_path)
        return dict(steps_per_second=200.0 if fast else 100.0, calls=3, first_call_s=1.0)

    monkeypatch.setattr(speed_matrix, "measure", measure)
    records = tmp_path / "records.jsonl"
    families = ["pendulum", "cartpole", "recurrent"]
    argv = ["--families", *families, "--against", str(tmp_path), "--records", str(records)]
    assert speed_matrix.main(argv) == 0
    here = os.path.dirname(os.path.dirname(speed_matrix.__file__))
    first = [checkout for _, checkout in calls[::2]]
    assert first == [here, str(tmp_path), here]
    assert [family for family, _ in calls] == [f for f in families for _ in range(2)]
    written = [json.loads(line) for line in records.read_text().splitlines()]
    # Each record still says which checkout it measured, whatever the order.
    assert [r["against"] for r in written] == [False, True, True, False, False, True]
    assert all((r["steps_per_second"] == 200.0) == r["against"] for r in written)


def test_speed_matrix_page_pairs_a_family_measured_twice_and_names_another_machine():
    def row(started, family, speed, against, machine="CPU, 2 cores"):
        return dict(
            _sitting(started), family=family, steps_per_second=speed, against=against,
            calls=3, first_call_s=1.0, seconds=20.0, machine=machine,
            commit="old0000" if against else "abc1234",
        )  # fmt: skip

    whole = [row("2026-12-01 10:00:00", f, 100.0, False) for f in speed_matrix.FAMILIES]
    other = "slow CPU, 2 cores"
    partial = [  # Two pairs of one family, each in its own order, then one of another.
        row("2026-12-02 10:00:00", "minigrid_native_noveld", 80.0, False, other),
        row("2026-12-02 10:00:00", "minigrid_native_noveld", 100.0, True, other),
        row("2026-12-02 10:00:00", "minigrid_native_noveld", 50.0, True, other),
        row("2026-12-02 10:00:00", "minigrid_native_noveld", 60.0, False, other),
        row("2026-12-02 10:00:00", "minigrid_native_rnd", 30.0, False, other),
    ]
    text = speed_matrix_page.page(whole + partial)
    assert (
        "- 2026-12-02 10:00, slow CPU, 2 cores, commit abc1234, calls timed for 20 s: "
        "`minigrid_native_noveld` 80 (0.80x old0000), `minigrid_native_noveld` 60 (1.20x "
        "old0000), `minigrid_native_rnd` 30." in text
    )
    same = [dict(record, machine="CPU, 2 cores") for record in partial]
    assert "- 2026-12-02 10:00, commit abc1234" in speed_matrix_page.page(whole + same)


def test_first_line_section_judges_each_config_of_the_newest_sitting_against_a_minute():
    def row(started, config, first, trained):
        return dict(
            _sitting(started), config=config, first_line_s=first, first_train_line_s=trained,
            timeout_s=600.0,
        )  # fmt: skip

    old = row("2026-12-01 10:00:00", "keycorridor_noveld", 9.0, 1049.0)
    new = [row("2026-12-02 10:00:00", "keycorridor_noveld", 9.3, 55.8)]
    new.append(row("2026-12-02 10:00:00", "multiroom_noveld", 9.8, 60.2))
    new.append(row("2026-12-02 10:00:00", "doorkey_native", None, None))
    text = first_line_page.section([old, *new])
    assert "| `keycorridor_noveld` | 9.3 | 55.8 | yes |" in text
    assert "| `multiroom_noveld` | 9.8 | 60.2 | no |" in text
    assert "| `doorkey_native` | - | none in 600 | no |" in text
    assert "1049" not in text and "2026-12-02 10:00 | CPU, 2 cores | commit abc1234" in text
    assert first_line_page.section([]) == ""


def test_a_sitting_plans_the_steps_not_at_the_commit_and_machine_shortest_first():
    here = dict(_sitting("2026-11-27 07:00:00"), commit="aaa1111")
    long = [dict(here, date="2026-11-27 07:30"), dict(here, commit="bbb2222")]
    whole = dict(here, selection="all")
    quick = dict(here, selection="not slow", seconds=540.0)
    suites = [dict(whole, seconds=1200.0, commit="old0000"), dict(whole, seconds=1260.0), quick]
    shown = {
        "learning": [here, dict(here)],  # Done.
        "mujoco": long,  # One record from another commit: measured again.
        "rnd": [dict(here, machine="other CPU, 2 cores")],
        "test_suite": suites,  # README's span: only the newest of each kind must be at it.
        "api_memory": [dict(here, date="2026-11-27 07:04", commit="old0000")],
    }
    steps = sitting.plan(shown, "aaa1111", "CPU, 2 cores")
    names = [step.records for step, _ in steps]
    assert "learning" not in names and "test_suite" not in names
    minutes = dict((step.records, took) for step, took in steps)
    assert minutes["mujoco"] == 31 and minutes["api_memory"] == 5 and minutes["rnd"] == 1
    assert minutes["env_throughput"] is None  # No records: how long it takes is unknown.
    assert names.index("rnd") < names.index("api_memory") < names.index("mujoco")
    assert names.index("mujoco") < names.index("env_throughput")
    for other in (
        [suites[1], suites[0], quick],  # The newest whole suite from another commit.
        [*suites[:2], dict(quick, commit="old0000")],  # The quick one from another.
        suites[:2],  # The quick one never measured.
    ):
        shown["test_suite"] = other
        steps = sitting.plan(shown, "aaa1111", "CPU, 2 cores")
        assert "test_suite" in [step.records for step, _ in steps]
    # How long it takes: the newest run of each kind, whole (1,260 s) and quick (540 s).
    shown["test_suite"] = [*suites[:2], dict(quick, commit="old0000")]
    assert (
        dict((step.records, took) for step, took in sitting.plan(shown, "aaa1111", "CPU, 2 cores"))[
            "test_suite"
        ]
        == 30
    )


def _clock(index: int) -> str:
    """HH:MM, 10 * index + 9 minutes after 07:00 (the last record of a sitting begun then)."""
    hours, minutes = divmod(10 * index + 9, 60)
    return f"{7 + hours:02d}:{minutes:02d}"


def test_a_sitting_measures_a_step_part_by_part_and_resumes_at_the_parts_not_done():
    step = next(s for s in sitting.STEPS if s.parts)
    here = dict(_sitting("2026-11-27 07:00:00"), commit="aaa1111")
    names, runs = step.parts.names, step.parts.runs

    def part(name, count, **changes):
        return [dict(here, date="2026-11-27 07:59", **changes, **{step.parts.key: name})] * count

    def planned(records):
        found = sitting.plan({step.records: records}, "aaa1111", "CPU, 2 cores")
        return next(((s, took) for s, took in found if s.records == step.records), None)

    assert planned([r for name in names for r in part(name, runs)]) is None  # All done.
    # The first part done, the second at another commit, the third stopped half way.
    records = part(names[0], runs) + part(names[1], runs, commit="old0000") + part(names[2], 2)
    narrowed, minutes = planned(records)
    assert sitting.parts_left(step, records, "aaa1111", "CPU, 2 cores") == names[1:]
    for command, full in zip(narrowed.commands, step.commands, strict=True):
        assert command == (full[0], step.parts.flag, *names[1:], *full[1:])
    assert minutes == 60 * len(names[1:]) / len(names)  # Its last sitting's share.
    found = sitting.plan({step.records: records}, "aaa1111", "CPU, 2 cores", [names[2]])
    (only,) = [s for s, _ in found if s.records == step.records]
    assert only.commands[0][:3] == (step.commands[0][0], step.parts.flag, names[2])
    found = sitting.plan({step.records: records}, "aaa1111", "CPU, 2 cores", [names[0]])
    assert step.records not in [s.records for s, _ in found]  # The part asked for is done.
    whole, _ = planned(part(names[0], runs, commit="old0000"))
    assert whole.commands == step.commands  # Nothing done: the step as its page shows it.
    # Parts measured in sittings of their own: each part's time is its own sitting's.
    apart = [
        dict(record, started=f"2026-11-2{index} 07:00:00", date=f"2026-11-2{index} {_clock(index)}")
        for index, name in enumerate(names)
        for record in part(name, runs, commit="old0000")
    ]
    _, minutes = planned(apart)
    assert minutes == sum(10 * index + 10 for index in range(len(names)))


def test_collecting_a_checkouts_sitting_adds_only_its_records_at_that_commit(tmp_path, monkeypatch):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for root in (ours, theirs):
        (root / "benchmarks" / "results").mkdir(parents=True)
    kept = json.dumps(dict(_sitting("2026-11-27 07:00:00"), commit="aaa1111"))
    pruned = json.dumps(dict(_sitting("2026-11-26 07:00:00"), commit="old0000"))
    new = json.dumps(dict(_sitting("2026-11-27 09:00:00"), commit="aaa1111"))
    (ours / "benchmarks" / "results" / "rnd.jsonl").write_text(kept + "\n")
    (theirs / "benchmarks" / "results" / "rnd.jsonl").write_text(f"{pruned}\n{kept}\n{new}\n")
    monkeypatch.setattr(sitting, "RESULTS", str(ours / "benchmarks" / "results"))
    lines = sitting.collect(str(theirs), "aaa1111")
    assert lines == [f"rnd.jsonl: 1 new records from {theirs}"]
    assert (ours / "benchmarks" / "results" / "rnd.jsonl").read_text() == f"{kept}\n{new}\n"
    assert sitting.collect(str(theirs), "aaa1111") == []  # Nothing twice.


def test_each_sitting_step_runs_the_commands_its_page_shows():
    root = os.path.dirname(os.path.dirname(sitting.__file__))
    for step in sitting.STEPS:
        with open(os.path.join(root, step.page), encoding="utf-8") as file:
            text = " ".join(file.read().replace("\\\n", " ").split())
        for command in step.commands:
            line = sitting.shell(command).replace("{sb3}", "/path/to/sb3/bin/python")
            assert line in text, (step.page, line)


def test_env_backends_page_names_the_cpus_family_and_model_where_records_have_them():
    line = "2026-11-28 06:22 | 2 CPUs (AMD EPYC), load 0.6, 1.2, 1.4 | Python 3.11.7"
    base = dict(config="cartpole", run="2026-11-28 06:22", started="2026-11-28 06:22:10")
    base.update(seconds=6.0, commit="aaa1111")
    records = [
        dict(base, round=n, backend=backend, steps_per_second=speed + 10 * (n - 1),
             machine_line=line, load=0.5)
        for n in range(3)  # A median of three rounds, as the page says.
        for backend, speed in (("python", 100.0), ("envpool", 150.0))
    ]  # fmt: skip
    old = env_backends_page.page(records)
    assert "| 2 CPUs (AMD EPYC) | Python 3.11.7 | commit aaa1111 |" in old
    new = env_backends_page.page(
        [dict(r, machine="AMD EPYC (family 25 model 1), 2 cores") for r in records]
    )
    assert "| AMD EPYC (family 25 model 1), 2 cores | Python 3.11.7 | commit aaa1111 |" in new
    assert "150 (1.50x)" in new
    # An older sitting copied in after it does not take the config's rows.
    older = [dict(r, started="2026-11-27 01:00:00", commit="ccc3333") for r in records]
    assert env_backends_page.latest([*records, *older]) == records


def test_a_sitting_runs_each_step_in_the_checkout_reports_a_failure_and_goes_on(
    tmp_path, monkeypatch, capsys
):
    import subprocess
    import sys

    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    (ours / "benchmarks" / "results").mkdir(parents=True)
    (theirs / "benchmarks" / "results").mkdir(parents=True)
    (theirs / "benchmarks" / "__init__.py").write_text("")
    (theirs / "benchmarks" / "bench.py").write_text(
        "import json, os, sys\n"
        "if sys.argv[1] == 'fail': sys.exit(3)\n"
        "seen = sorted(os.listdir('benchmarks/results'))\n"
        "kept = open('benchmarks/results/committed.jsonl').read().splitlines()\n"
        "with open('benchmarks/results/committed.jsonl', 'a') as f:\n"
        "    f.write('appended\\n')\n"
        "with open(f'benchmarks/results/{sys.argv[1]}.jsonl', 'a') as f:\n"
        "    f.write(json.dumps(dict(commit=sys.argv[2], seen=seen, kept=kept)) + '\\n')\n"
    )
    # A records file the commit holds: a step appends to it, the next must find it as committed.
    (theirs / "benchmarks" / "results" / "committed.jsonl").write_text("as committed\n")
    git = ["git", "-C", str(theirs), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "bench"], check=True)
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    head = head.stdout.strip()
    steps = (
        sitting.Step("rnd", "page.md", (("benchmarks.bench", "rnd", head),)),
        # A command exiting non-zero (a crash, or a benchmark's own checks failing): the step's
        # other commands still run and its records are kept.
        sitting.Step(
            "native",
            "page.md",
            (("benchmarks.bench", "fail", head), ("benchmarks.bench", "native", head)),
        ),
        sitting.Step("learning", "page.md", (("benchmarks.bench", "learning", head),)),
    )
    monkeypatch.setattr(sitting, "STEPS", steps)
    monkeypatch.setattr(sitting, "RESULTS", str(ours / "benchmarks" / "results"))
    monkeypatch.setattr(sitting, "LOGS", str(ours / "benchmarks" / "out" / "sitting"))
    monkeypatch.setattr(sitting, "_shown", lambda: {})
    pages_ran = tmp_path / "pages_ran"
    monkeypatch.setattr(sitting, "PAGES", [sys.executable, "-c", f"open({str(pages_ran)!r}, 'a')"])
    assert sitting.main(["--checkout", str(theirs)]) == 1
    out, err = capsys.readouterr()
    assert f"3 step(s) left at {head}" in out
    assert "[2/3]" in out and "native exit 3 (see " in out and "learning done" in out
    assert err.strip().endswith("failed: native")
    for name in ("rnd", "native", "learning"):
        written = (ours / "benchmarks" / "results" / f"{name}.jsonl").read_text()
        # Each step found the checkout's records as committed: the earlier steps' collected
        # records removed, the committed file without their lines.
        seen = ["committed.jsonl"]
        assert json.loads(written) == dict(commit=head, seen=seen, kept=["as committed"])
    assert pages_ran.exists()
    (theirs / "benchmarks" / "bench.py").write_text("changed = True\n")
    try:
        sitting.main(["--checkout", str(theirs), "--plan"])
    except SystemExit as stop:
        assert stop.code == 2
    assert f"is at {head}-dirty: commit its code first" in capsys.readouterr().err


def _vs_sb3(round_, side, setting, seconds, task="pendulum"):
    key = "threads" if side == "sb3" else "cache"
    return dict(
        **_sitting("2026-11-29 13:00:00"), task=task, round=round_, budget=100_000, side=side,
        env_steps=100_352, seconds=seconds, eval_mean=-200.0, eval_std=5.0, **{key: setting}
    )  # fmt: skip


def test_speed_page_takes_sb3s_faster_thread_setting_and_our_cold_and_warm_medians():
    records = []
    for round_ in range(3):
        records += [
            _vs_sb3(round_, "sb3", 1, 30.0 + round_),
            _vs_sb3(round_, "ours", "cold", 20.0 + 2 * round_),
            _vs_sb3(round_, "sb3", 2, 24.0 + round_),  # Faster: medians 25 against 31.
            _vs_sb3(round_, "ours", "warm", 10.0 + round_),
        ]
    wall = speed_page.walls(records)["pendulum"]
    assert wall == dict(sb3=25.0, threads=2, cold=22.0, warm=11.0)
    page = speed_page.page(records)
    assert "SB3 takes 2.27x our warm and 1.14x our cold wall time" in page
    assert "| pendulum | 2 | SB3, 2 torch threads | 100,352 | 26.0 | -200.0 ± 5.0 |" in page
    del records[0]["threads"]  # A record of before the settings were recorded.
    with pytest.raises(claims.ClaimError, match="round 0 .* has no 'threads'"):
        speed_page.walls(records)


def test_a_benchmarks_child_environment_puts_the_checkout_first_and_drops_what_it_is_told(
    monkeypatch,
):
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_persistent_cache_directory=/elsewhere")
    monkeypatch.setenv("PYTHONPATH", "/theirs")
    env = common.checkout_env("/checkout", without=("TF_XLA_FLAGS",), XDG_CACHE_HOME="/round")
    assert "TF_XLA_FLAGS" not in env and env["XDG_CACHE_HOME"] == "/round"
    assert env["PYTHONPATH"].split(os.pathsep) == ["/checkout", "/theirs"]
    assert common.checkout_env()["TF_XLA_FLAGS"] == "--tf_xla_persistent_cache_directory=/elsewhere"


def test_a_sitting_records_how_warm_xlas_cache_was_and_the_learning_page_splits_memory_by_it(
    tmp_path, monkeypatch
):
    from agents.runtime import compile_cache
    from benchmarks.pages import learning_page

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert common.new_sitting()["compile_cache_entries"] == 0  # No cache folder yet: cold.
    os.makedirs(compile_cache.cache_directory())
    for name in ("a.pb", "b.pb", "notes.txt"):
        (tmp_path / compile_cache.cache_directory() / name).write_text("x")
    assert common.new_sitting()["compile_cache_entries"] == common.cached_programs() == 2
    runs = [
        {"rss_mb": 985.0, "compiled_programs": 12},
        {"rss_mb": 825.0, "compiled_programs": 0},
        {"rss_mb": 824.0, "compiled_programs": 0},
    ]
    assert learning_page.memory_by_compiling(runs) == (
        " (1 run(s) that compiled programs into XLA's cache: up to 985 MB; 2 that read them "
        "from it: up to 825 MB)"
    )
    assert "every run read" in learning_page.memory_by_compiling(runs[1:])
    assert learning_page.memory_by_compiling([{"rss_mb": 1.0}, *runs]) == ""  # Older records.


def test_the_peer_side_by_side_shows_the_newest_sitting_with_both_sides_and_the_ratio():
    def side(started, name, rate):
        return dict(
            _sitting(started), side=name, task="doorkey16", env_id="MiniGrid-DoorKey-16x16-v0",
            seed=0, steps=262_144, seconds=262_144 / rate, steps_per_second=rate, final_return=0.0,
        )  # fmt: skip

    then, now = "2026-11-01 10:00:00", "2026-11-29 10:00:00"
    old = [side(then, "peer", 500.0), side(then, "ours-cold", 900.0), side(then, "ours-warm", 901)]
    new = [side(now, "peer", 1000.0), side(now, "ours-cold", 25e3), side(now, "ours-warm", 5e4)]
    lines = exploration_page.page([_explored("doorkey16", "rnd", 0, 0.9)], old + new).splitlines()
    assert "| ours, cold | MiniGrid-DoorKey-16x16-v0 | 262,144 | 10.5 | 25,000 | 0.000 |" in lines
    # One run a side (the older sitting's are not counted), on a machine below its 2 cores' load.
    text = (
        "One run a side, a single sample each: ours trains 50.0x the peer's env steps per second "
        "warm, 25.0x cold, whole processes."
    )
    assert text in " ".join(lines)
    assert not any("900" in line for line in lines)  # The older sitting is not shown.
    busy = [dict(run, load=4.5) for run in new]
    said = " ".join(exploration_page.page([_explored("doorkey16", "rnd", 0, 0.9)], busy).split())
    assert "One run a side, a single sample each, on a machine busier than its cores (load" in said
    # A sitting without both sides has no section.
    assert "Speed beside" not in exploration_page.page(
        [_explored("doorkey16", "rnd", 0, 0.9)], new[:1]
    )


def test_speed_matrix_page_keeps_the_whole_sitting_and_lists_a_later_partial_one():
    from benchmarks.pages import speed_matrix_page

    def record(started, family, rate, against=False, commit="aaa1111"):
        return dict(
            started=started, family=family, steps_per_second=rate, calls=3, first_call_s=1.0,
            load=1.0, machine="CPU, 2 cores", commit=commit, seconds=4.0, against=against,
        )  # fmt: skip

    families = ["pendulum", "cartpole", "recurrent", "mpi2"]
    whole = [record("2026-12-01 10:00:00", family, 100.0) for family in families]
    rerun = [
        record("2026-12-01 11:00:00", "cartpole", 150.0),
        record("2026-12-01 11:00:00", "cartpole", 100.0, against=True, commit="bbb2222"),
    ]
    page = speed_matrix_page.page(whole + rerun)
    table = [line for line in page.splitlines() if line.startswith("| ") and "---" not in line]
    assert [line.split(" | ")[0][2:] for line in table[1:]] == families  # The whole sitting.
    assert "2026-12-01 10:00 | CPU, 2 cores | commit aaa1111 |" in page
    assert (
        "- 2026-12-01 11:00, commit aaa1111, calls timed for 4 s: `cartpole` 150 (1.50x bbb2222)."
        in page
    )
    # A later sitting of half the families or more is whole: it makes the table.
    later = [record("2026-12-01 12:00:00", family, 50.0) for family in families[:2]]
    assert "| pendulum | 50 |" in speed_matrix_page.page(whole + rerun + later)
