"""Stable-Baselines3 PPO side of `vs_sb3`; runs, from the repository's root, under a Python that
has stable-baselines3.

    python -m benchmarks.sb3_driver train TASK STEPS SEED MODEL [THREADS]  # saves MODEL.zip
    python -m benchmarks.sb3_driver eval TASK SEED MODEL EPISODES  # deterministic eval of MODEL

Each prints one JSON line. Settings are RL-Zoo's tuned PPO hyperparameters for Pendulum-v1 and
CartPole-v1 (rl-baselines3-zoo `hyperparams/ppo.yml`, neither normalizes) and SB3's defaults on
our cheetah config's layout (8 envs x 256 steps) for HalfCheetah-v5. Torch runs on THREADS
threads (default 1, as the zoo's CPU runs). It imports nothing of `agents` or of the other
benchmarks.
"""

from __future__ import annotations

import json
import statistics
import sys


def linear(initial: float):
    """RL-Zoo's `lin_<value>`: decays linearly from `initial` to 0 over training."""
    return lambda progress_remaining: progress_remaining * initial


def settings(task: str) -> tuple[str, int, dict]:
    """(env id, number of envs, PPO keyword arguments)."""
    if task == "pendulum":
        ppo = dict(n_steps=1024, batch_size=64, n_epochs=10, gae_lambda=0.95, gamma=0.9)
        ppo.update(ent_coef=0.0, learning_rate=1e-3, clip_range=0.2)
        return "Pendulum-v1", 4, dict(ppo, use_sde=True, sde_sample_freq=4)
    if task == "cartpole":
        ppo = dict(n_steps=32, batch_size=256, n_epochs=20, gae_lambda=0.8, gamma=0.98)
        ppo.update(ent_coef=0.0, learning_rate=linear(1e-3), clip_range=linear(0.2))
        return "CartPole-v1", 8, ppo
    if task == "cheetah":
        return "HalfCheetah-v5", 8, dict(n_steps=256, batch_size=64, n_epochs=10)
    raise SystemExit(f"unknown task {task!r}; known: pendulum, cartpole, cheetah")


def train(task: str, steps: int, seed: int, model_path: str) -> dict:
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    env_id, n_envs, kwargs = settings(task)
    env = make_vec_env(env_id, n_envs=n_envs, seed=seed)
    model = PPO("MlpPolicy", env, seed=seed, device="cpu", verbose=0, **kwargs)
    model.learn(total_timesteps=steps)
    model.save(model_path)
    env.close()
    return dict(env_steps=int(model.num_timesteps))


def evaluate(task: str, seed: int, model_path: str, episodes: int) -> dict:
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy

    env_id, _, _ = settings(task)
    env = make_vec_env(env_id, n_envs=1, seed=seed + 10_000)  # Monitor-wrapped: raw returns.
    model = PPO.load(model_path, env=env, device="cpu")
    returns, _ = evaluate_policy(
        model, env, n_eval_episodes=episodes, deterministic=True, return_episode_rewards=True
    )
    env.close()
    return dict(eval_mean=statistics.fmean(returns), eval_std=statistics.pstdev(returns))


def main(argv: list[str]) -> None:
    import torch

    mode, task, *rest = argv
    torch.set_num_threads(int(rest[3]) if mode == "train" and len(rest) > 3 else 1)
    if mode == "train":
        steps, seed, model_path = int(rest[0]), int(rest[1]), rest[2]
        result = train(task, steps, seed, model_path)
    elif mode == "eval":
        seed, model_path, episodes = int(rest[0]), rest[1], int(rest[2])
        result = evaluate(task, seed, model_path, episodes)
    else:
        raise SystemExit(f"unknown mode {mode!r}; expected train or eval")
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
