"""Render a trained policy: `python -m agents.scripts.visualize --run_dir <run dir> --outdir <dir>`.

Restores the network and observation normalizer from the run's checkpoint and exports them as
training does, runs episodes with that deterministic policy (`agents.policy.play_episode`, as
`agents.evaluate` does), writes one mp4 per episode and prints each episode's return; a progress
bar counts the episodes on a terminal.
"""

from __future__ import annotations

import argparse
import os

import gymnasium as gym
import numpy as np

from agents.config import files
from agents.config.errors import UsageError
from agents.policy import Policy, play_episode
from agents.ppo import checkpoint_policy
from agents.runtime import tf_loading
from agents.scripts import cli, shutdown
from agents.scripts.arg_types import positive_int, seed
from agents.training import progress

try:  # The video extra: optional (`visualize` says how to install it where it is missing).
    import imageio.v2 as imageio
except ImportError:
    imageio = None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--run_dir",
        "--logdir",
        dest="logdir",
        required=True,
        help="Run directory of a training run (--logdir, batch-ppo's name for it, works too).",
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


def restore_policy(run_dir: str, checkpoint: str | None, env, config) -> Policy:
    """The policy of the run's checkpoint (see `agents.ppo.restore`), saying which it restored."""
    from agents.ppo import restore  # TensorFlow's: imported after its settings (see `main`).

    saved_model, path = restore.restore_saved_model(run_dir, checkpoint, env, config)
    print(f"Restored {path}")
    return Policy(saved_model)


def run_episode(env, policy: Policy, seed: int, render: bool = True) -> tuple[float, list]:
    """One episode (rendered unless `render` is False): its return and frames (see
    `agents.policy.play_episode`; `agents.evaluate` plays the same episodes several at once)."""
    total, frames = play_episode(policy, env, seed, render)
    return total, [np.asarray(frame) for frame in frames] if render else []


def visualize(args: argparse.Namespace) -> list[float]:
    """Write the videos and return the episode returns."""
    if imageio is None:
        raise UsageError("Writing videos needs imageio: pip install -e '.[video]'.")

    # Frames are rendered offscreen: no display or sound device is needed (or wanted).
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

    config = files.load_config(args.logdir)
    checkpoint_policy.find_checkpoint(args.logdir, args.checkpoint)  # Fail before building.
    render_mode = None if args.eval_only else "rgb_array"
    env = checkpoint_policy.make_run_env(config, render_mode)
    if render_mode not in (None, *env.metadata.get("render_modes", ())):
        env.close()
        raise UsageError(
            f"{config.env} renders no frames (a native env renders through its render(state) "
            "method): pass --eval_only for the returns alone."
        )
    fps = args.fps or env.metadata.get("render_fps") or 30
    run_name = os.path.basename(os.path.normpath(args.logdir))
    try:
        policy = restore_policy(args.logdir, args.checkpoint, env, config)
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
    tf_loading.import_tensorflow()
    return cli.exit_status(lambda: visualize(args))


if __name__ == "__main__":
    shutdown.exit_quickly(main())
