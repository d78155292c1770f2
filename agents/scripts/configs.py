"""Training configurations: one function per task, each returning plain serializable values.

Each task states only what differs from `default` (the schema's defaults, `agents/config/schema.py`,
which also documents every key). Optimizer and network are named, not constructed, so a config
round-trips through `config.yaml`. Values are overridden on the command line with `--set`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from agents.config import schema


def _task(parent: Callable[[], dict[str, Any]] | None = None):
    """Decorates a function returning a task's differences from `parent` (default: `default`).

    The decorated function returns the full config; its source states only what differs.
    """

    def decorate(differences: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
        @functools.wraps(differences)
        def config() -> dict[str, Any]:
            return {**(parent or default)(), **differences()}

        config.differences = differences
        config.parent = parent or default
        return config

    return decorate


def default() -> dict[str, Any]:
    """Defaults shared by every task (PPO as in the reference implementations); see schema.py."""
    return schema.defaults()


@_task()
def debug() -> dict[str, Any]:
    """Tiny sizes for smoke tests (Pendulum, 256 env steps)."""
    return dict(
        num_agents=2,
        eval_agents=2,
        train_steps=256,
        train_every=128,
        eval_episodes=2,
        log_every=128,  # A train report per phase: the smoke tests' reports stay few.
        checkpoint_every=128,
        policy_layers=[8],
        value_layers=[8],
        rollout_length=16,
        update_epochs=2,
        num_minibatches=2,
    )


@_task()
def pendulum() -> dict[str, Any]:
    """Pendulum-v1 in 100k env steps (measured times: docs/results/learning.md)."""
    # gSDE redrawn every 2 steps: a better ten-seed median than per-step noise or every 4 steps.
    return dict(
        discount=0.9,
        # Rollouts of 64 steps make twice the updates of 128; with 128 some seeds never swing up.
        rollout_length=64,
        num_minibatches=16,
        learning_rate=1e-3,
        learning_rate_schedule="linear",
        init_std=0.7,
        sde_sample_freq=2,
    )


@_task()
def cartpole() -> dict[str, Any]:
    """CartPole-v1 in 60k env steps."""
    # Two minibatches of 256 per epoch (RL-Zoo's batch size): one of 512 left some seeds short.
    return dict(
        env="CartPole-v1",
        train_steps=60_000,
        rollout_length=32,
        update_epochs=20,
        num_minibatches=2,
        discount=0.98,
        gae_lambda=0.8,
        learning_rate=1e-3,
        learning_rate_schedule="linear",
        normalize_observ=False,
        normalize_reward=False,
    )


@_task()
def minigrid_rnd() -> dict[str, Any]:
    """A sparse-reward pixel task with RND exploration (`pip install -e .[minigrid]`).

    MiniGrid's partial view (7x7 cells) as 56x56 grayscale frames of a 14x14-cell room; the only
    reward is for reaching the goal in the far corner, and episodes are cut at 100 steps, so a
    random walk almost never finds it (in a smaller room the control finds it by chance too).
    The frames are a grid of 8x8-pixel tiles, so the convolutions read them tile by tile
    (`conv_stack="tiles8"`: an eighth of the DQN stack's multiply-adds).
    """
    return dict(
        agent="rnd_ppo",
        env="MiniGrid-Empty-16x16-v0",
        env_wrapper="minigrid_pixels",
        max_episode_steps=100,
        train_steps=200_000,
        train_every=20_480,
        chunk_length=16,
        update_epochs=4,
        num_minibatches=4,
        entropy_coef=0.01,
        normalize_observ=False,  # Pixels: the network scales frames, RND normalizes its own input.
        normalize_reward=False,
        rnd_feature_size=128,
        rnd_init_steps=512,
        conv_stack="tiles8",
        success_score=0.0,  # The goal's reward, 1 - 0.9 t / T, is the only one.
    )


@_task(minigrid_rnd)
def minigrid() -> dict[str, Any]:
    """The control of `minigrid_rnd`: the same agent without intrinsic reward."""
    return dict(int_coef=0.0)


# Tiny sizes of the CNN+GRU agent with RND, for smoke tests of the pixel configs.
TINY_RND = dict(
    num_agents=2,
    eval_agents=2,
    train_steps=128,
    train_every=64,
    eval_episodes=2,
    log_every=64,
    rollout_length=32,
    chunk_length=8,
    num_minibatches=2,
    update_epochs=1,
    hidsize=16,
    memsize=16,
    rnd_feature_size=16,
    rnd_init_steps=10,
)


@_task(minigrid_rnd)
def debug_rnd() -> dict[str, Any]:
    """`minigrid_rnd` at tiny sizes, for smoke tests."""
    return dict(TINY_RND)


@_task()
def montezuma_rnd() -> dict[str, Any]:
    """Montezuma's Revenge in the spirit of the RND paper (`pip install -e .[atari]`).

    84x84 grayscale, 4 stacked frames, frame skip 4, sticky actions (ALE v5), episodes cut at
    4,500 steps as the paper's code cuts them (ALE's own cap is 27,000 steps, and a deterministic
    policy that stands still plays all of them in each evaluation). Real runs need far
    more than a laptop: the paper used 128 envs x 128 steps per update, 4 epochs, 4
    minibatches, lr 1e-4, gamma_ext 0.999, gamma_int 0.99, policy_size "normal" (hidsize and
    memsize 256 after scaling), rnd_init_steps 128 x 50, and about 2 billion frames; scale
    num_agents, train_steps and policy_size up for that.
    """
    return dict(
        agent="rnd_ppo",
        env="ALE/MontezumaRevenge-v5",
        env_wrapper="atari",
        num_agents=32,
        eval_agents=4,
        eval_episodes=4,
        max_episode_steps=4500,
        train_steps=10_000_000,
        train_every=100_000,
        log_every=10_000,
        checkpoint_every=100_000,
        chunk_length=32,
        update_epochs=4,
        num_minibatches=4,
        discount=0.999,
        learning_rate=1e-4,
        entropy_coef=0.001,
        normalize_observ=False,
        normalize_reward=False,
        policy_size="normal",
        rnd_init_steps=128 * 50,
    )


def _mujoco(env: str, **differences: Any) -> dict[str, Any]:
    """What the MuJoCo tasks (gymnasium v5) differ in from `default`: 1M env steps."""
    mujoco = dict(
        env=env,
        num_agents=8,
        train_steps=1_000_000,
        train_every=50_000,
        rollout_length=256,
        checkpoint_every=100_000,
    )
    return {**mujoco, **differences}


# The untuned MuJoCo tasks anneal the learning rate linearly, as CleanRL and TF-Agents do.
_LINEAR = dict(learning_rate_schedule="linear")

# RL-Zoo's tuned PPO shares these for HalfCheetah, Hopper and Walker2d: 256x256 ReLU networks, a
# narrow initial policy (log-std -2: std 0.135) and a constant rate. The zoo runs 1 env x 512
# steps per update; 8 envs x 64 steps keep the 512 steps per update and batch the envs.
_ZOO = dict(
    rollout_length=64,
    policy_layers=[256, 256],
    value_layers=[256, 256],
    activation="relu",
    init_std=0.135,
)


@_task()
def reacher() -> dict[str, Any]:
    """Reacher-v5, 500k env steps (`pip install -e .[mujoco]`)."""
    return _mujoco("Reacher-v5", train_steps=500_000, **_LINEAR)


# RL-Zoo's tuned HalfCheetah PPO beyond the network: 8 minibatches of 64 and 20 epochs per 512
# env steps, a small constant rate, clip 0.1, short horizons (gamma 0.98, lambda 0.92).
_ZOO_CHEETAH = dict(
    _ZOO,
    num_minibatches=8,
    update_epochs=20,
    learning_rate=2e-5,
    clip_ratio=0.1,
    discount=0.98,
    gae_lambda=0.92,
    max_grad_norm=0.8,
    value_coef=0.58,
    entropy_coef=0.0004,
)


@_task()
def cheetah() -> dict[str, Any]:
    """HalfCheetah-v5, 1M env steps, RL-Zoo's tuned settings (`pip install -e .[mujoco]`)."""
    # RL-Zoo's tuning: the untuned settings reach less than half its score at 1M env steps.
    return _mujoco("HalfCheetah-v5", **_ZOO_CHEETAH)


