"""Every exploration run stays on the record: a rerun seed counts as a second run, superseded
groups keep a line on the page, and an ordering says which policy it scores."""

import pytest

from agents.multirun import aggregates
from benchmarks import common
from benchmarks.pages import (
    exploration_aggregates,
    exploration_orderings,
    exploration_page,
    exploration_runs,
    exploration_superseded,
    readme_numbers,
    trees,
)

MODE = "final success of the mode (deterministic policy) over minigrid's episodes: "
SAMPLED = "steps to solve of the sampled training policy (training success 0.9 held): "


@pytest.fixture(autouse=True)
def _todays_tree(monkeypatch):
    """Synthetic commits: old1111 and new2222 are two `agents/` trees, HEAD's the newer."""
    monkeypatch.setattr(trees, "git_age", lambda commit: trees.Age(commit, True, 0))
    monkeypatch.setattr(
        common, "agents_tree", {"old1111": "t0", "mid3333": "t2", "new2222": "t1"}.get
    )


def _run(arm, seed, mode, held=None, commit="new2222", started="2026-12-01 01:00:00", **keys):
    """A keycorridor run whose mode scores `mode` (the sampled policy scores 0.95) and whose
    training success rate holds 0.9 from `held` env steps (None: never) of a 100-step budget."""
    success = [[50, 0.0], [100, 0.0]] if held is None else [[held, 0.95], [100, 0.97]]
    record = dict(
        started=started, date=started[:16], commit=commit, machine="CPU, 2 cores", load=1.0,
        task="keycorridor", arm=arm, seed=seed, env_id="keycorridor", train_steps=100,
        wall_seconds=1.0, discount=0.999, episodes=500, curve=[[100, 0.5]],
        success_curve=success, success_mode=mode, success_stochastic=0.95,
        return_stochastic=0.5,
    )  # fmt: skip
    return dict(record, **keys)


def _arms(modes, commit="new2222", started="2026-12-01 01:00:00", **keys):
    """Seeds 0-4 of each arm in `modes` (arm -> five mode scores), every one held from 20."""
    return [
        _run(arm, seed, mode, 20, commit, started, **keys)
        for arm, scores in modes.items()
        for seed, mode in enumerate(scores)
    ]


def _readme(monkeypatch, records):
    monkeypatch.setattr(readme_numbers, "read", lambda name: records)
    return " ".join(readme_numbers.exploration().split())


def test_a_rerun_seed_is_a_second_run_and_both_count(monkeypatch):
    first = _arms({"control": [0.0, 0.0, 0.0, 1.0, 1.0], "noveld": [1.0] * 5})
    again = _run("noveld", 3, 0.0, 20, started="2026-12-02 01:00:00", machine="AMD, 2 cores")
    records = [*first, again]
    runs = exploration_runs.named(records)
    assert again in runs and len(runs) == 11  # Neither run of seed 3 replaces the other.
    assert exploration_runs.solved(runs, "keycorridor", "noveld") == (5, 6)
    # By hand: of 25 pairs NovelD wins 15 (against the three 0.0s) and ties 10 (1.0 against
    # 1.0): P = 20/25; the second run of seed 3 (0.0) adds 5 pairs, 3 ties: P = 21.5/30.
    low, high = aggregates.improvement_ci([1.0] * 5, [0.0, 0.0, 0.0, 1.0, 1.0])
    assert low > 0.5  # Over the first runs alone, NovelD is ordered over the control...
    words = exploration_orderings.ordering_words(first, "keycorridor")
    assert f"{MODE}NovelD over control, P = 0.80 [{low:.2f}, {high:.2f}]" in words
    low, high = aggregates.improvement_ci([1.0] * 5 + [0.0], [0.0, 0.0, 0.0, 1.0, 1.0])
    assert low <= 0.5  # ...over every run counted, it is not, and README says so.
    line = _readme(monkeypatch, records)
    assert ": NovelD over control" not in line
    assert (
        f"{MODE}no ordering of NovelD and control holds, "
        f"P(NovelD over control) = 0.72 [{low:.2f}, {high:.2f}]"
    ) in line
    assert (
        "NovelD 5 [6] of 6 runs of 5 seeds" in line and "counting every run on the record" in line
    )
    page = exploration_page.page(records)
    assert "The aggregates count every run on the record: 11 runs of 10 seeds" in " ".join(
        page.split()
    )
    (row,) = [
        line for line in page.splitlines() if line.startswith("| keycorridor | noveld | 6 (5)")
    ]
    assert row.split(" | ")[2] == "6 (5)"
    assert row.split(" | ")[6] == f"{21.5 / 30:.2f} [{low:.2f}, {high:.2f}]"
    # Both runs of seed 3 are rows of the runs' table, each with its own score.
    seed_rows = [
        line for line in page.splitlines() if line.startswith("| keycorridor | noveld | 3 |")
    ]
    assert [row.split(" | ")[8] for row in seed_rows] == ["1.00", "0.00"]


