"""The console's lines: what a train and an eval report say, and the run's last word."""

import math
import time

from agents.tools.loop import Report
from agents.training import loop, reporting


def test_a_train_line_gives_the_updates_figures_both_rates_and_the_wall_time():
    metrics = dict(
        env_steps=10240.0,
        policy_loss=-0.0145,
        value_loss=0.03081,
        entropy=2.382,
        approx_kl=0.0131,
        clipfrac=0.173,
        explained_variance=0.91,
        env_steps_per_second=10256.0,
        end_to_end_steps_per_second=2148.4,
        wall_time=3725.0,
        learning_rate=1e-3,  # Not on the line: TensorBoard and metrics.jsonl have it.
    )
    line = reporting.report_line(Report("train", 10240, -1280.82, 48, metrics))
    assert line == (
        "train  env step     10240  score  -1280.82 ( 48 episodes)  pi -0.0145  v 0.03081  "
        "ent 2.382  kl 1.3e-02  clip 0.173  ev +0.91     2148 steps/s (calls 10256)  1:02:05"
    )


def test_an_eval_line_gives_the_spread_and_marks_a_new_best():
    metrics = dict(env_steps=20480.0, score_std=2.5, score_min=-3.0, score_max=4.0, wall_time=6.0)
    line = reporting.report_line(Report("eval", 20480, 1.5, 8, metrics), new_best=True)
    assert line == (
        " eval  env step     20480  score      1.50 (  8 episodes) +/- 2.50 [-3.00, 4.00]"
        "  0:00:06  new best"
    )
    line = reporting.report_line(Report("eval", 20480, 1.5, 8, metrics, success_rate=0.625))
    assert line.endswith("[-3.00, 4.00]  success 0.62  0:00:06")  # With a success score set.
    train = Report("train", 64, 0.4, 5, {"env_steps": 64.0}, success_rate=0.8)
    assert reporting.report_line(train).endswith("(  5 episodes)  success 0.80")
    line = reporting.report_line(Report("eval", 20480, math.nan, 0, {"env_steps": 20480.0}))
    assert line == " eval  env step     20480  score n/a (  0 episodes)"
    line = reporting.report_line(Report("eval", 20480, 1.5, 8, {}), eval_policy="mode")
    assert line == " eval  env step         0  score      1.50 (  8 episodes, mode)"
    assert reporting.report_line(train, eval_policy="mode").endswith("(  5 episodes)  success 0.80")
    stopped = {"env_steps": 20480.0, "interrupted": 1.0, "wall_time": 6.0}
    line = reporting.report_line(Report("eval", 20480, math.nan, 0, stopped))
    assert (
        line
        == " eval  env step     20480  score n/a (  0 episodes)  interrupted by the stop  0:00:06"
    )


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class _Run:
    env_steps = 8192
    ranks = 1
    config = {"eval_policy": "sample"}


def _eval_report():
    return Report("eval", 8192, -3.0, 4, {"env_steps": 8192.0})


def test_a_long_evaluation_says_how_it_goes_once_a_minute(monkeypatch):
    clock, lines = _Clock(), []
    monkeypatch.setattr(reporting.time, "monotonic", clock)
    clock.now = 40.0
    console = reporting.ConsoleLog(lines.append)
    console.on_start(_Run())
    run = _Run()
    for seconds, finished in [(0, 0), (59, 0), (61, 1), (100, 1), (122, 2)]:
        clock.now = 100.0 + seconds
        console.on_eval_call(run, finished, 4)
    assert lines == [
        " eval  env step      8192  playing: 1 of 4 episodes finished  0:02:01",
        " eval  env step      8192  playing: 2 of 4 episodes finished  0:03:02",
    ]
    console.on_report(run, _eval_report())  # The next evaluation counts from its first call.
    assert (
        lines[-1] == " eval  env step      8192  score     -3.00 (  4 episodes, sample)  new best"
    )
    lines.clear()
    for seconds in (130, 189):
        clock.now = 100.0 + seconds
        console.on_eval_call(run, 0, 4)
    assert lines == []
    run.ranks = 2
    console.on_eval_call(run, 0, 2)
    clock.now += 60.0
    console.on_eval_call(run, 1, 2)
    assert lines == [
        " eval  env step      8192  playing: 1 of 2 episodes finished (rank 0's share)  0:05:09"
    ]


def _evals(outcome, scores, success=math.nan):
    for step, score in scores:
        loop._count_eval(outcome, Report("eval", step, score, 4, {}, 10.0, success), step)


def test_the_summary_names_final_and_best_evaluations_and_the_rate():
    outcome = loop.LoopOutcome(started=0.0, start_steps=1000)
    _evals(outcome, [(2000, -5.0), (3000, -2.0), (4000, -3.0)])
    outcome.started = time.monotonic() - 10.0  # The loop ran for 10 s.
    line = reporting.summary_line(outcome, 4000)
    assert line.startswith("Final eval -3.00, best -2.00 (env step 3000); 3000 env steps in 0:00:1")
    assert line.endswith(" env steps/s.") and 280 <= float(line.split(", ")[-1].split()[0]) <= 300
    assert reporting.summary_line(loop.LoopOutcome(), 0).startswith("No evaluation scored; ")


def test_the_summary_gives_the_last_evaluations_success_rate_where_one_is_measured():
    outcome = loop.LoopOutcome()
    _evals(outcome, [(2000, 0.9)], success=1.0)
    _evals(outcome, [(3000, 0.7)], success=0.75)
    assert outcome.eval_success_rate == 0.75
    line = reporting.summary_line(outcome, 3000)
    assert line.startswith("Final eval 0.70 (success 0.75), best 0.90 (env step 2000); ")