@_task()
def walker() -> dict[str, Any]:
    """Walker2d-v5, 1M env steps (`pip install -e .[mujoco]`)."""
    return _mujoco("Walker2d-v5", **_LINEAR)


@_task()
def hopper() -> dict[str, Any]:
    """Hopper-v5, 1M env steps (`pip install -e .[mujoco]`)."""
    return _mujoco("Hopper-v5", **_LINEAR)


@_task()
def ant() -> dict[str, Any]:
    """Ant-v5, 1M env steps, the cheetah's tuned settings (`pip install -e .[mujoco]`)."""
    # The cheetah's tuning carries over: several times the untuned settings' score at 1M steps.
    return _mujoco("Ant-v5", **_ZOO_CHEETAH)


@_task()
def humanoid() -> dict[str, Any]:
    """Humanoid-v5, 5M env steps, 256x256 layers (`pip install -e .[mujoco]`)."""
    return _mujoco("Humanoid-v5", train_steps=5_000_000, policy_layers=[256, 256], **_LINEAR)


# Native environments (`agents.envs`, native_env=True): the env is TensorFlow ops, so each training
# call (rollout and update) is one XLA program; envs are cheap, so batches are wide and the
# update's epochs few. Scored on gymnasium's env of the same id (`benchmarks/native.py`).
# Several rollouts per call and rare checkpoints keep Python's share of the time small.
_NATIVE = dict(
    native_env=True,
    rollouts_per_call=8,
    checkpoint_every=100_000,
    eval_agents=20,
    eval_episodes=20,
)


