"""README.md, its generated parts rewritten: the commands' timings, the numbers' bullets and the
configs not yet benchmarked."""

from __future__ import annotations

from benchmarks.pages import readme_configs, readme_numbers, readme_timings

PAGE = readme_timings.README


def page() -> str:
    """README.md with its generated parts rewritten between their markers."""
    with open(PAGE, encoding="utf-8") as file:
        text = file.read()
    for begin, end, make in (
        (readme_timings.TIMES_BEGIN, readme_timings.TIMES_END, readme_timings.timings),
        (readme_numbers.BEGIN, readme_numbers.END, readme_numbers.block),
        (readme_configs.BEGIN, readme_configs.END, readme_configs.line),
    ):
        start, stop = text.index(begin), text.index(end) + len(end)
        text = text[:start] + make() + text[stop:]
    return text
