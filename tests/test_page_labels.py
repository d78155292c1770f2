"""A figure's label says what its records hold: compiling, the compile cache, how many runs,
how near a threshold, and which configs have no record (synthetic records)."""

from benchmarks.pages import (
    claims,
    minigrid_native_page,
    native_page,
    readme_configs,
    readme_numbers,
    readme_timings,
    trees,
)


def test_compiling_included_is_said_only_where_every_run_compiled():
    assert claims.compiling([{"compiled_programs": 2}, {"compiled_programs": 1}]) == (
        "compiling included"
    )
    mixed = claims.compiling([{"compiled_programs": 1}, *[{"compiled_programs": 0}] * 9])
    assert mixed == (
        "1 of the 10 runs compiled XLA programs, the others read theirs from the compile cache"
    )
    assert claims.compiling([{"compiled_programs": 0}] * 3) == (
        "every run read its XLA programs from the compile cache"
    )
    assert "not recorded" in claims.compiling([{"compiled_programs": 1}, {}])


def test_the_compile_cache_is_cold_only_where_every_record_started_from_an_empty_one():
    assert claims.cache([{"compile_cache_entries": 0}] * 2) == "a cold compile cache"
    assert claims.cache([{"compile_cache_entries": 131}]) == "a warm compile cache of 131 programs"
    assert claims.cache([{"compile_cache_entries": 3}, {"compile_cache_entries": 9}]) == (
        "a warm compile cache of 3-9 programs"
    )
    assert claims.cache([{"compile_cache_entries": 0}, {"compile_cache_entries": 5}]) == (
        "a cold compile cache in 1 of 2 runs, a warm one in the others"
    )
    assert claims.cache([{}]) == "compile cache not recorded"
    # README's suite figures: warm where the record says so, nothing for records without the count.
    assert readme_timings.cache_label([{"compile_cache_entries": 131}]) == (
        ", with a warm compile cache of 131 programs"
    )
    assert readme_timings.cache_label([{"compile_cache_entries": 0}]) == (
        ", with a cold compile cache"
    )
    assert readme_timings.cache_label([{}]) == ""


def test_a_figure_near_its_threshold_says_by_how_much_it_passes_or_misses():
    assert claims.margin(-199.948, -200.0) == " (passes -200 by 0.05)"
    assert claims.margin(-200.5, -200.0) == " (misses -200 by 0.50)"
    assert claims.margin(-150.0, -200.0) == ""  # Far past it: nothing to add.
    assert claims.margin(-260.0, -200.0) == ""
    assert claims.margin(696.0, 700.0, higher=False) == " (passes 700 by 4.00)"
    assert claims.margin(0.0, 0.0) == " (passes 0 by 0.00)"


def _learning(seed, compiled, evaluation=-199.9):
    return dict(
        commit="aaa1111",
        date="2026-11-30 00:13",
        machine="CPU, 2 cores",
        task="pendulum",
        seed=seed,
        started="2026-11-30 00:13:11",
        eval_mean=evaluation,
        env_steps=99_328,
        steps_per_second=15_000.0,
        call_steps_per_second=21_000.0,
        compiled_programs=compiled,
        checks=[],
    )


def test_readme_throughput_says_compiling_only_for_runs_that_compiled(monkeypatch):
    runs = [_learning(0, 1), _learning(1, 0), _learning(2, 0)]
    monkeypatch.setattr(readme_numbers, "read", lambda name: runs)
    text = readme_numbers.throughput()
    assert "compiling included" not in text
    assert "(evaluation included; 1 of the 3 runs compiled XLA programs, the others read" in text
    monkeypatch.setattr(readme_numbers, "read", lambda name: [_learning(s, 1) for s in range(3)])
    assert "(evaluation included; compiling included)" in readme_numbers.throughput()