@_task(cartpole)
def cartpole_native() -> dict[str, Any]:
    """CartPole-v1 as TensorFlow ops, 500k env steps."""
    return dict(
        **_NATIVE,
        train_steps=491_520,  # 60 calls of 8 x 16 x 64 steps, within 500k.
        train_every=98_304,
        num_agents=64,
        rollout_length=16,
        update_epochs=4,
    )


@_task(cartpole_native)
def cartpole_native_fast() -> dict[str, Any]:
    """CartPole-v1 as TensorFlow ops for env steps/s: 10M env steps, one epoch a rollout."""
    # Wide batches and a single pass over each: the update's share of a call falls from most of
    # it to about half; it needs more env steps to solve, which are cheap here.
    return dict(
        train_steps=9_961_472,  # 304 calls of 8 x 16 x 256 steps, within 10M.
        train_every=2_490_368,
        num_agents=256,
        update_epochs=1,
    )


@_task(pendulum)
def pendulum_native() -> dict[str, Any]:
    """Pendulum-v1 as TensorFlow ops, 100k env steps."""
    return dict(_NATIVE, rollouts_per_call=5, train_every=20_480)


@_task()
def acrobot_native() -> dict[str, Any]:
    """Acrobot-v1 as TensorFlow ops, 1M env steps (RL-Zoo's PPO, wider batch, higher rate)."""
    return dict(
        env="Acrobot-v1",
        **_NATIVE,
        train_steps=983_040,
        train_every=196_608,  # 983,040 steps in 5 phases, within 1M.
        num_agents=64,
        rollout_length=64,
        update_epochs=4,
        gae_lambda=0.94,
        learning_rate=1e-3,  # Above RL-Zoo's constant 3e-4 in a 3-seed comparison at 1M steps.
        learning_rate_schedule="linear",
    )


@_task()
def mountaincar_native() -> dict[str, Any]:
    """MountainCar-v0 as TensorFlow ops, 1M env steps (RL-Zoo's PPO, wider batch, higher rate)."""
    return dict(
        env="MountainCar-v0",
        **_NATIVE,
        train_steps=983_040,
        train_every=196_608,  # 983,040 steps in 5 phases, within 1M.
        num_agents=64,
        rollout_length=16,
        update_epochs=4,
        num_minibatches=4,
        gae_lambda=0.98,
        learning_rate=1e-3,  # Above RL-Zoo's 3e-4 in a 3-seed comparison at 1M steps.
        normalize_reward=False,
    )