def test_a_superseded_group_keeps_one_line_with_what_replaced_it():
    old = _arms(
        {"rnd": [1.0] * 5, "control": [0.0] * 5, "noveld": [0.5] * 5},
        "old1111",
        "2026-11-20 01:00:00",
    )
    mid = [_run("rnd", 0, 0.8, 20, "mid3333", "2026-11-25 01:00:00")]  # Short of seeds.
    new = _arms(
        {"rnd": [1.0] * 5, "control": [0.0] * 5, "noveld": [1.0] * 5},
        network="recurrent_categorical",
    )
    tried = _run("rnd", 0, 0.9, 20, "old1111", "2026-11-21 01:00:00", overrides=["int_coef=2"])
    later = _run("rnd", 0, 0.9, 20, "new2222", "2026-12-03 01:00:00", overrides=["int_coef=3"])
    records = [*old, *mid, *new, tried, later]
    assert exploration_runs.named(records) == new
    assert [(len(g), by[0]["commit"]) for g, by in exploration_superseded.superseded(records)] == [
        (1, "new2222"),
        (15, "new2222"),
    ]
    lines = exploration_page.page(records).splitlines()
    assert "## Superseded groups" in lines
    (row,) = [line for line in lines if line.startswith("| keycorridor | old1111 | 2026-11-20 |")]
    cells = row.split(" | ")
    assert cells[2:6] == [
        "2026-11-20",
        "MLP",
        "RND 0-4; control 0-4; NovelD 0-4",
        "RND 5 [5] of 5, control 0 [5] of 5, NovelD 0 [5] of 5",
    ]
    assert f"{MODE}RND over control, P = 1.00 [1.00, 1.00]" in cells[6]
    assert cells[7] == "new2222: other `agents/` code; policy MLP to MLP + GRU |"
    (row,) = [line for line in lines if line.startswith("| keycorridor | mid3333 |")]
    assert "| RND 0 | RND 0 [1] of 1 | one arm: nothing to order |" in row
    assert row.endswith("policy MLP to MLP + GRU; this one short of 5 seeds an arm |")
    # The older ablation, replaced by the newer one in the ablations' table, keeps a line.
    (row,) = [line for line in lines if line.startswith("| keycorridor | old1111 | 2026-11-21")]
    assert "| RND `int_coef=2` 0 | RND 1 [1] of 1 |" in row
    assert row.endswith("| the ablations at new2222 |")
    # Every record is on the page, in the tables or on its group's line: none is pruned.
    assert exploration_page.shown(records) == records
    assert tried not in exploration_page.tabled(records)


def test_an_ordering_says_which_policy_holds_it(monkeypatch):
    # The DoorKey case: NovelD's sampled training policy holds 0.9 from 20 env steps, the
    # control's never; by the mode neither reaches the goal.
    control = [_run("control", seed, 0.0) for seed in range(5)]
    noveld = [_run("noveld", seed, 0.0, held=20) for seed in range(5)]
    line = _readme(monkeypatch, control + noveld)
    assert f"{SAMPLED}NovelD before control, P = 1.00 [1.00, 1.00]" in line
    assert (
        f"{MODE}no ordering of NovelD and control holds, P(NovelD over control) = 0.50 [0.50, 0.50]"
    ) in line
    assert "NovelD 0 [5] of 5" in line  # The mode solves none; the sampled policy all five.
    # The page names the steps to solve as the sampled training policy's.
    page = exploration_page.page(control + noveld)
    assert "| steps to solve, sampled training policy (M env steps), IQM [95% CI] |" in page


@pytest.mark.parametrize(
    ("seeds", "words"),
    [([0, 1, 2, 3, 4], "0-4"), ([0, 1, 2, 3, 3, 4], "0-4, 3 twice"), ([0, 2], "0, 2"),
     ([1, 2], "1, 2"), ([4], "4"), ([0, 0, 0], "0, 0 three times")],
)  # fmt: skip
def test_seed_lists_name_ranges_and_reruns(seeds, words):
    assert exploration_superseded.seed_list(seeds) == words


def test_the_episodic_count_and_e3b_arms_are_tabled_and_ordered_beside_the_core_arms():
    records = _arms(
        {
            "rnd": [1.0] * 5,
            "control": [0.0] * 5,
            "noveld": [1.0] * 5,
            "count": [1.0] * 5,
            "e3b": [0.0, 0.0, 1.0, 1.0, 1.0],
        }
    )
    assert exploration_runs.whole(records)
    assert not exploration_runs.whole([r for r in records if r["seed"] < 4 or r["arm"] != "e3b"])
    page = exploration_page.page(records)
    assert "| keycorridor | count | 5 of 5 |" in page and "| keycorridor | e3b | 3 of 5 |" in page
    pairs = {
        (better, other): p
        for better, other, p, _ in exploration_runs.improvements(records, "keycorridor")
    }
    assert pairs[("count", "control")] == 1.0 and pairs[("e3b", "control")] == 0.8


def test_wall_time_to_solve_is_the_runs_wall_at_its_mean_rate_and_never_outweighs_half():
    # 600 s for 100 env steps: a run held from 20 steps solved at 2 minutes, from 50 at 5.
    runs = [
        _run("count", 0, 1.0, 20, wall_seconds=600.0, load=1.5),
        _run("count", 1, 1.0, 50, wall_seconds=600.0, load=2.5),
        _run("count", 2, 0.0, None, wall_seconds=600.0, load=2.0),
        _run("control", 0, 0.0, None, wall_seconds=300.0),
        _run("control", 1, 0.0, 50, wall_seconds=300.0),
    ]
    assert exploration_runs.minutes_to_solve(runs[0], True) == pytest.approx(2.0)
    assert exploration_runs.minutes_to_solve(runs[2], True) is None
    # By the return (records without a success rate): the curve holds 0.5 from step 100.
    assert exploration_runs.minutes_to_solve(runs[0], False) == pytest.approx(10.0)
    rows = [line for line in exploration_aggregates.wall_lines(runs) if "| keycorridor |" in line]
    # The median of 2, 5 and never is 5; of never and 2.5 (half the runs unsolved), never.
    assert rows == [
        "| keycorridor | control | 2 | 1 | 0 | never | 2.5 | 1.0 |",
        "| keycorridor | count | 3 | 2 | 0 | 5.0 | 2.0-5.0 | 1.5-2.5 |",
    ]
