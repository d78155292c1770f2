"""Render a trained policy: `python -m agents.scripts.visualize --logdir <run dir> --outdir <dir>`.

Restores the network and observation normalizer from the run's checkpoint, runs episodes with
the deterministic policy (the mode of its distribution), writes one mp4 per episode and prints
each episode's return; a progress bar counts the episodes on a terminal.
"""

from __future__ import annotations

import argparse
import os
import sys

from agents.scripts import progress, utility
from agents.scripts.utility import UsageError


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logdir", required=True, help="Run directory of a training run.")
    parser.add_argument("--outdir", required=True, help="Where the videos are written.")
    parser.add_argument("--num_episodes", type=int, default=3)
    parser.add_argument("--checkpoint", help="Checkpoint path; default: the latest of the run.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fps", type=int, default=30)
    return parser.parse_args(argv)


def find_checkpoint(run_dir: str, checkpoint: str | None) -> str:
    """The checkpoint to restore, with a clear error when there is none."""
    import tensorflow as tf

    if checkpoint:
        if not tf.io.gfile.glob(checkpoint + ".index"):
            raise UsageError(f"No checkpoint {checkpoint!r} (expected {checkpoint}.index).")
        return checkpoint
    latest = tf.train.latest_checkpoint(os.path.join(run_dir, "checkpoints"))
    if latest is None:
        raise UsageError(f"No checkpoint in {run_dir!r}: train first, or pass --checkpoint.")
    return latest


def load_policy(run_dir: str, checkpoint: str | None, env):
    """An `Evaluator` with the trained network and normalizer for a single `env`."""
    import tensorflow as tf

    from agents import tools
    from agents.ppo.algorithm import Evaluator
    from agents.ppo.factory import make_agent

    config = utility.load_config(run_dir)
    path = find_checkpoint(run_dir, checkpoint)
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv([env], blocking=True))
    agent = make_agent(batch_env, config)
    checkpoint = tf.train.Checkpoint(**agent.policy_checkpointables())
    checkpoint.restore(path).expect_partial().assert_existing_objects_matched()
    print(f"Restored {path}")
    return Evaluator(agent, batch_env)


def run_episode(env, evaluator, seed: int) -> tuple[float, list]:
    """One episode with rendering; returns its return and frames."""
    import numpy as np
    import tensorflow as tf

    perform = _compiled_perform(evaluator)
    observ, _ = env.reset(seed=seed)
    evaluator.begin_episode(tf.constant([0]))
    frames, total, done = [env.render()], 0.0, False
    while not done:
        action = perform(tf.constant(observ[None]))[0].numpy()
        observ, reward, terminated, truncated, _ = env.step(action)
        frames.append(env.render())
        total += float(reward)
        done = terminated or truncated
    return total, [np.asarray(frame) for frame in frames]


def _compiled_perform(evaluator):
    import tensorflow as tf

    if not hasattr(evaluator, "_compiled_perform"):
        indices = tf.constant([0])
        evaluator._compiled_perform = tf.function(lambda o: evaluator.perform(indices, o))
    return evaluator._compiled_perform


def visualize(args: argparse.Namespace) -> list[float]:
    """Write the videos and return the episode returns."""
    try:
        import imageio.v2 as imageio
    except ImportError:
        raise UsageError("Writing videos needs imageio: pip install -e '.[video]'.") from None
    import gymnasium as gym

    from agents.scripts.environments import make_env

    # Frames are rendered offscreen: no display or sound device is needed (or wanted).
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

    config = utility.load_config(args.logdir)
    find_checkpoint(args.logdir, args.checkpoint)  # Fail before building anything.
    env = make_env(
        config.env, config.max_episode_steps, config.env_wrapper, render_mode="rgb_array"
    )
    try:
        evaluator = load_policy(args.logdir, args.checkpoint, env)
        os.makedirs(args.outdir, exist_ok=True)
        returns = []
        with progress.bar(args.num_episodes, "episode", "episodes") as bar:
            for episode in range(args.num_episodes):
                try:
                    score, frames = run_episode(env, evaluator, args.seed + episode)
                except gym.error.DependencyNotInstalled as error:
                    raise UsageError(f"Cannot render {config.env}: {error}") from None
                path = os.path.join(args.outdir, f"episode-{episode:03d}.mp4")
                imageio.mimwrite(path, frames, fps=args.fps, macro_block_size=1)
                progress.write(
                    f"Episode {episode}: return {score:.2f} ({len(frames) - 1} steps) -> {path}"
                )
                returns.append(score)
                bar.set_postfix(mean_return=f"{sum(returns) / len(returns):.2f}", refresh=False)
                bar.update()
    finally:
        env.close()
    return returns


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        visualize(args)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