@_task()
def mountaincar_continuous_native() -> dict[str, Any]:
    """MountainCarContinuous-v0 as TensorFlow ops, 262k env steps."""
    # Wide Gaussian noise on 64 envs finds the flag in the first rollouts; gSDE with RL-Zoo's
    # small initial noise settled on standing still (0.0) here.
    return dict(
        _NATIVE,
        env="MountainCarContinuous-v0",
        rollouts_per_call=2,
        train_steps=262_144,
        train_every=65_536,
        num_agents=64,
        rollout_length=64,
        num_minibatches=16,
    )


# Native MiniGrid (`agents.envs.gridworld`): minigrid's rules as TensorFlow ops, its symbolic 7x7
# view, resets from banks of minigrid's own layouts; scored on minigrid's env of the same id
# (`benchmarks/exploration.py`). MLPs on the flattened view, XLA over the whole call.
_MINIGRID_NATIVE = dict(
    native_env=True,
    rollouts_per_call=4,
    checkpoint_every=1_000_000,
    num_agents=128,
    update_epochs=4,
    num_minibatches=8,
    entropy_coef=0.01,
    policy_layers=[128, 128],
    value_layers=[128, 128],
    normalize_reward=False,  # Sparse rewards in (0, 1]: scaling by the return's std inflates them.
    eval_agents=32,
    eval_episodes=32,
    success_score=0.0,  # minigrid rewards only reaching the goal, with 1 - 0.9 t / T > 0.
)


@_task()
def doorkey_native() -> dict[str, Any]:
    """MiniGrid-DoorKey-5x5 as TensorFlow ops with plain PPO: pick up the key, open the door."""
    return dict(
        _MINIGRID_NATIVE,
        env="MiniGrid-DoorKey-5x5-v0",
        train_steps=786_432,  # 12 calls of 4 x 128 x 128 steps, 3 phases.
        train_every=262_144,
    )


# RND on native MiniGrid: the symbolic view through RND's MLP torso, the whole call one XLA
# program; its control is the same agent with int_coef=0. The extrinsic return is discounted by
# 0.999, the RND paper's gamma_ext: with 0.99 a goal hundreds of steps away is worth ~0.05 and
# the intrinsic advantage drowns it (on DoorKey-16x16 RND then never reaches the goal). The
# intrinsic weight falls linearly to 0 over the run: with a constant weight the bonus keeps
# steering the final policy, and on MultiRoom-N4-S5-v1 the deterministic policy's success fell
# short of the control's (RND 0.89-0.90, NovelD 0.71, against 0.94-0.95 RND and 0.92-0.94
# NovelD with the schedule, seeds 0 and 1: the exploration page's ablation).
_MINIGRID_RND = dict(
    _MINIGRID_NATIVE,
    agent="rnd_ppo",
    discount=0.999,
    int_coef_schedule="linear",
    update_compiler="xla",
    rnd_hidden=128,
    rnd_feature_size=64,
    rnd_init_steps=128,
    train_steps=9_830_400,  # 10 phases of 15 calls of 4 x 128 x 128 steps, within 10M.
    train_every=983_040,
)


# The frontier of published exploration work (BeBold/NovelD, DEIR): where PPO alone rarely finds
# the goal within the budgets those papers give. These tasks train for 5M env steps with four
# times the other configs' updates per sample (32 minibatches, 4 epochs: 128 gradient steps per
# 65,536 samples; DEIR's scripts take 64 per 8,192): on KeyCorridorS4R3 the episodic count bonus
# then held training success 0.9 from 1.3M env steps where it needed 3.2-3.5M with 8
# minibatches, on MultiRoom-N6 from 0.5-0.7M (2 seeds each: the exploration page's ablation).
# NovelD keeps 8 minibatches: with 32 it never held 0.9 on KeyCorridorS4R3 within 5M (0.85 at
# the end), with 8 from 2.0-2.2M.
_FIVE_MILLION = dict(
    train_steps=4_915_200,  # 5 phases of 15 calls of 4 x 128 x 128 steps, within 5M.
    num_minibatches=32,
)


