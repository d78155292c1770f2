"""The training loop's cycle, on a fake run: which calls, reports, checkpoints and evaluations
come, in which order, from a fresh start, at the budget and after a resume."""

import numpy as np

from agents.tools.attr_dict import AttrDict
from agents.tools.mpi import World
from agents.training.loop import phases

# 2 envs x 4 steps: a training call makes 8 env steps.
CONFIG = dict(
    num_agents=2,
    rollout_length=4,
    rollouts_per_call=1,
    train_every=24,  # A phase: 3 calls.
    log_every=16,  # Reports at 16, at the phase's end (24), at 40, 48, ...
    checkpoint_every=32,
    eval_episodes=3,
    train_steps=56,  # The budget cuts the third phase after its first call.
    success_score=0.5,
)


class _Step:
    def __init__(self, value: int) -> None:
        self.value = value

    def numpy(self) -> int:
        return self.value

    def assign_add(self, made: int) -> None:
        self.value += made


class _FakeRun:
    """Training calls end one episode (score: the env steps after the call); an evaluation
    plays its episodes (score 1.0); `events` records what the loop asked for."""

    def __init__(self, config: dict, step: int = 0, env_steps: int = 0) -> None:
        self.config, self.world = AttrDict(config), World()
        self.step, self.env_steps, self.events = _Step(step), env_steps, []

    def python_errors(self):
        import contextlib

        return contextlib.nullcontext()

    def train_call_metrics(self):
        self.env_steps += 8
        self.events.append(("call", self.env_steps))
        done = np.zeros((4, 2), bool)
        done[-1, 0] = True
        score = np.full((4, 2), float(self.env_steps))
        return done, score, {"length": np.full((4, 2), 4), "loss": np.float32(0.5)}

    def eval_phase(self, should_stop=None):
        self.events.append(("eval", self.env_steps))
        episodes = self.config.eval_episodes
        return np.ones(episodes, bool), np.ones(episodes), {"length": np.full(episodes, 7)}

    def save(self) -> None:
        self.events.append(("save", self.env_steps))


def _run(run: _FakeRun, should_stop=None) -> list:
    for report in phases(run, should_stop):
        run.events.append((report.phase, report.step, report.score, report.episodes))
    return run.events


def test_phases_report_checkpoint_evaluate_and_end_at_the_budget_after_its_evaluation():
    run = _FakeRun(CONFIG)
    assert _run(run) == [
        ("call", 8),
        ("call", 16),
        ("train", 16, 12.0, 2),  # log_every: the episodes of the calls at 8 and 16.
        ("call", 24),
        ("train", 24, 24.0, 1),  # The phase's end reports, then its evaluation.
        ("eval", 24),
        ("eval", 27, 1.0, 3),  # `step` counts the 3 episodes evaluated.
        ("call", 32),
        ("save", 32),  # checkpoint_every, in env steps trained.
        ("train", 35, 32.0, 1),
        ("call", 40),
        ("call", 48),
        ("train", 51, 44.0, 2),
        ("eval", 48),
        ("eval", 54, 1.0, 3),
        ("call", 56),  # The budget is reached inside the third phase: it ends there.
        ("train", 62, 56.0, 1),
        ("eval", 56),
        ("eval", 81, 1.0, 3),  # `step` moved to that phase's end: 3 x (24 + 3).
    ]
    train = [event for event in run.events if event[0] == "train"]
    assert all(event[3] >= 1 for event in train)


def test_a_resumed_run_evaluates_first_where_its_checkpoint_ended_a_phase():
    # Saved after the first phase's last call, before its evaluation.
    run = _FakeRun(dict(CONFIG, train_steps=48), step=24, env_steps=24)
    events = _run(run)
    assert events[:2] == [("eval", 24), ("eval", 27, 1.0, 3)]
    assert [event for event in events if event[0] == "call"][-1] == ("call", 48)
    assert events[-1] == ("eval", 54, 1.0, 3)


def test_a_larger_budget_after_a_cut_phase_keeps_the_cycle():
    # The run above ended at 56 env steps with `step` 81; resumed with a larger budget, its
    # phases still end at `step` multiples of 27: an evaluation after every 3 calls, and the
    # checkpoints follow the phases' steps (96 = 4 phases of 24, the call at 80 env steps).
    run = _FakeRun(dict(CONFIG, train_steps=80), step=81, env_steps=56)
    events = [event for event in _run(run) if len(event) == 2]
    assert events == [("call", 64), ("call", 72), ("call", 80), ("save", 80), ("eval", 80)]


def test_a_stop_ends_the_loop_between_two_calls():
    run = _FakeRun(CONFIG)
    asked = []

    def stop() -> bool:
        asked.append(run.env_steps)
        return run.env_steps >= 16

    events = _run(run, stop)
    assert events == [("call", 8), ("call", 16), ("train", 16, 12.0, 2)]
    assert asked == [0, 8, 16]
