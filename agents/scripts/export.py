"""Export a trained policy: `python -m agents.scripts.export --run_dir <run dir> --format onnx`.

Writes the run's deterministic policy (its `policy/`, else its newest checkpoint) as an ONNX model
that onnxruntime runs with numpy alone (`agents.export`), and prints where it went.
"""

from __future__ import annotations

import argparse

from agents import api
from agents.config.errors import UsageError
from agents.scripts import cli, shutdown


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m agents.scripts.export", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--run_dir",
        "--logdir",
        dest="run_dir",
        required=True,
        help="Run directory of a training run, or a SavedModel directory.",
    )
    # Not argparse's choices, which add a usage line: an unknown format is one line.
    parser.add_argument(
        "--format",
        default="onnx",
        help=f"One of: {', '.join(api.EXPORT_FORMATS)} (default: %(default)s).",
    )
    parser.add_argument("--output", help="The file to write (default: <run dir>/policy.onnx).")
    parser.add_argument("--checkpoint", help="Export this checkpoint's policy, not policy/.")
    return parser.parse_args(argv)


def export(args: argparse.Namespace) -> str:
    """Write the file and say where; bad input is a `UsageError`."""
    if args.format not in api.EXPORT_FORMATS:
        raise UsageError(
            f"--format {args.format!r}: unknown format; accepted: {', '.join(api.EXPORT_FORMATS)}."
        )
    try:
        path = api.export(args.run_dir, args.format, args.output, args.checkpoint)
    except (ValueError, FileNotFoundError) as error:
        raise UsageError(str(error)) from None
    print(f"Exported {args.format} policy to {path}")
    return path


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return cli.exit_status(lambda: export(args))


if __name__ == "__main__":
    shutdown.exit_quickly(main())