@_task()
def doorkey16_rnd() -> dict[str, Any]:
    """MiniGrid-DoorKey-16x16 with RND: a key, a locked door and a goal in a 16x16 grid, 5M env
    steps at four times the updates per sample (`_FIVE_MILLION`).

    A GRU on 32-step sequences, as `keycorridor_rnd`'s: with the MLP policy the count bonus held
    training success 1.0 from 0.3M env steps, yet its mode failed 13-25% of minigrid's
    episodes (0.75-0.87, 5 seeds), each failure a loop the memoryless argmax never leaves
    (turning left and right in place, or picking up or toggling nothing); with the GRU the mode
    scored 0.99 in both seeds tried (the exploration page's ablation)."""
    config = dict(
        _MINIGRID_RND,
        env="MiniGrid-DoorKey-16x16-v0",
        network="recurrent_categorical",
        chunk_length=32,
    )
    config.update(_FIVE_MILLION)
    del config["num_minibatches"]  # The default's 32, as `_FIVE_MILLION` asks.
    return config


@_task(doorkey16_rnd)
def doorkey16() -> dict[str, Any]:
    """The control of `doorkey16_rnd`: the same agent without intrinsic reward."""
    return dict(int_coef=0.0)


@_task(doorkey16_rnd)
def doorkey16_noveld() -> dict[str, Any]:
    """`doorkey16_rnd` with NovelD's episodic bonus in place of RND's, at 8 minibatches (see
    `_FIVE_MILLION`)."""
    return dict(bonus="noveld", num_minibatches=8)


@_task(doorkey16_rnd)
def doorkey16_count() -> dict[str, Any]:
    """`doorkey16_rnd` with the episodic count bonus in place of RND's."""
    return dict(bonus="count")


@_task()
def keycorridor_rnd() -> dict[str, Any]:
    """MiniGrid-KeyCorridorS3R3 with RND: fetch a key from a side room to reach the ball.

    A GRU after the MLP torso: with the key in hand the locked door is often out of view,
    and a policy without memory walks in circles (the MLP policy's mode succeeded in 60-83%
    of episodes, sampling in 84-92%). The GRU learns through time on 32-step sequences: on
    one-step sequences (the default `chunk_length=1`) its memory got no gradient, and on
    KeyCorridorS4R3 the mode got stuck where samples escaped (dropping with empty hands, the
    policy's choice 77% of the time there, or turning in a loop): RND's mode 0.73-0.96
    against samples 0.83-0.99, 2 of 5 seeds at 0.9; on 32-step sequences 0.83-0.95, 4 of 5
    at 0.9 (the exploration page's ablation), for more time per env step."""
    return dict(
        _MINIGRID_RND,
        env="MiniGrid-KeyCorridorS3R3-v0",
        network="recurrent_categorical",
        chunk_length=32,
        train_steps=19_922_944,  # 19 phases of 16 calls, within 20M.
        train_every=1_048_576,
    )


@_task(keycorridor_rnd)
def keycorridor() -> dict[str, Any]:
    """The control of `keycorridor_rnd`."""
    return dict(int_coef=0.0)


@_task(keycorridor_rnd)
def keycorridor_noveld() -> dict[str, Any]:
    """`keycorridor_rnd` with NovelD's episodic bonus in place of RND's."""
    return dict(bonus="noveld")


@_task()
def multiroom_rnd() -> dict[str, Any]:
    """MiniGrid-MultiRoom-N4-S5-v1 (four rooms, minigrid 3.1's fix of v0's six) with RND.

    A GRU after the MLP torso, as in KeyCorridor: without memory the policy's mode falls short
    of its samples. On MultiRoom-N6 (20M env steps) the MLP's mode succeeded in 0.85 of
    episodes where its samples reached 0.95-0.97; with the GRU the mode reached 0.98-1.00 (RND
    seed 0, NovelD seeds 0 and 1: the exploration page's ablation)."""
    return dict(_MINIGRID_RND, env="MiniGrid-MultiRoom-N4-S5-v1", network="recurrent_categorical")


