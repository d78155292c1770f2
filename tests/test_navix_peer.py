"""Ours beside NAVIX: the driver's command line and JSON, our run's figures, and the page made
from synthetic records (no JAX: the driver's measuring functions import it when they run)."""

import json

import pytest

from benchmarks import navix_driver, navix_peer
from benchmarks.pages import navix_page


def test_the_driver_names_navix_ids_and_minigrid_time_limits():
    assert navix_driver.navix_id("MiniGrid-DoorKey-8x8-v0") == "Navix-DoorKey-8x8-v0"
    assert navix_driver.max_steps("MiniGrid-DoorKey-8x8-v0") == 640
    assert navix_driver.max_steps("MiniGrid-DoorKey-16x16-v0") == 2560
    with pytest.raises(ValueError, match="'Navix-DoorKey-8x8-v0' is not minigrid's"):
        navix_driver.navix_id("Navix-DoorKey-8x8-v0")
    with pytest.raises(ValueError, match="'MiniGrid-DoorKey-8x16-v0' has no known time limit"):
        navix_driver.max_steps("MiniGrid-DoorKey-8x16-v0")


def test_the_driver_parses_its_modes_and_says_what_it_accepts():
    function, arguments = navix_driver.parse(
        ["step", "MiniGrid-DoorKey-8x8-v0", "1024", "100", "3"]
    )
    assert function is navix_driver.step
    assert arguments == ("MiniGrid-DoorKey-8x8-v0", 1024, 100, 3)
    function, arguments = navix_driver.parse(["ppo", "MiniGrid-DoorKey-8x8-v0", "1048576", "0"])
    assert (function, arguments) == (navix_driver.ppo, ("MiniGrid-DoorKey-8x8-v0", 1048576, 0))
    with pytest.raises(ValueError, match=r"mode 'train' is not one of \['ppo', 'step'\]"):
        navix_driver.parse(["train", "MiniGrid-DoorKey-8x8-v0"])
    with pytest.raises(ValueError, match="mode 'ppo' takes 3 arguments"):
        navix_driver.parse(["ppo", "MiniGrid-DoorKey-8x8-v0", "1048576"])
    with pytest.raises(ValueError, match="invalid literal"):
        navix_driver.parse(["step", "MiniGrid-DoorKey-8x8-v0", "many", "100", "0"])


def test_the_drivers_last_json_line_is_its_result_and_must_hold_the_modes_figures():
    result = {"steps_per_second": 2.5e5, "compile_seconds": 5.0, "versions": {"navix": "0.7.4"}}
    stdout = "Compiling...\n" + json.dumps(result) + "\n"
    assert navix_peer.driver_result(stdout, "step") == result
    with pytest.raises(ValueError, match="lacks train_seconds, final_success"):
        ppo = {"steps": 1, "compile_seconds": 1.0, "final_return": 0.0}
        navix_peer.driver_result(json.dumps(ppo), "ppo")
    with pytest.raises(ValueError, match="printed no JSON object last: 'Traceback'"):
        navix_peer.driver_result(json.dumps(result) + "\nTraceback", "step")
    with pytest.raises(ValueError, match="printed no JSON object last"):
        navix_peer.driver_result("", "step")
    with pytest.raises(ValueError, match="printed no JSON object last"):
        navix_peer.driver_result("[1, 2]", "step")


def test_our_runs_figures_come_from_its_training_reports_and_last_eval(tmp_path):
    rows = [
        {"phase": "train", "env_steps": 65536, "score": 0.0, "episodes": 100,
         "success_rate": 0.0, "env_steps_per_second": 10_000.0},
        {"phase": "train", "env_steps": 131072, "score": 0.1, "episodes": 90,
         "success_rate": 0.2, "env_steps_per_second": 50_000.0},
        {"phase": "eval", "env_steps": 131072, "score": 0.0, "success_rate": 0.25},
        {"phase": "train", "env_steps": 196608, "score": 0.5, "episodes": 40,
         "success_rate": 0.75, "env_steps_per_second": 40_000.0},
        {"phase": "eval", "env_steps": 196608, "score": 0.6, "success_rate": 0.5},
    ]  # fmt: skip
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert navix_peer.ours_ppo_figures(str(tmp_path)) == dict(
        steps=196608,
        train_steps_per_second=40_000.0,  # The median of the three reports' rates.
        final_success=0.75,
        final_return=0.5,
        episodes=40,
        eval_success=0.5,
    )
    # A last report in which no episode ended has no success rate and no score.
    rows[-2] = {"phase": "train", "env_steps": 196608, "score": None, "episodes": 0,
                "env_steps_per_second": 40_000.0}  # fmt: skip
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows[:-1]))
    figures = navix_peer.ours_ppo_figures(str(tmp_path))
    assert (figures["final_success"], figures["final_return"], figures["episodes"]) == (
        None,
        None,
        0,
    )
    assert figures["eval_success"] == 0.25


