"""Render a trained policy: `python -m agents.scripts.visualize --run_dir <run dir> --outdir <dir>`.

Restores the network and observation normalizer from the run's checkpoint and exports them as
training does, runs episodes with that deterministic policy (`agents.policy.play_episode`, as
`agents.evaluate` does), writes one mp4 per episode and prints each episode's return; a progress
bar counts the episodes on a terminal.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from agents.config import files
from agents.config.errors import UsageError
from agents.policy import Policy, play_episode
from agents.scripts import console, progress, shutdown
from agents.scripts.arg_types import positive_int, seed


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--run_dir", dest="logdir", required=True, help="Run directory of a training run."
    )
    parser.add_argument("--outdir", help="Where the videos are written (not with --eval_only).")
    parser.add_argument(
        "--num_episodes", type=positive_int, default=3, help="Episodes (default: 3)."
    )
    parser.add_argument("--checkpoint", help="Checkpoint path; default: the latest of the run.")
    parser.add_argument(
        "--seed", type=seed, default=0, help="Seed of the first episode (default: 0)."
    )
    parser.add_argument(
        "--fps", type=int, default=None, help="Video frame rate (default: the env's render_fps)."
    )
    parser.add_argument(
        "--eval_only", action="store_true",
        help="Render nothing: print each return and their mean +- std.",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if not args.eval_only and not args.outdir:
        parser.error("--outdir is required (or --eval_only)")
    return args


def find_checkpoint(run_dir: str, checkpoint: str | None) -> str:
    """The checkpoint to restore (the newest one on disk by default), or a clear error."""
    from agents.tools.checkpoints import list_checkpoints

    if checkpoint:
        if not os.path.isfile(checkpoint + ".index"):
            raise UsageError(f"No checkpoint {checkpoint!r} (expected {checkpoint}.index).")
        return checkpoint
    found = list_checkpoints(os.path.join(run_dir, "checkpoints"))
    if not found:
        raise UsageError(f"No checkpoint in {run_dir!r}: train first, or pass --checkpoint.")
    return found[-1]


def restore_policy(run_dir: str, checkpoint: str | None, env) -> tuple[Policy, str]:
    """The policy of a run's checkpoint (the newest readable one by default) for `env`, exported
    as training exports it (into a temporary directory), and the checkpoint's path."""
    import tensorflow as tf

    from agents import tools
    from agents.ppo.export import export_policy
    from agents.ppo.factory import make_agent
    from agents.tools import checkpoints

    config = files.load_config(run_dir)
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv([env], blocking=True, clip_actions=True))
    agent = make_agent(batch_env, config)
    saved = tf.train.Checkpoint(**agent.policy_checkpointables())

    def restore(path: str) -> None:
        saved.restore(path).expect_partial().assert_existing_objects_matched()

    if checkpoint:
        path = find_checkpoint(run_dir, checkpoint)
        try:
            restore(path)
        except (tf.errors.OpError, IndexError, OSError) as error:
            reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise UsageError(f"Checkpoint {path} cannot be read ({reason}).") from None
    else:  # The newest readable one, with a warning for each unreadable newer one.
        try:
            path = checkpoints.restore_latest(os.path.join(run_dir, "checkpoints"), restore)
        except checkpoints.CheckpointError as error:
            raise UsageError(str(error)) from None
    with tempfile.TemporaryDirectory() as directory:
        export_policy(agent, directory)
        return Policy(tf.saved_model.load(directory)), path


def load_policy(run_dir: str, checkpoint: str | None, env) -> Policy:
    """`restore_policy`, saying which checkpoint it restored."""
    policy, path = restore_policy(run_dir, checkpoint, env)
    print(f"Restored {path}")
    return policy


def run_episode(env, policy: Policy, seed: int, render: bool = True) -> tuple[float, list]:
    """One episode (rendered unless `render` is False): its return and frames (see
    `agents.policy.play_episode`, which `agents.evaluate` plays too)."""
    import numpy as np

    total, frames = play_episode(policy, env, seed, render)
    return total, [np.asarray(frame) for frame in frames] if render else []