@_task(multiroom_rnd)
def multiroom() -> dict[str, Any]:
    """The control of `multiroom_rnd`."""
    return dict(int_coef=0.0)


@_task(multiroom_rnd)
def multiroom_noveld() -> dict[str, Any]:
    """`multiroom_rnd` with NovelD's episodic bonus in place of RND's."""
    return dict(bonus="noveld")


# KeyCorridorS4R3 and MultiRoom-N6 at the frontier's budget (see `_FIVE_MILLION`).
@_task(keycorridor_rnd)
def keycorridor_s4_rnd() -> dict[str, Any]:
    """MiniGrid-KeyCorridorS4R3 with RND: `keycorridor_rnd` in rooms of size 4 (a 10x10 grid),
    5M env steps at four times the updates per sample."""
    return dict(_FIVE_MILLION, env="MiniGrid-KeyCorridorS4R3-v0", train_every=983_040)


@_task(keycorridor_s4_rnd)
def keycorridor_s4() -> dict[str, Any]:
    """The control of `keycorridor_s4_rnd`."""
    return dict(int_coef=0.0)


@_task(keycorridor_s4_rnd)
def keycorridor_s4_noveld() -> dict[str, Any]:
    """`keycorridor_s4_rnd` with NovelD's episodic bonus in place of RND's, at the named
    configs' 8 minibatches (see `_FIVE_MILLION`)."""
    return dict(bonus="noveld", num_minibatches=8)


@_task(keycorridor_s4_rnd)
def keycorridor_s4_count() -> dict[str, Any]:
    """`keycorridor_s4_rnd` with the episodic count bonus (1/sqrt of the visits in the episode)
    in place of RND's: no RND network is built or trained."""
    return dict(bonus="count")


@_task(keycorridor_s4_rnd)
def keycorridor_s4_e3b() -> dict[str, Any]:
    """`keycorridor_s4_rnd` with E3B's elliptical episodic bonus in place of RND's: an embedding
    trained by inverse dynamics, no RND network.

    With a 32-dim embedding E3B never solved this task within 5M env steps (training success
    never above 0.8%: four runs under RND's return scaling, one under its reference's); with 256
    dims (its reference's is 1,024) the sampled policy solved 0.81 and 1.00 of minigrid's
    episodes under RND's return scaling, 0.97 and 0.98 under its reference's (the modes 0.31,
    0.97 and 0.66, 0.83; 2 seeds each: the exploration page's ablation)."""
    return dict(bonus="e3b")


@_task(multiroom_rnd)
def multiroom_n6_rnd() -> dict[str, Any]:
    """MiniGrid-MultiRoom-N6 with RND: six rooms in a 25x25 grid, 120 steps an episode; 5M env
    steps at four times the updates per sample (`_FIVE_MILLION`)."""
    return dict(_FIVE_MILLION, env="MiniGrid-MultiRoom-N6-v0")


@_task(multiroom_n6_rnd)
def multiroom_n6() -> dict[str, Any]:
    """The control of `multiroom_n6_rnd`."""
    return dict(int_coef=0.0)


@_task(multiroom_n6_rnd)
def multiroom_n6_noveld() -> dict[str, Any]:
    """`multiroom_n6_rnd` with NovelD's episodic bonus in place of RND's, at 8 minibatches (as
    `keycorridor_s4_noveld`)."""
    return dict(bonus="noveld", num_minibatches=8)


@_task(multiroom_n6_rnd)
def multiroom_n6_count() -> dict[str, Any]:
    """`multiroom_n6_rnd` with the episodic count bonus in place of RND's (see
    `keycorridor_s4_count`)."""
    return dict(bonus="count")


@_task(multiroom_n6_rnd)
def multiroom_n6_e3b() -> dict[str, Any]:
    """`multiroom_n6_rnd` with E3B's elliptical episodic bonus in place of RND's."""
    return dict(bonus="e3b")


