"""Tests for the progress bars: what they show, and when they stay silent."""

import io

from agents.scripts import progress
from agents.tools.loop import Report


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _reports():
    return [
        Report("train", 128, float("nan"), 0, {"env_steps": 128.0, "env_steps_per_second": 9.0}),
        Report("eval", 328, -250.25, 2, {"env_steps": 128.0}),
        Report("train", 456, -300.5, 2, {"env_steps": 256.0}),
    ]


def test_training_bar_shows_env_steps_rate_time_left_and_scores():
    terminal = _Terminal()
    with progress.TrainingProgress(256, file=terminal) as bar:
        bar.update(_reports()[0])
        first = terminal.getvalue().split("\r")[-1]
        for report in _reports()[1:]:
            bar.update(report)
    assert first.startswith("env steps:  50%|") and "128/256 [00:00<00:00" in first
    assert "steps/s=9, train=n/a, eval=n/a]" in first  # The rate of the report lines.
    last = terminal.getvalue().split("\r")[-1]
    assert last.startswith("env steps: 100%|") and "256/256" in last
    # tqdm pads a line shorter than the one before it with spaces.
    assert last.rstrip(" \n").endswith("steps/s=9, train=-300.5, eval=-250.2]")


def test_training_bar_says_what_it_waits_for_then_advances_every_call():
    terminal = _Terminal()
    with progress.TrainingProgress(256, file=terminal) as bar:
        assert terminal.getvalue().split("\r")[-1].startswith("starting:   0%|")
        bar.stage("compiling")
        assert terminal.getvalue().split("\r")[-1].startswith("compiling:   0%|")
        bar.advance(64)  # After a training call, before any report.
        bar._bar.refresh()  # tqdm redraws at most every 0.1 s.
        assert terminal.getvalue().split("\r")[-1].startswith("env steps:  25%|")


def test_resumed_bar_starts_at_the_restored_step_and_stops_at_the_total():
    terminal = _Terminal()
    with progress.TrainingProgress(200, initial=128, file=terminal) as bar:
        assert "128/200" in terminal.getvalue()
        bar.update(_reports()[2])  # The loop may pass the total by the rest of a phase.
    assert "200/200" in terminal.getvalue().split("\r")[-1]


def test_training_bar_is_silent_off_a_terminal_and_when_disabled():
    file, terminal = io.StringIO(), _Terminal()
    for bar in (
        progress.TrainingProgress(256, file=file),
        progress.TrainingProgress(256, enabled=False, file=terminal),
    ):
        with bar:
            for report in _reports():
                bar.update(report)
    assert file.getvalue() == "" and terminal.getvalue() == ""


def test_write_prints_a_line_on_stdout(capsys):
    with progress.bar(3, "episode", file=_Terminal()) as bar:
        progress.write("Episode 0: return 1.00")
        bar.update()
    assert capsys.readouterr().out == "Episode 0: return 1.00\n"