def visualize(args: argparse.Namespace) -> list[float]:
    """Write the videos and return the episode returns."""
    try:
        import imageio.v2 as imageio
    except ImportError:
        raise UsageError("Writing videos needs imageio: pip install -e '.[video]'.") from None
    import gymnasium as gym

    # Frames are rendered offscreen: no display or sound device is needed (or wanted).
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

    config = files.load_config(args.logdir)
    find_checkpoint(args.logdir, args.checkpoint)  # Fail before building anything.
    render_mode = None if args.eval_only else "rgb_array"
    env = make_run_env(config, render_mode)
    fps = args.fps or env.metadata.get("render_fps") or 30
    run_name = os.path.basename(os.path.normpath(args.logdir))
    try:
        policy = load_policy(args.logdir, args.checkpoint, env)
        if not args.eval_only:
            os.makedirs(args.outdir, exist_ok=True)
        returns = []
        with progress.bar(args.num_episodes, "episode", "episodes") as bar:
            for episode in range(args.num_episodes):
                try:
                    score, frames = run_episode(
                        env, policy, args.seed + episode, not args.eval_only
                    )
                except gym.error.DependencyNotInstalled as error:
                    raise UsageError(f"Cannot render {config.env}: {error}") from None
                except Exception as error:
                    if not type(error).__module__.startswith("mujoco"):
                        raise
                    raise UsageError(_mujoco_hint(config.env, error)) from None
                line = f"Episode {episode}: return {score:.2f}"
                if not args.eval_only:
                    path = _free_path(args.outdir, f"{run_name}-episode-{episode:03d}")
                    imageio.mimwrite(path, frames, fps=fps, macro_block_size=1)
                    line += f" ({len(frames) - 1} steps, {fps} fps) -> {path}"
                progress.write(line)
                returns.append(score)
                bar.set_postfix(mean_return=f"{sum(returns) / len(returns):.2f}", refresh=False)
                bar.update()
    finally:
        env.close()
    mean = sum(returns) / len(returns)
    std = (sum((r - mean) ** 2 for r in returns) / len(returns)) ** 0.5
    print(f"Mean return over {len(returns)} episodes: {mean:.2f} +- {std:.2f}")
    return returns


def make_run_env(config, render_mode: str | None = None):
    """The run's environment, rendering as asked; an env that cannot be made is one line."""
    from agents.training.environments import API_NAMESPACE, make_env

    if config.env.startswith(f"{API_NAMESPACE}/"):
        raise UsageError(
            f"The run was trained on {config.env}, an environment given to agents.train as a "
            "Python callable, which exists only in that process: there, evaluate it with "
            "agents.load_policy(run_dir) on your environment."
        )
    try:
        return make_env(
            config.env, config.max_episode_steps, config.env_wrapper, render_mode=render_mode
        )
    except ValueError as error:
        raise UsageError(str(error)) from None


def _mujoco_hint(env_id: str, error: Exception) -> str:
    """One line for MuJoCo's rendering errors, which mostly mean no OpenGL context here."""
    first = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return (
        f"Cannot render {env_id}: {first}. Without a display, set MUJOCO_GL=egl (with a GPU) "
        "or MUJOCO_GL=osmesa (CPU), e.g. MUJOCO_GL=egl python -m agents.scripts.visualize ..., "
        "or pass --eval_only."
    )


def _free_path(outdir: str, stem: str) -> str:
    """`<outdir>/<stem>.mp4`, or `<stem>-2.mp4`, ... if taken: videos are never overwritten."""
    path, copy = os.path.join(outdir, f"{stem}.mp4"), 1
    while os.path.exists(path):
        copy += 1
        path = os.path.join(outdir, f"{stem}-{copy}.mp4")
    return path


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    console.import_tensorflow()
    try:
        visualize(args)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    shutdown.exit_quickly(main())