# Beyond the frontier: tasks published exploration work solves only with tens of millions of
# env steps (50M here), where RND alone is said to "hardly make progress" without an episodic term.
_FIFTY_MILLION = 49_283_072  # 47 phases of 16 calls of 4 x 128 x 128 steps, within 50M.


@_task(keycorridor_rnd)
def keycorridor_s5_rnd() -> dict[str, Any]:
    """MiniGrid-KeyCorridorS5R3 with RND: `keycorridor_rnd` in rooms of size 5 (a 13x13 grid),
    50M env steps."""
    return dict(env="MiniGrid-KeyCorridorS5R3-v0", train_steps=_FIFTY_MILLION)


@_task(keycorridor_s5_rnd)
def keycorridor_s5() -> dict[str, Any]:
    """The control of `keycorridor_s5_rnd`."""
    return dict(int_coef=0.0)


@_task(keycorridor_s5_rnd)
def keycorridor_s5_noveld() -> dict[str, Any]:
    """`keycorridor_s5_rnd` with NovelD's episodic bonus in place of RND's."""
    return dict(bonus="noveld")


# KeyCorridorS6R3 and ObstructedMaze-1Q at the budgets published episodic methods solve them in.
_TEN_MILLION = 9_437_184  # 9 phases of 16 calls of 4 x 128 x 128 steps, within 10M.
_TWENTY_MILLION = 19_922_944  # 19 phases of 16 calls, within 20M.


@_task(keycorridor_rnd)
def keycorridor_s6_rnd() -> dict[str, Any]:
    """MiniGrid-KeyCorridorS6R3 with RND: `keycorridor_rnd` in rooms of size 6 (a 16x16 grid),
    10M env steps at four times the updates per sample (see `_FIVE_MILLION`).

    The entropy bonus decays to zero over the run (`entropy_schedule: linear`): with it constant
    the count bonus's sampled policy solved 0.99-1.00 of minigrid's episodes in 5 of 5 seeds but
    its mode 0.75-0.90 (0 of 5 at >= 0.9); decayed, the mode scored 0.898-0.95 (4 of 5 at >= 0.9),
    5 seeds each (the exploration page's ablation)."""
    return dict(
        env="MiniGrid-KeyCorridorS6R3-v0",
        train_steps=_TEN_MILLION,
        num_minibatches=32,
        entropy_schedule="linear",
    )


@_task(keycorridor_s6_rnd)
def keycorridor_s6() -> dict[str, Any]:
    """The control of `keycorridor_s6_rnd`."""
    return dict(int_coef=0.0)


@_task(keycorridor_s6_rnd)
def keycorridor_s6_noveld() -> dict[str, Any]:
    """`keycorridor_s6_rnd` with NovelD's episodic bonus in place of RND's, at 8 minibatches
    (see `_FIVE_MILLION`)."""
    return dict(bonus="noveld", num_minibatches=8)


@_task(keycorridor_s6_rnd)
def keycorridor_s6_count() -> dict[str, Any]:
    """`keycorridor_s6_rnd` with the episodic count bonus in place of RND's."""
    return dict(bonus="count")


@_task(keycorridor_s6_rnd)
def obstructedmaze_rnd() -> dict[str, Any]:
    """MiniGrid-ObstructedMaze-2Dlh with RND: two locked doors lead out of the agent's room,
    each one's key hidden in a box to open; the ball to pick up is behind one of them.
    `keycorridor_s6_rnd`'s recipe (a GRU, 32 minibatches, the entropy bonus decayed to zero)
    at 20M env steps. With 8 minibatches and a constant entropy bonus at 50M, NovelD's training
    success peaked at 0.41 near 0.7M env steps, its policy's entropy then fell to ~0.1 and its
    mode scored 0.00 (one seed: the exploration page's superseded groups)."""
    return dict(env="MiniGrid-ObstructedMaze-2Dlh-v0", train_steps=_TWENTY_MILLION)


@_task(obstructedmaze_rnd)
def obstructedmaze() -> dict[str, Any]:
    """The control of `obstructedmaze_rnd`."""
    return dict(int_coef=0.0)


