"""Progress bars of the scripts: tqdm on stderr, silent where stderr is no terminal.

In a Jupyter kernel stderr is no terminal either, yet the bar is wanted there: it is tqdm's
notebook widget (`tqdm.auto`), or text on stdout where ipywidgets is missing (`tqdm.auto` would
warn and fall back to stderr, where the bar stays silent) or stdout is redirected.
"""

from __future__ import annotations

import math
import sys
import time
from typing import IO, TYPE_CHECKING, Any

from tqdm import tqdm

from agents.training.callbacks import Callback

if TYPE_CHECKING:  # The Trainer's callback: the Trainer imports this module.
    from agents.training.trainer import Trainer


def bar(
    total: int,
    unit: str,
    desc: str | None = None,
    initial: int = 0,
    enabled: bool = True,
    file: IO[str] | None = None,
) -> tqdm:
    """A progress bar on `file` (default stderr), drawn only when `enabled` and on a terminal.

    Without a `file`, in a Jupyter kernel, the bar is drawn in the notebook (see the module).

    Args:
        total: The count at completion.
        unit: Name of one counted thing, e.g. "step" (shown as "step/s").
        desc: Text before the bar.
        initial: The count so far, e.g. of a resumed run.
        enabled: False keeps the bar silent anyway (e.g. on MPI ranks other than 0).
        file: Where the bar is drawn.
    """
    kind, where = _bar_kind(enabled, file)
    return kind(
        total=total,
        initial=initial,
        unit=unit,
        desc=desc,
        unit_scale=True,
        dynamic_ncols=True,
        **where,
    )


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel: ipykernel runs its IPython shell."""
    if "ipykernel" not in sys.modules:
        return False
    get_ipython = getattr(sys.modules.get("IPython"), "get_ipython", None)
    shell = get_ipython() if get_ipython is not None else None
    return getattr(shell, "kernel", None) is not None  # A terminal IPython shell has none.


def _bar_kind(enabled: bool, file: IO[str] | None) -> tuple[type[tqdm], dict[str, Any]]:
    """The bar's class and its `file` and `disable` arguments."""
    if enabled and file is None and in_notebook():
        # Where stdout is redirected (e.g. `agents.train(verbose=0)`), the bar is redirected too.
        widget = _widget_bar() if _is_kernel_stream(sys.stdout) else None
        if widget is not None:
            return widget, {"disable": False}
        return tqdm, {"file": sys.stdout, "disable": False}
    file = sys.stderr if file is None else file
    return tqdm, {"file": file, "disable": None if enabled else True}  # None: off a terminal.


def _is_kernel_stream(stream: IO[str]) -> bool:
    """Whether `stream` is one the Jupyter kernel shows in the notebook."""
    return type(stream).__module__.startswith("ipykernel.")


def _widget_bar() -> type[tqdm] | None:
    """tqdm's notebook widget bar (what `tqdm.auto` gives in a notebook); None without
    ipywidgets."""
    # Notebooks only: it imports ipywidgets, and quietly where they are missing (`tqdm.auto` warns).
    from tqdm import notebook

    return None if notebook.IProgress is None else notebook.tqdm


def warn(line: str) -> None:
    """Print `line` on stderr; a progress bar on the terminal is cleared first and redrawn."""
    tqdm.write(line, file=sys.stderr)
    sys.stderr.flush()


def write(line: str) -> None:
    """Print `line` on stdout, clearing a progress bar on the terminal first and redrawing it.

    Where stdout is a file or a pipe (nohup, SLURM, `| tee`), each line starts with the date and
    time (`2026-11-26 12:51:47 `), since such a log has no bar and is read later; a terminal, a
    notebook and an in-memory stream get the line as it is.
    """
    if timestamped(sys.stdout):
        stamp = time.strftime("%Y-%m-%d %H:%M:%S ")
        line = "\n".join(stamp + part for part in line.split("\n"))
    tqdm.write(line, file=sys.stdout)
    sys.stdout.flush()


def timestamped(stream: IO[str]) -> bool:
    """Whether lines written to `stream` carry a timestamp: a file descriptor (a file or a pipe)
    that is no terminal, outside a Jupyter kernel."""
    try:
        stream.fileno()  # In-memory streams raise io.UnsupportedOperation; closed ones too.
        return not stream.isatty() and not in_notebook()
    except (AttributeError, OSError, ValueError):
        return False


# tqdm's default bar, with the rate of the report lines (training calls) instead of its own.
_TRAINING_FORMAT = (
    "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}{postfix}]"
)


class TrainingProgress(Callback):
    """The progress bar of a training run, a consumer of its reports.

    Says what it waits for ("starting" while TensorFlow loads and the envs and agent are built,
    "compiling" until the first training call returns), then shows training env steps out of
    `total`, advanced after every training call, the time left, the env steps per second of the
    training calls (the rate the report lines print) and the latest mean train and eval scores,
    each with its episodes' success rate where the config sets `success_score`. Use it as a
    context manager, so that the bar is closed on errors.

    Args:
        total: Training env steps of the run.
        initial: Training env steps made before (a resumed run).
        enabled: False keeps it silent (MPI ranks other than 0).
        file: Where the bar is drawn (default stderr).
    """

    def __init__(
        self, total: int, initial: int = 0, enabled: bool = True, file: IO[str] | None = None
    ) -> None:
        initial = min(initial, total)
        self._bar = bar(total, "step", "starting", initial, enabled, file)
        self._bar.bar_format = _TRAINING_FORMAT
        self._postfix = {"steps/s": "n/a", "train": "n/a", "eval": "n/a"}
        self._bar.set_postfix(self._postfix)
        self._started = False

    def on_start(self, run: Trainer) -> None:
        self.restart_at(run.env_steps)
        self.stage("compiling")

    def on_step(self, run: Trainer) -> None:
        self.advance(run.env_steps)

    def on_report(self, run: Trainer, report) -> None:
        self.update(report)

    def stage(self, text: str) -> None:
        """Say what the run waits for, e.g. "compiling"."""
        self._bar.set_description_str(text)

    def restart_at(self, env_steps: int) -> None:
        """Start the count at the env steps of a restored run (before any training call)."""
        self._bar.n = self._bar.last_print_n = min(env_steps, self._bar.total)
        self._bar.refresh()

    def advance(self, env_steps: int) -> None:
        """Move the bar to `env_steps` (called after each training call)."""
        steps = min(int(env_steps), self._bar.total)
        if not self._started and steps > self._bar.n:
            self._started = True
            self._bar.set_description_str("env steps")
        self._bar.update(max(0, steps - self._bar.n))

    def update(self, report) -> None:
        """Take a `tools.loop.Report`: train reports move the bar and set the rate; all, scores."""
        if report.phase == "train":
            self.advance(int(report.metrics.get("env_steps", self._bar.n)))
            rate = report.metrics.get("env_steps_per_second")
            if rate is not None:
                self._postfix["steps/s"] = f"{rate:,.0f}"
        if not math.isnan(report.score):
            score = f"{report.score:.1f}"
            if not math.isnan(report.success_rate):
                score += f" ({report.success_rate:.0%} success)"
            self._postfix[report.phase] = score
        self._bar.set_postfix(self._postfix)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> TrainingProgress:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
