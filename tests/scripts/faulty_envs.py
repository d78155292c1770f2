"""Tiny gymnasium environments that fail on purpose, for the fault-injection tests.

Each is registered on import; `--set env=tests.scripts.faulty_envs:<Name>` makes gymnasium import
this module, in an environment's child process too. In a training run only the training env of
index 1 misbehaves: `Run` resets train env i with seed i (for `--seed=0`), and eval envs with
seeds from 10000. It does so after `FAULT_AFTER` steps of its own, in the first train phase of the
`debug` config (64 steps of each of its 2 envs) and after a checkpoint at 64 train env steps (with
`--set checkpoint_every=64`).
"""

import multiprocessing
import os
import signal
import time

import gymnasium as gym
import numpy as np

FAULTY_SEED = 1
FAULT_AFTER = 40  # The faulty env's steps before its fault (over episodes).
EPISODE_LENGTH = 15
FAULTS = (
    "none",
    "step",
    "reset",
    "nan_observ",
    "far_observ",
    "nan_reward",
    "huge_reward",
    "kill",
    "exit",
    "hang",
    "close",
)
BAD_RESULTS = ("bad_shape", "old_api", "array_reward", "string_observ")
KILL_TIME_FILE = "FAULTY_ENVS_KILL_TIME_FILE"  # Environment variable: where "kill" notes its time.
HANG_FILE = "FAULTY_ENVS_HANG_FILE"  # Environment variable: where "hang" notes that it hangs.


class FaultyEnv(gym.Env):
    """A trivial continuous-control task whose env reset with seed 1 fails as `fault` says.

    Faults: "step" and "reset" raise, "nan_observ" and "nan_reward" return NaN or infinity,
    "far_observ" an observation of 1e30 in a space bounded by [-1, 1],
    "huge_reward" returns finite rewards whose sums overflow float32, "kill" ends its process with
    SIGKILL (only in an env child process, never in the test's own) after writing the time to the
    file named by the environment variable `KILL_TIME_FILE`, if set; "exit" ends it likewise with
    `os._exit(3)` mid-step (no cleanup, as a crashing extension does); "hang" sleeps for an hour
    in `step` after writing the file named by `HANG_FILE`, if set; "close" raises in `close`.
    The faults of `BAD_RESULTS` return from `step` what the gymnasium API or the observation
    space do not allow: an observation of another shape, 4 values, an array reward, a string.
    """

    observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    # Its own episode limit, declared as MiniGrid's envs declare theirs (no TimeLimit wrapper,
    # whose unpacking would meet a bad step result first): evaluation can bound its episodes.
    max_steps = EPISODE_LENGTH

    def __init__(self, fault: str) -> None:
        assert fault in FAULTS + BAD_RESULTS, fault
        self._fault = fault
        self._faulty = False
        self._steps = 0
        self._episode_steps = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self._faulty = seed == FAULTY_SEED
        if self._due("reset"):
            raise RuntimeError(f"injected fault in reset after {self._steps} steps")
        self._episode_steps = 0
        return self._observ(), {}

    def step(self, action):
        self._steps += 1
        self._episode_steps += 1
        if self._due("step"):
            raise RuntimeError(f"injected fault in step {self._steps}")
        if self._due("kill") and multiprocessing.parent_process() is not None:
            if os.environ.get(KILL_TIME_FILE):
                with open(os.environ[KILL_TIME_FILE], "w") as handle:
                    handle.write(repr(time.time()))
            os.kill(os.getpid(), signal.SIGKILL)
        if self._due("exit") and multiprocessing.parent_process() is not None:
            if os.environ.get(KILL_TIME_FILE):
                with open(os.environ[KILL_TIME_FILE], "w") as handle:
                    handle.write(repr(time.time()))
            os._exit(3)
        if self._due("hang"):
            if os.environ.get(HANG_FILE):
                with open(os.environ[HANG_FILE], "w") as handle:
                    handle.write(str(os.getpid()))
            time.sleep(3600)
        observ = self._observ()
        reward = -float(np.square(action).sum())
        if self._due("bad_shape"):
            observ = np.zeros(4, np.float32)
        if self._due("string_observ"):
            observ = "observation"
        if self._due("array_reward"):
            reward = np.array([reward, reward])
        if self._due("old_api"):
            return observ, reward, False, {}
        if self._due("nan_observ"):
            observ[1] = np.nan
        if self._due("far_observ"):
            observ[0] = 1e30
        if self._due("nan_reward"):
            reward = float("inf")
        if self._due("huge_reward"):
            reward = 3e38
        return observ, reward, self._episode_steps >= EPISODE_LENGTH, False, {}

    def close(self):
        if self._fault == "close":
            raise RuntimeError("injected fault in close")

    def _due(self, fault: str) -> bool:
        return self._faulty and self._fault == fault and self._steps >= FAULT_AFTER

    def _observ(self) -> np.ndarray:
        return self.np_random.uniform(-1.0, 1.0, 3).astype(np.float32)


class DictObservationEnv(FaultyEnv):
    """A dict observation with a key that PPO does not read (a Text)."""

    observation_space = gym.spaces.Dict(
        {"position": FaultyEnv.observation_space, "mission": gym.spaces.Text(8)}
    )

    def _observ(self) -> dict:
        return {"position": super()._observ(), "mission": "go"}


class TupleActionEnv(FaultyEnv):
    """An action space that PPO does not support."""

    action_space = gym.spaces.Tuple((gym.spaces.Discrete(2), gym.spaces.Discrete(3)))


class BytesObservationEnv(FaultyEnv):
    """uint8 observations (as pixels are), but few, for a fast feed-forward run."""

    observation_space = gym.spaces.Box(0, 255, (3,), np.uint8)

    def _observ(self) -> np.ndarray:
        return self.np_random.integers(0, 256, 3).astype(np.uint8)


def env_id(name: str) -> str:
    """The id that makes gymnasium import this module, for `--set env=...`."""
    return f"{__name__}:{name}"


for _fault in FAULTS + BAD_RESULTS:
    gym.register(f"Faulty-{_fault}-v0", FaultyEnv, kwargs={"fault": _fault})
gym.register("DictObservation-v0", lambda: DictObservationEnv("step"))
gym.register("TupleAction-v0", lambda: TupleActionEnv("step"))
# Episodes that end on their own, with no limit declared: evaluation cannot bound them.
gym.register(
    "Unlimited-v0",
    type("UnlimitedEnv", (FaultyEnv,), {"max_steps": None}),
    kwargs={"fault": "none"},
)
gym.register("BytesObservation-v0", lambda: BytesObservationEnv("none"), max_episode_steps=20)
