"""A native env whose construction takes an hour, for `--set env=tests.scripts.slow_start_envs:...`:
a run's start-up that a stop signal must cut short."""

import time

from agents import envs
from tests.scripts.native_envs import Corridor

STARTING = "SlowStart: constructing"  # Printed on stdout when its construction begins.


class SlowStart(Corridor):
    """The corridor, built in an hour (as a simulator loading its assets for long)."""

    def __init__(self):
        print(STARTING, flush=True)
        time.sleep(3600)


envs.register("SlowStart-v0", SlowStart)
