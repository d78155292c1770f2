"""Plot a run's learning curve: `python -m agents.scripts.plot --run_dir <run dir> [--out path]`.

Reads the `train/mean_score` and `eval/mean_score` summaries that training writes under
`<run dir>/train` and `<run dir>/eval`, and saves them as a PNG against training env steps
(see `agents.training.curves`).
"""

from __future__ import annotations

import argparse
import sys

from agents.config.errors import UsageError
from agents.training.curves import plot_run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run_dir", required=True, help="Run directory of a training run.")
    parser.add_argument("--out", help="Output PNG (default: <run_dir>/learning_curve.png).")
    args = parser.parse_args(argv)
    try:
        print(plot_run(args.run_dir, args.out))
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