def test_readme_learning_says_a_median_passes_its_target_by_a_hair(monkeypatch):
    runs = [_learning(s, 0, e) for s, e in enumerate([-180.0, -199.95, -250.0])]
    monkeypatch.setattr(readme_numbers, "read", lambda name: runs)
    assert "Pendulum-v1 median -199.9 (passes -200 by 0.05), worst -250.0" in (
        readme_numbers.learning()
    )
    runs = [_learning(s, 0, e) for s, e in enumerate([-150.0, -160.0, -250.0])]
    monkeypatch.setattr(readme_numbers, "read", lambda name: runs)
    assert "Pendulum-v1 median -160.0, worst" in readme_numbers.learning()


def test_readme_first_command_timing_is_the_training_command_on_its_machine_and_runs():
    row = dict(_learning(0, 1), seconds=10.5, env_steps=100_352, machine="Fast CPU, 2 cores")
    text = readme_timings.train_timing([row, dict(row, seconds=12.4)])
    assert text.startswith("the training command alone, 100,352 env steps: 10.5-12.4 s")
    assert "with an empty compile cache, 2 runs on one machine, 2026-11-30, Fast CPU" in text
    assert "10.5 s from command to exit with an empty compile cache, one run" in (
        readme_timings.train_timing([row])
    )


def test_single_samples_and_loaded_machines_are_said_as_such():
    sides = [
        {"side": side, "load": load, "machine": "CPU, 2 cores"}
        for side, load in (("peer", 5.2), ("ours-cold", 4.0), ("ours-warm", 3.3))
    ]
    assert claims.runs_a_side(sides) == "one run a side, a single sample each"
    assert claims.runs_a_side(sides * 3) == "3 runs a side"
    assert claims.busy(sides) == ", on a machine busier than its cores (load 3.3-5.2 on 2 cores)"
    assert claims.busy([dict(s, load=1.5) for s in sides]) == ""
    record = {"calls": 6, "seconds": 4.0}
    assert readme_numbers.sample(record) == "one sample of 6 calls in 4 s"


def test_a_count_the_records_do_not_carry_is_said_to_be_the_benchmarks():
    assert native_page.best_of({"calls": 7}) == "the best of 7 calls after compiling"
    assert "its records do not say" in native_page.best_of({})
    assert minigrid_native_page.repeats({"repeats": 3}) == (
        "median of 3 calls after a compiling one"
    )
    assert "its records do not say how many" in minigrid_native_page.repeats({})


def test_configs_without_a_record_are_listed_and_an_exploration_task_is_no_config():
    records = [
        {"task": "pendulum"},
        {"task": "keycorridor_s5", "config": "keycorridor_s5_noveld"},  # The arm's config.
        {"config": "minigrid_rnd", "agent": "control"},  # The RND benchmark's control.
        {"family": "montezuma_rnd"},
    ]
    configs = [
        "default",
        "pendulum",
        "keycorridor_s5",
        "keycorridor_s5_noveld",
        "minigrid",
        "minigrid_rnd",
        "montezuma_rnd",
        "humanoid",
    ]
    assert readme_configs.unbenchmarked(configs, records) == ["keycorridor_s5", "humanoid"]
    line = readme_configs.line(configs, records)
    assert line.splitlines()[0] == readme_configs.BEGIN
    assert (
        "Not yet benchmarked (no record in `benchmarks/results` names them): `keycorridor_s5`,"
        in (line.replace("\n", " "))
    )
    assert "Every config has a record" in readme_configs.line(["pendulum"], records)


def test_an_older_tree_reaches_readmes_bullet_of_its_figure(monkeypatch):
    monkeypatch.setattr(trees, "git_age", lambda commit: trees.Age(commit, False, 3))
    runs = [_learning(s, 1) for s in range(3)]
    monkeypatch.setattr(readme_numbers, "read", lambda name: runs)
    assert "(2026-11-30, CPU; measured on an older tree, commit aaa1111)" in (
        readme_numbers.throughput()
    )
    monkeypatch.setattr(trees, "git_age", lambda commit: trees.Age(commit, True, 0))
    assert "- **Throughput** (2026-11-30, CPU): " in readme_numbers.throughput()
