"""What a run must satisfy before it resumes (plain Python)."""

from __future__ import annotations

import os

from agents.config import schema
from agents.config.errors import UsageError
from agents.config.files import CONFIG_FILE
from agents.tools.checkpoints import list_checkpoints
from agents.training.metrics_log import METRICS_FILE, read_metrics


def check_resumable(run_dir: str, saved, config) -> None:
    """Refuse a resume that would misread or throw away what the run trained.

    Raises:
        UsageError: A key that shapes the trained variables changed (naming it, with both
            values), or the run recorded progress but holds no checkpoint to go on from.
    """
    for key in schema.FIXED_ON_RESUME:
        if key in saved and config[key] != saved[key]:
            raise UsageError(
                f"Run {run_dir!r} was trained with {key}={saved[key]!r}, not {config[key]!r}: "
                f"its weights hold no meaning for another {key}. Start a new run from its "
                f"config instead: --config={os.path.join(run_dir, CONFIG_FILE)} "
                f"--set {key}=..."
            )
    records = read_metrics(run_dir) if os.path.isfile(os.path.join(run_dir, METRICS_FILE)) else []
    if records and not list_checkpoints(os.path.join(run_dir, "checkpoints")):
        raise UsageError(
            f"Run {run_dir!r} trained to env step {records[-1]['env_steps']} but holds no "
            "checkpoint: resuming would start over inside it. Move the run directory aside, "
            f"or start a new run from its config: --config={run_dir}/{CONFIG_FILE}"
        )
