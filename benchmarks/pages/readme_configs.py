"""The line of README's "Configs" naming the configs no benchmark record names yet, between two
markers: a config is benchmarked where a record of `benchmarks/results` names it."""

from __future__ import annotations

import glob
import os
import textwrap

from benchmarks import common
from benchmarks.pages import rnd_page

BEGIN = (
    "<!-- unbenchmarked configs generated from benchmarks/results by python -m benchmarks.pages -->"
)
END = "<!-- end of generated unbenchmarked configs -->"
FIELDS = ("config", "task", "family")  # Where a record names the config it ran, the first
# present: an exploration record's `task` names its group of arms, its `config` the arm's config.
TOOLS = ("default", "debug", "debug_rnd")  # Configs for tests and schemas, never benchmarked.


def recorded(records: list[dict]) -> set[str]:
    """The config names the records name, each by the first of `FIELDS` it holds."""
    named = set()
    for record in records:
        field = next((field for field in FIELDS if record.get(field)), None)
        if field is not None:
            named.add(str(record[field]))
        if record.get("agent") == "control":  # The RND benchmark's control runs its own config.
            named.add(rnd_page.CONTROL)
    return named


def unbenchmarked(configs: list[str], records: list[dict]) -> list[str]:
    """The `configs` (less `TOOLS`) that no record names, in their given order."""
    named = recorded(records)
    return [name for name in configs if name not in named and name not in TOOLS]


def _every_record() -> list[dict]:
    return [
        record
        for path in sorted(glob.glob(os.path.join(common.RESULTS, "*.jsonl")))
        for record in common.read_records(path)
    ]


def line(configs: list[str] | None = None, records: list[dict] | None = None) -> str:
    """The generated line, markers included (`configs`: the named configs' names; `records`:
    every records file's, both read from the checkout where not given)."""
    if configs is None:
        from agents.scripts import configs as named  # Plain Python: no TensorFlow.

        configs = list(named.CONFIGS)
    missing = unbenchmarked(configs, _every_record() if records is None else records)
    text = (
        "Not yet benchmarked (no record in `benchmarks/results` names them): "
        + ", ".join(f"`{name}`" for name in missing)
        + "; the others' figures are on the [results pages](docs/results/index.md)."
        if missing
        else "Every config has a record in `benchmarks/results`: its figures are on the "
        "[results pages](docs/results/index.md)."
    )
    wrapped = textwrap.fill(text, 100, break_on_hyphens=False, break_long_words=False)
    return "\n".join([BEGIN, wrapped, END])
