"""The results pages (and README's numbers) that benchmarks' records make, written again.

`python -m benchmarks.pages` rewrites every such page, redraws the plots that do not show their
records as their code draws them (`plots.py`: each PNG is stamped with a digest of both;
`--figures` redraws every plot); records files are only ever appended to: a page shows the
records its rule picks (e.g. the newest sitting), and the others stay on the record;
`python -m benchmarks.pages --check` only says which committed page or plot differs from what
its records give (tests/test_pages.py runs the same checks); `--sittings` says at which
commits, on which machines and when the records the pages show were measured, so that a page
left from another commit or machine is seen. Each benchmark's own `--page` writes its page in
the same way after a run.
"""

from __future__ import annotations

import argparse
import os
import sys

from benchmarks.pages import checks, plots, registry


def check() -> int:
    """Says on stderr what differs from the records; returns 1 if anything does."""
    found = checks.stale()
    for path in found:
        print(f"{path} differs from what its records give", file=sys.stderr)
    for path in checks.stale_figures():
        found.append(path)
        print(f"{path} is not drawn from its records by its code", file=sys.stderr)
    return 1 if found else 0


def write(every_figure: bool) -> None:
    """Rewrites every page and redraws the stale plots (or all); records stay as they are."""
    for path, render in registry.pages().items():
        text = render()  # Before the file is opened for writing: README's is read to render.
        with open(os.path.join(checks.ROOT, path), "w", encoding="utf-8") as file:
            file.write(text)
        print(f"wrote {path}")
    figures = registry.figures()
    for plot in figures if every_figure else plots.stale(figures):
        print(f"drew {os.path.relpath(plot.draw(), checks.ROOT)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.pages", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    parser.add_argument(
        "--figures", action="store_true", help="redraw every plot, not only those out of date"
    )
    parser.add_argument(
        "--sittings",
        action="store_true",
        help="write nothing; say where the shown records come from",
    )
    args = parser.parse_args(argv)
    if args.sittings:
        shown = {path: kept for path, (_, kept) in checks.records_and_shown().items()}
        print("\n".join(checks.sittings(shown)))
        return 0
    if args.check:
        return check()
    write(args.figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
