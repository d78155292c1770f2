"""Experiment tracking with Weights & Biases, as a callback (`train --track`).

The W&B run is named as the run directory and holds the run's config and seed, every train and
eval report's figures (under `train/` and `eval/`, stepped by training env steps, as TensorBoard
has them), the TensorBoard event files and, at the end, the learning curve and the exported
policy as a `model` artifact. `WANDB_MODE=offline` keeps it on disk under the run directory
(`wandb sync` uploads it later); so does a server that does not answer in `INIT_TIMEOUT` seconds
(no network), with one warning: tracking never costs the training. `pip install -e ".[track]"`.
"""

from __future__ import annotations

import glob
import math
import os

from agents.config import files
from agents.config.errors import UsageError
from agents.training.callbacks import Callback
from agents.training.progress import warn

# Seconds W&B may take to start an online run (its own default is 90) before the run is logged
# offline instead; WANDB_INIT_TIMEOUT overrides it.
INIT_TIMEOUT = 30.0


class WandbTracker(Callback):
    """Logs a run to Weights & Biases.

    Args:
        project: The W&B project (default "agents").
        entity: The W&B team or user (default: the logged-in user's).
        group: A group of runs (e.g. the seeds of one config).
    """

    def __init__(
        self, project: str = "agents", entity: str | None = None, group: str | None = None
    ) -> None:
        try:
            import wandb  # The wandb extra: optional.
        except ImportError:
            raise UsageError('--track needs Weights & Biases: pip install -e ".[track]".') from None
        self._wandb = wandb
        self._timeout = _init_timeout(os.environ.get("WANDB_INIT_TIMEOUT"))  # Refused up front.
        self._project, self._entity, self._group = project, entity, group
        self._run = None

    def on_start(self, run) -> None:
        config_file = os.path.join(run.run_dir, files.CONFIG_FILE)
        seed = files.saved_seed(config_file) if os.path.isfile(config_file) else None
        # W&B's lines go to stderr as the run starts and ends (and it takes the `agents`
        # package for another one of that name and suggests Weave): silent, as its settings say
        # for the run; `on_end` says in one line where the W&B run went.
        self._wandb.setup(settings=self._wandb.Settings(silent=True))
        options = dict(
            project=self._project,
            entity=self._entity,
            group=self._group,
            name=os.path.basename(os.path.normpath(run.run_dir)),
            dir=run.run_dir,
            config={**dict(run.config), "seed": seed, "run_dir": run.run_dir},
            reinit="create_new",
        )
        timeout = self._timeout
        try:
            self._run = self._wandb.init(
                **options, settings=self._wandb.Settings(silent=True, init_timeout=timeout)
            )
        except self._wandb.errors.CommError as error:  # No network, or no server answers.
            reason = (str(error).strip().splitlines() or ["no answer"])[0]
            warn(
                f"warning: W&B's server did not answer in {timeout:g} s ({reason}); this run is "
                "logged offline (the line at its end says how to upload it)"
            )
            self._run = self._wandb.init(
                **options, mode="offline", settings=self._wandb.Settings(silent=True)
            )

    def on_report(self, run, report) -> None:
        if self._run is None:
            return
        figures = {"score": report.score, "success_rate": report.success_rate, **report.metrics}
        logged = {
            f"{report.phase}/{key}": float(value)
            for key, value in figures.items()
            if isinstance(value, (int, float)) and key != "env_steps" and math.isfinite(value)
        }
        self._run.log(logged, step=int(report.metrics.get("env_steps", run.env_steps)))

    def on_end(self, run, result) -> None:
        if self._run is None:
            return
        for path in glob.glob(os.path.join(run.run_dir, "events.out.tfevents.*")):
            self._run.save(path, base_path=run.run_dir, policy="now")
        artifact = self._wandb.Artifact(f"policy-{self._run.id}", type="model")
        policy = os.path.join(run.run_dir, "policy")
        if os.path.isdir(policy):
            artifact.add_dir(policy, name="policy")
        curve = os.path.join(run.run_dir, "learning_curve.png")
        if os.path.isfile(curve):
            artifact.add_file(curve)
            self._run.log({"learning_curve": self._wandb.Image(curve)})
        self._run.summary["final_eval"] = result.eval_score
        self._run.summary["best_eval"] = result.best_eval_score
        if not math.isnan(result.eval_success_rate):
            self._run.summary["final_eval_success_rate"] = result.eval_success_rate
        self._run.log_artifact(artifact)
        where = self._run.url or self._run.dir
        offline = self._run.settings.mode == "offline"
        self._run.finish()
        self._run = None
        if offline:
            where = os.path.dirname(os.path.normpath(where))  # The offline run's directory.
            print(f"W&B run (offline): {where}; upload it with: wandb sync {where}", flush=True)
        else:
            print(f"W&B run: {where}", flush=True)


def _init_timeout(value: str | None) -> float:
    """`WANDB_INIT_TIMEOUT` as seconds; `INIT_TIMEOUT` where unset, and a bad value refused in
    one line naming it."""
    if value is None:
        return INIT_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not seconds > 0:
        raise UsageError(f"WANDB_INIT_TIMEOUT must be a number of seconds > 0, got {value!r}.")
    return seconds
