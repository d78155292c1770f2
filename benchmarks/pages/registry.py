"""What is generated from which records: every page, the records each records file's pages show,
and every plot."""

from __future__ import annotations

import os
from collections.abc import Callable

from benchmarks import common
from benchmarks.pages import (
    api_memory_page,
    env_backends_page,
    env_throughput_page,
    exploration_figures,
    exploration_page,
    first_line_page,
    layouts_page,
    learning_page,
    minigrid_native_page,
    mpi_scaling_page,
    mujoco_page,
    native_page,
    navix_page,
    readme_page,
    readme_timings,
    rnd_page,
    speed_matrix_page,
    speed_page,
    trees,
)
from benchmarks.pages.plots import Plot

# Page -> the records files whose shown records its figures are (README's bullets say their own).
SOURCES = {
    "docs/results/api_memory.md": ("api_memory",),
    "docs/results/env_backends.md": ("env_backends",),
    "docs/results/env_throughput.md": ("env_throughput",),
    "docs/results/exploration.md": ("exploration", "peer"),
    "docs/results/layouts.md": ("layouts", "first_line"),
    "docs/results/learning.md": ("learning",),
    "docs/results/minigrid_native.md": ("minigrid_native",),
    "docs/results/mpi_scaling.md": ("mpi_scaling",),
    "docs/results/mujoco.md": ("mujoco",),
    "docs/results/native.md": ("native",),
    "docs/results/navix.md": ("navix",),
    "docs/results/rnd.md": ("rnd",),
    "docs/results/speed.md": ("vs_sb3",),
    "docs/results/speed_matrix.md": ("speed_matrix",),
}


def _records(name: str) -> list[dict]:
    return common.read_records(os.path.join(common.RESULTS, f"{name}.jsonl"))


def measured(names: tuple[str, ...]) -> list[dict]:
    """The records of the records files `names` that their pages show, less those of another
    checkout measured beside this one (`against`)."""
    views = shown()
    return [
        record
        for name in names
        for record in views[f"benchmarks/results/{name}.jsonl"](_records(name))
        if not record.get("against")
    ]


def pages(age_of: trees.AgeOf | None = None) -> dict[str, Callable[[], str]]:
    """Page path (relative to the repository) -> the text its records give, each results page
    marked where its records ran on an older `agents/` tree than HEAD's (`age_of`, by default
    `trees.git_age`)."""

    def marked(path: str, render: Callable[[], str]) -> Callable[[], str]:
        if path not in SOURCES:
            return render
        return lambda: trees.mark(render(), measured(SOURCES[path]), age_of or trees.git_age)

    return {path: marked(path, render) for path, render in _texts().items()}


def _texts() -> dict[str, Callable[[], str]]:
    return {
        "README.md": readme_page.page,
        "docs/results/api_memory.md": lambda: api_memory_page.page(_records("api_memory")),
        "docs/results/env_backends.md": lambda: env_backends_page.page(_records("env_backends")),
        "docs/results/env_throughput.md": lambda: env_throughput_page.page(
            _records("env_throughput")
        ),
        "docs/results/exploration.md": lambda: (
            exploration_page.page(_records("exploration"), _records("peer")) + "\n"
        ),
        "docs/results/layouts.md": lambda: (
            layouts_page.page(_records("layouts"))
            + "\n\n"
            + first_line_page.section(_records("first_line"))
        ),
        "docs/results/learning.md": lambda: learning_page.page(_records("learning")),
        "docs/results/minigrid_native.md": lambda: (
            minigrid_native_page.page(_records("minigrid_native")) + "\n"
        ),
        "docs/results/mpi_scaling.md": lambda: mpi_scaling_page.page(_records("mpi_scaling")),
        "docs/results/mujoco.md": lambda: mujoco_page.page(_records("mujoco")),
        "docs/results/native.md": lambda: native_page.page(_records("native")),
        "docs/results/navix.md": lambda: navix_page.page(_records("navix")),
        "docs/results/rnd.md": lambda: rnd_page.page(_records("rnd")),
        "docs/results/speed.md": lambda: speed_page.page(_records("vs_sb3")),
        "docs/results/speed_matrix.md": lambda: speed_matrix_page.page(_records("speed_matrix")),
    }


def shown() -> dict[str, Callable[[list[dict]], list[dict]]]:
    """Records file (relative to the repository) -> the records of it that pages and README show."""

    def per(key: str, newest: Callable[[list[dict], str], list[dict]]) -> Callable:
        return lambda records: [
            record
            for value in dict.fromkeys(r.get(key) for r in records)
            for record in newest(records, value)
        ]

    views = {
        "api_memory": api_memory_page.newest,
        "env_backends": env_backends_page.latest,
        "env_throughput": common.sitting,
        "exploration": exploration_page.shown,
        "first_line": common.sitting,
        "fixed_cost": common.sitting,
        "layouts": common.sitting,
        "learning": per("task", learning_page.newest),
        "minigrid_native": common.sitting,
        "mpi_scaling": common.sitting,
        "mujoco": mujoco_page.shown,
        "native": per("kind", native_page.newest),
        "navix": common.sitting,
        "peer": common.sitting,
        "rnd": common.sitting,
        "speed_matrix": common.sitting,
        "test_suite": readme_timings.shown_suites,
        "vs_sb3": common.sitting,
    }
    return {f"benchmarks/results/{name}.jsonl": view for name, view in views.items()}


def figures() -> list[Plot]:
    """The results pages' plots, each with the records it is drawn from."""
    return [
        *exploration_figures.plots(_records("exploration"), exploration_page.PAGE),
        *learning_page.plots(_records("learning")),
        *rnd_page.plots(_records("rnd")),
        *mujoco_page.plots(_records("mujoco")),
    ]
