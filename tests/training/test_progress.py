"""Tests for the progress bars: what they show, and when they stay silent."""

import io
import re
import sys
import types
import warnings

import pytest
from tqdm import tqdm

from agents.tools.loop import Report
from agents.training import progress


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _reports():
    return [
        Report("train", 128, float("nan"), 0, {"env_steps": 128.0, "env_steps_per_second": 9.0}),
        Report("eval", 328, -250.25, 2, {"env_steps": 128.0}),
        Report("train", 456, -300.5, 2, {"env_steps": 256.0}),
    ]


def test_scores_show_their_success_rate_where_the_config_measures_one():
    terminal = _Terminal()
    with progress.TrainingProgress(256, file=terminal) as bar:
        bar.update(Report("train", 128, 0.42, 8, {"env_steps": 128.0}, 20.0, 0.625))
        bar.update(Report("eval", 228, 0.91, 4, {"env_steps": 128.0}, 30.0, 1.0))
        bar._bar.refresh()  # tqdm redraws at most every 0.1 s.
    last = terminal.getvalue().split("\r")[-1].rstrip(" \n")
    assert last.endswith("train=0.4 (62% success), eval=0.9 (100% success)]"), last


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


def _fake_ipython(monkeypatch, shell, kernel_module=True):
    """Fake IPython (and ipykernel) modules: `get_ipython()` returns `shell`."""
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: shell
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    if kernel_module:
        monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    else:
        monkeypatch.delitem(sys.modules, "ipykernel", raising=False)


@pytest.mark.parametrize(
    "shell, kernel_module, expected",
    [
        (types.SimpleNamespace(kernel=object()), True, True),  # Jupyter: the shell of a kernel.
        (types.SimpleNamespace(), True, False),  # Terminal IPython, ipykernel merely imported.
        (None, True, False),  # A script that imported ipykernel.
        (types.SimpleNamespace(kernel=object()), False, False),  # No ipykernel loaded.
    ],
)
def test_in_notebook_only_in_an_ipython_kernel(monkeypatch, shell, kernel_module, expected):
    _fake_ipython(monkeypatch, shell, kernel_module)
    assert progress.in_notebook() is expected


def test_in_notebook_without_ipython_loaded(monkeypatch):
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert not progress.in_notebook()


def test_default_bar_stays_silent_off_a_terminal_outside_notebooks(monkeypatch, capsys):
    monkeypatch.setattr(progress, "in_notebook", lambda: False)
    with progress.TrainingProgress(256) as bar:
        for report in _reports():
            bar.update(report)
    assert capsys.readouterr() == ("", "")  # pytest's stderr is no terminal.


def test_notebook_without_ipywidgets_draws_text_on_stdout_without_warnings(monkeypatch, capsys):
    monkeypatch.setattr(progress, "in_notebook", lambda: True)
    monkeypatch.setattr("tqdm.notebook.IProgress", None)  # As without ipywidgets.
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # `tqdm.auto` would warn "IProgress not found".
        with progress.TrainingProgress(256) as bar:
            for report in _reports():
                bar.update(report)
    assert type(bar._bar) is tqdm
    out, err = capsys.readouterr()
    assert err == ""
    assert out.split("\r")[-1].startswith("env steps: 100%|") and "256/256" in out


class _KernelStream(io.StringIO):
    """Stands for ipykernel's `OutStream`, the kernel's stdout."""


_KernelStream.__module__ = "ipykernel.iostream"


def test_notebook_bar_is_the_widget_of_tqdm_auto_when_ipywidgets_is_there(monkeypatch):
    class Widget(tqdm):
        def __init__(self, **kwargs):
            self.kwargs = kwargs
            super().__init__(file=io.StringIO(), **kwargs)

    monkeypatch.setattr(progress, "in_notebook", lambda: True)
    monkeypatch.setattr(progress, "_widget_bar", lambda: Widget)
    monkeypatch.setattr(sys, "stdout", _KernelStream())
    with progress.bar(3, "episode") as bar:
        assert type(bar) is Widget
        assert bar.kwargs["disable"] is False and "file" not in bar.kwargs  # In the notebook.
    with progress.bar(3, "episode", file=_Terminal()) as bar:
        assert type(bar) is tqdm  # A file of the caller's is kept.
    with progress.bar(3, "episode", enabled=False) as bar:
        assert type(bar) is tqdm and bar.disable  # MPI ranks other than 0.


def test_widget_bar_is_the_notebook_widget_only_with_ipywidgets(monkeypatch):
    from tqdm import notebook

    monkeypatch.setattr("tqdm.notebook.IProgress", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert progress._widget_bar() is None
    monkeypatch.setattr("tqdm.notebook.IProgress", object)
    assert progress._widget_bar() is notebook.tqdm


def test_notebook_bar_follows_a_redirected_stdout(monkeypatch):
    # `agents.train(verbose=0)` redirects stdout to keep the notebook quiet; no widget then.
    monkeypatch.setattr(progress, "in_notebook", lambda: True)
    monkeypatch.setattr(progress, "_widget_bar", lambda: pytest.fail("no widget"))
    redirected = io.StringIO()
    monkeypatch.setattr(sys, "stdout", redirected)
    with progress.bar(3, "episode") as bar:
        bar.update(3)
    assert type(bar) is tqdm and "3.00/3.00" in redirected.getvalue()


def test_lines_on_a_file_or_pipe_start_with_the_time_and_in_memory_ones_do_not(
    tmp_path, monkeypatch
):
    path = tmp_path / "log.txt"
    with open(path, "w") as log:
        monkeypatch.setattr(sys, "stdout", log)  # As nohup's or SLURM's log file.
        progress.write("Starting run x.\nsecond line")
    first, second = path.read_text().splitlines()
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d Starting run x\.", first)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d second line", second)
    memory = io.StringIO()
    monkeypatch.setattr(sys, "stdout", memory)
    progress.write("Starting run x.")
    assert memory.getvalue() == "Starting run x.\n"
