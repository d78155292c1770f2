"""The first-line benchmark's reading of a run's stdout (benchmarks/first_line.py)."""

import subprocess
import sys
import time

from agents.tools.reports import Report
from agents.training import progress, reporting
from benchmarks import first_line


def test_the_train_line_is_the_one_the_console_prints_for_a_train_report_only(
    tmp_path, monkeypatch
):
    metrics = {"env_steps": 16384.0, "policy_loss": 0.1}
    train = reporting.report_line(Report("train", 16384, 0.5, 3, metrics))
    evaluation = reporting.report_line(Report("eval", 16384, 0.5, 3, metrics))
    building = "Building the first 8,192 layouts of the layout bank of MiniGrid-DoorKey-16x16-v0"
    with open(tmp_path / "stdout", "w") as file:  # A pipe's lines carry the date and time.
        monkeypatch.setattr(sys, "stdout", file)
        for line in (train, evaluation, building):
            progress.write(line)
    piped = (tmp_path / "stdout").read_text().splitlines()
    assert piped[0].endswith(train) and piped[0] != train
    for lines in ([train, evaluation, building], piped):  # On a terminal, and piped.
        assert [bool(first_line.TRAIN_LINE.match(line)) for line in lines] == [True, False, False]


def test_lines_come_as_printed_and_stop_at_the_deadline():
    script = "import time\nprint('a', flush=True)\nprint('b', flush=True)\ntime.sleep(30)"
    command = [sys.executable, "-c", script]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)  # Buffered or not.
    try:
        start = time.perf_counter()
        lines = list(first_line._lines(process, start + 2.0))
        waited = time.perf_counter() - start
    finally:
        process.kill()
        process.wait()
    assert lines == ["a\n", "b\n"]
    assert 2.0 <= waited < 10.0  # The sleeping child did not hold the reader past the deadline.
