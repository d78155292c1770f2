"""BatchEnv.waiting: which env call is in progress and since when, read from another thread."""

import threading
import time

import numpy as np

from agents import tools


class _SlowEnv(tools.MockEnvironment):
    """Its step lasts until the test releases it (a load-proof stand-in for a slow env)."""

    release = threading.Event()

    def step(self, action):
        assert self.release.wait(timeout=60)
        return super().step(action)


def test_waiting_names_the_env_in_its_call_and_is_none_after():
    envs = [tools.MockEnvironment((3,), (2,), 5, 5), _SlowEnv((3,), (2,), 5, 5)]
    batch = tools.BatchEnv(envs, blocking=True, name="train")
    batch.reset()
    assert batch.waiting() is None
    _SlowEnv.release.clear()
    stepping = threading.Thread(target=batch.step, args=(np.zeros((2, 2), np.float32),))
    started = time.monotonic()
    stepping.start()
    time.sleep(0.3)
    waiting = batch.waiting()
    elapsed = time.monotonic() - started
    _SlowEnv.release.set()
    stepping.join()
    assert waiting.name == "Train environment 1" and waiting.method == "step"
    assert 0.1 < waiting.seconds <= elapsed  # Since the call began, inside the test's window.
    assert batch.waiting() is None