@_task(obstructedmaze_rnd)
def obstructedmaze_noveld() -> dict[str, Any]:
    """`obstructedmaze_rnd` with NovelD's episodic bonus in place of RND's, at 8 minibatches
    (see `_FIVE_MILLION`)."""
    return dict(bonus="noveld", num_minibatches=8)


@_task(obstructedmaze_rnd)
def obstructedmaze_count() -> dict[str, Any]:
    """`obstructedmaze_rnd` with the episodic count bonus in place of RND's, counting the
    agent's cell, direction and carried object (`visit_key: agent`). Counting views instead,
    it scored 0.00 at 20M (one seed, the exploration page's superseded groups): a key carried
    or dropped makes nearly every view new (1.0-1.1 visits a step), and the policy moved keys
    about instead of opening doors."""
    return dict(bonus="count", visit_key="agent")


@_task(keycorridor_rnd)
def obstructedmaze_1q_rnd() -> dict[str, Any]:
    """MiniGrid-ObstructedMaze-1Q with RND: a quarter of the 3x3-room maze, its doors locked
    (keys hidden in boxes) and blocked by balls to move away; the ball to pick up is in one of
    its rooms. 10M env steps."""
    return dict(env="MiniGrid-ObstructedMaze-1Q-v0", train_steps=_TEN_MILLION)


@_task(obstructedmaze_1q_rnd)
def obstructedmaze_1q() -> dict[str, Any]:
    """The control of `obstructedmaze_1q_rnd`."""
    return dict(int_coef=0.0)


@_task(obstructedmaze_1q_rnd)
def obstructedmaze_1q_noveld() -> dict[str, Any]:
    """`obstructedmaze_1q_rnd` with NovelD's episodic bonus in place of RND's."""
    return dict(bonus="noveld")


@_task(obstructedmaze_noveld)
def obstructedmaze_full_noveld() -> dict[str, Any]:
    """MiniGrid-ObstructedMaze-Full with NovelD: all four quarters of the maze (the agent starts
    in the middle room), 50M env steps."""
    return dict(env="MiniGrid-ObstructedMaze-Full-v0", train_steps=_FIFTY_MILLION)


@_task(obstructedmaze_count)
def obstructedmaze_full_count() -> dict[str, Any]:
    """MiniGrid-ObstructedMaze-Full with `obstructedmaze_count`'s bonus, 50M env steps."""
    return dict(env="MiniGrid-ObstructedMaze-Full-v0", train_steps=_FIFTY_MILLION)


CONFIGS = {
    fn.__name__: fn
    for fn in (
        default,
        debug,
        debug_rnd,
        pendulum,
        cartpole,
        minigrid_rnd,
        minigrid,
        montezuma_rnd,
        reacher,
        cheetah,
        walker,
        hopper,
        ant,
        humanoid,
        cartpole_native,
        cartpole_native_fast,
        pendulum_native,
        acrobot_native,
        mountaincar_native,
        mountaincar_continuous_native,
        doorkey_native,
        doorkey16_rnd,
        doorkey16,
        doorkey16_noveld,
        doorkey16_count,
        keycorridor_rnd,
        keycorridor,
        keycorridor_noveld,
        multiroom_rnd,
        multiroom,
        multiroom_noveld,
        keycorridor_s4_rnd,
        keycorridor_s4,
        keycorridor_s4_noveld,
        keycorridor_s4_count,
        keycorridor_s4_e3b,
        multiroom_n6_rnd,
        multiroom_n6,
        multiroom_n6_noveld,
        multiroom_n6_count,
        multiroom_n6_e3b,
        keycorridor_s5_rnd,
        keycorridor_s5,
        keycorridor_s5_noveld,
        obstructedmaze_rnd,
        obstructedmaze,
        obstructedmaze_noveld,
        obstructedmaze_count,
        keycorridor_s6_rnd,
        keycorridor_s6,
        keycorridor_s6_noveld,
        keycorridor_s6_count,
        obstructedmaze_1q_rnd,
        obstructedmaze_1q,
        obstructedmaze_1q_noveld,
        obstructedmaze_full_noveld,
        obstructedmaze_full_count,
    )
}