def test_sides_alternate_which_goes_first():
    assert [navix_peer.order(r) for r in range(3)] == [
        ("ours", "navix"), ("navix", "ours"), ("ours", "navix"),
    ]  # fmt: skip


def _sitting(started, load=1.0):
    return dict(started=started, date=started[:16], commit="abc1234", machine="CPU, 2 cores",
                load=load, tensorflow="2.21.0")  # fmt: skip


def _step(started, side, env_id, rate, round_=0, load=1.0):
    versions = {"navix": "0.7.4", "jax": "0.10.2"} if side == "navix" else {"tensorflow": "2.21"}
    return dict(_sitting(started, load), kind="step", side=side, round=round_, env_id=env_id,
                envs=1024, steps_per_second=rate, compile_seconds=2.0 if side == "ours" else 5.0,
                versions=versions)  # fmt: skip


def _ppo(started, side, success, seconds):
    return dict(_sitting(started, 2.0), kind="ppo", side=side, seed=0, budget=1_048_576,
                steps=1_048_576, process_seconds=seconds, steps_per_second=1_048_576 / seconds,
                train_steps_per_second=100_000.0, final_success=success,
                final_return=None if success is None else success / 2,
                episodes=64)  # fmt: skip


def test_the_page_shows_the_newest_sitting_with_medians_ratios_and_each_ppo_run():
    eight, sixteen = "MiniGrid-DoorKey-8x8-v0", "MiniGrid-DoorKey-16x16-v0"
    old = [_step("2026-01-01 10:00:00", side, eight, 9.0) for side in ("ours", "navix")]
    new = "2026-02-01 10:00:00"
    records = old + [
        _step(new, "ours", eight, 1_000_000.0, 0, load=0.5),
        _step(new, "navix", eight, 200_000.0, 0),
        _step(new, "navix", eight, 300_000.0, 1),
        _step(new, "ours", eight, 1_400_000.0, 1, load=1.5),
        _step(new, "ours", sixteen, 900_000.0),
        _step(new, "navix", sixteen, 250_000.0),
        _ppo(new, "ours", 0.5, 50.0),
        _ppo(new, "navix", 0.25, 25.0),
        dict(_ppo(new, "ours", None, 40.0), seed=1, episodes=0),
    ]
    text = navix_page.page(records)
    assert (
        "| MiniGrid-DoorKey-8x8-v0 | 1,024 | 1,200,000 | 250,000 | 4.80x | 2.0 | 5.0 | 2 | "
        "0.5-1.5 |" in text
    )
    assert (
        "| MiniGrid-DoorKey-16x16-v0 | 1,024 | 900,000 | 250,000 | 3.60x | 2.0 | 5.0 | 1 | 1.0 |"
        in text
    )
    assert "| 9 |" not in text  # The older sitting's figures are not shown.
    assert (
        f"| {navix_page.SIDES['ours']} | 0 | 1,048,576 | 50.0 | 20,972 | 100,000 | 0.50 |" in text
    )
    assert (
        f"| {navix_page.SIDES['navix']} | 0 | 1,048,576 | 25.0 | 41,943 | 100,000 | 0.25 |" in text
    )
    assert f"| {navix_page.SIDES['ours']} | 1 | 1,048,576 | 40.0 | 26,214 | 100,000 | " in text
    assert "| no episode ended | no episode ended | 0 | 2.0 |" in text
    assert "1,048,576 env steps a run" in text
    assert "TensorFlow 2.21.0 (ours); navix 0.7.4, jax 0.10.2 (NAVIX)" in text
    assert "2026-02-01 10:00 | CPU, 2 cores | commit abc1234 |" in text
    assert "counts the newest sitting's 9 records; the records file holds 2 more" in text
    assert (
        "process from spawn to exit: ours 23,593 (100,000 in training calls); "
        "NAVIX 41,943 (100,000 in training calls)." in text
    )
    assert "all the file holds" in navix_page.page(records[2:])
