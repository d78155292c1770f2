"""What the seeds' parent prints of its children's messages."""

import dataclasses
import math
import queue

from agents.multirun import seeds
from agents.tools.loop import Report
from agents.training.train_result import TrainResult


def _lines(*messages) -> list[str]:
    """The parent's lines for `messages`, as `_Forward` and the children send them."""
    channel, lines, outcomes = queue.Queue(), [], {}
    for message in messages:
        channel.put(message)
        seeds._collect(channel, {}, outcomes, 4096, lines.append)
    return lines


def test_evaluations_give_their_success_rate_where_the_config_measures_one():
    forwarded = queue.Queue()
    forward = seeds._Forward(forwarded, 3)
    run = type("Run", (), {"env_steps": 2048})()
    forward.on_report(run, Report("eval", 9, 0.905, 32, {"env_steps": 2048.0}, 40.0, 0.96875))
    forward.on_report(run, Report("eval", 9, -151.25, 8, {"env_steps": 4096.0}))
    done = TrainResult("logs/run-s3", 4096, 0.5, best_eval_score=0.9, eval_success_rate=0.75)
    lines = _lines(
        forwarded.get_nowait(),
        forwarded.get_nowait(),
        ("done", 3, dataclasses.asdict(done)),
    )
    assert lines == [
        "seed 3: eval at env step      2048 of 4096: score 0.91 (success 0.97)",
        "seed 3: eval at env step      4096 of 4096: score -151.25",
        "seed 3: done, eval 0.50 (success 0.75) (logs/run-s3)",
    ]
    assert math.isnan(TrainResult("run", 1, 0.0).eval_success_rate)  # Runs without one.
