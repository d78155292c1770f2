"""NAVIX, a JAX MiniGrid, beside ours: its envs stepped under random actions, and its own PPO
(`navix.agents.PPO`); runs from the repository's root under a Python that has navix.

    python -m benchmarks.navix_driver step ENV_ID ENVS STEPS SEED  # prints one JSON line
    python -m benchmarks.navix_driver ppo ENV_ID BUDGET SEED       # prints one JSON line

ENV_ID is minigrid's id (`MiniGrid-DoorKey-8x8-v0`); NAVIX's env of that task is `Navix-` in
place of `MiniGrid-`, made with minigrid's time limit (DoorKey: 10 x size x size steps; NAVIX's
`make` defaults to 100) and the symbolic 7x7 first-person view NAVIX's PPO example trains on
(`observations.symbolic_first_person`, flattened for PPO as that example does).

`step`: ENVS envs (`jax.vmap` of `env.step`, NAVIX's autoreset included) take STEPS batch steps
of uniformly random actions in one `jax.jit` call (a `lax.scan`); the first call compiles and is
timed apart, the figure is the median env steps/s of the `REPEATS` calls after it.

`ppo`: `navix.agents.PPO` with its `PPOHparams` defaults (16 envs x 128 steps an update, 8
minibatches, 1 epoch, learning rate 2.5e-4 annealed, entropy 0.01, `ActorCritic`'s 64-unit tanh
MLPs) at BUDGET env steps, its whole `train` one jitted call, compiled (timed apart) then run.
The final success and return are those of the episodes that ended in the updates of the last
`FINAL_WINDOW` env steps (the steps of one training report of ours), read as NAVIX's own logger
reads an update's (its reward is 1 on reaching the goal, so success is a return > 0).

It imports nothing of `agents` or of the other benchmarks.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from importlib import metadata

REPEATS = 5
FINAL_WINDOW = 65_536  # Env steps whose finished episodes make the final success and return.
PACKAGES = ("navix", "jax", "jaxlib", "flax", "optax", "distrax", "rlax")
_DOORKEY = re.compile(r"MiniGrid-DoorKey-(\d+)x\1-v0")


def navix_id(env_id: str) -> str:
    """NAVIX's id of minigrid's `env_id`: `Navix-` in place of `MiniGrid-`.

    Raises:
        ValueError: `env_id` is not a minigrid id.
    """
    if not env_id.startswith("MiniGrid-"):
        raise ValueError(f"env id {env_id!r} is not minigrid's; expected MiniGrid-<task>-v<n>")
    return "Navix-" + env_id[len("MiniGrid-") :]


def max_steps(env_id: str) -> int:
    """minigrid's time limit of `env_id` (DoorKey: 10 x size x size).

    Raises:
        ValueError: `env_id` is not a DoorKey id, the only task whose limit is known here.
    """
    found = _DOORKEY.fullmatch(env_id)
    if not found:
        raise ValueError(f"env id {env_id!r} has no known time limit; expected a DoorKey id")
    return 10 * int(found.group(1)) ** 2


def versions() -> dict[str, str]:
    """The installed version of each package this driver measures."""
    return {name: metadata.version(name) for name in PACKAGES}


def _make(env_id: str, flatten: bool):
    import jax.numpy as jnp
    import navix
    import numpy as np
    from navix import observations

    env = navix.make(
        navix_id(env_id),
        max_steps=max_steps(env_id),
        observation_fn=observations.symbolic_first_person,
    )
    if not flatten:
        return env
    view = env.observation_fn  # As NAVIX's PPO example's FlattenObsWrapper.
    return env.replace(
        observation_fn=lambda state: jnp.ravel(view(state)),
        observation_space=env.observation_space.replace(
            shape=(int(np.prod(env.observation_space.shape)),)
        ),
    )


def step(env_id: str, envs: int, steps: int, seed: int) -> dict:
    """Median env steps/s of `envs` NAVIX envs over `REPEATS` jitted calls of `steps` random
    batch steps, and the seconds of the first (compiling) call."""
    import jax

    env = _make(env_id, flatten=False)
    actions = len(env.action_set)

    @jax.jit
    def call(timestep, key):
        def body(timestep, key):
            action = jax.random.randint(key, (envs,), 0, actions)
            return jax.vmap(env.step)(timestep, action), None

        timestep, _ = jax.lax.scan(body, timestep, jax.random.split(key, steps))
        return timestep

    key = jax.random.PRNGKey(seed)
    timestep = jax.vmap(env.reset)(jax.random.split(key, envs))
    start = time.perf_counter()
    timestep = jax.block_until_ready(call(timestep, jax.random.fold_in(key, 0)))
    compile_seconds = time.perf_counter() - start
    rates = []
    for repeat in range(REPEATS):
        start = time.perf_counter()
        timestep = jax.block_until_ready(call(timestep, jax.random.fold_in(key, repeat + 1)))
        rates.append(envs * steps / (time.perf_counter() - start))
    return dict(
        steps_per_second=statistics.median(rates),
        compile_seconds=compile_seconds,
        repeats=REPEATS,
        versions=versions(),
    )


def ppo(env_id: str, budget: int, seed: int) -> dict:
    """`navix.agents.PPO` with its defaults for `budget` env steps: compile and training
    seconds, the env steps it took, and the success rate and mean return of the episodes that
    ended in its last `FINAL_WINDOW` env steps (None where none did)."""
    import jax
    import numpy as np
    from navix.agents import PPO, ActorCritic, PPOHparams

    env = _make(env_id, flatten=True)
    agent = PPO(
        hparams=PPOHparams(budget=budget),
        network=ActorCritic(action_dim=len(env.action_set)),
        env=env,
    )
    key = jax.random.PRNGKey(seed)
    start = time.perf_counter()
    train = jax.jit(agent.train).lower(key).compile()
    compile_seconds = time.perf_counter() - start
    start = time.perf_counter()
    state, logs = jax.block_until_ready(train(key))
    train_seconds = time.perf_counter() - start
    hparams = agent.hparams
    updates = max(1, FINAL_WINDOW // (hparams.num_envs * hparams.num_steps))
    done = np.asarray(logs["done_mask"][-updates:], dtype=bool)  # [updates, steps, envs].
    returns = np.asarray(logs["returns"][-updates:])[done]
    return dict(
        steps=int(state.frames),
        compile_seconds=compile_seconds,
        train_seconds=train_seconds,
        episodes=int(returns.size),
        final_success=float(np.mean(returns > 0)) if returns.size else None,
        final_return=float(np.mean(returns)) if returns.size else None,
        window=updates * hparams.num_envs * hparams.num_steps,
        hparams={k: v for k, v in vars(hparams).items() if not k.startswith("_")},
        versions=versions(),
    )


def parse(argv: list[str]) -> tuple:
    """(mode function, its arguments) of the command line `argv` (without the program).

    Raises:
        ValueError: An unknown mode, or the wrong number of arguments for it.
    """
    modes = {"step": (step, (str, int, int, int)), "ppo": (ppo, (str, int, int))}
    if not argv or argv[0] not in modes:
        mode = argv[0] if argv else ""
        raise ValueError(f"mode {mode!r} is not one of {sorted(modes)}")
    function, types = modes[argv[0]]
    if len(argv) - 1 != len(types):
        raise ValueError(f"mode {argv[0]!r} takes {len(types)} arguments, got {argv[1:]}")
    return function, tuple(kind(value) for kind, value in zip(types, argv[1:]))


if __name__ == "__main__":
    function, arguments = parse(sys.argv[1:])
    print(json.dumps(function(*arguments)), flush=True)
