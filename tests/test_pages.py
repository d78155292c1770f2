"""The results pages that benchmarks' records make equal what those records give today."""

import pytest

from benchmarks import common
from benchmarks.pages import checks, readme_timings, registry


@pytest.mark.slow
def test_every_generated_results_page_equals_what_its_records_give():
    # A page edited by hand, or records appended without `--page`, fail here:
    # `python -m benchmarks.pages` writes them again.
    assert checks.stale() == []


def test_every_plot_of_the_pages_shows_the_records_it_is_drawn_from():
    # Records re-measured and their PNG left from the sitting before fail here:
    # `python -m benchmarks.pages` redraws the plots whose stamp is not their records' digest.
    assert checks.stale_figures() == []


def _records_files(revision: str | None) -> dict[str, str]:
    """Records file -> its text at `revision` (None: the working tree); {} where git lacks it."""
    import glob
    import os
    import subprocess

    paths = sorted(glob.glob(os.path.join(common.RESULTS, "*.jsonl")))
    if revision is None:
        return {os.path.relpath(p, common.ROOT): open(p, encoding="utf-8").read() for p in paths}
    texts = {}
    for path in paths:
        name = os.path.relpath(path, common.ROOT)
        shown = subprocess.run(
            ["git", "show", f"{revision}:{name}"], cwd=common.ROOT, capture_output=True, text=True
        )
        if shown.returncode == 0:
            texts[name] = shown.stdout
    return texts


def test_records_files_are_only_appended_to():
    # A record is never deleted or replaced: the working tree's records files start with the
    # previous commit's whole (a shallow clone without it checks nothing).
    assert checks.dropped(_records_files("HEAD~1"), _records_files(None)) == {}


def test_a_dropped_or_rewritten_record_is_found():
    before = {"r.jsonl": '{"a": 1}\n{"a": 2}\n'}
    assert checks.dropped(before, {"r.jsonl": '{"a": 1}\n{"a": 2}\n{"a": 3}\n'}) == {}
    assert checks.dropped(before, {"r.jsonl": '{"a": 2}\n'}) == {"r.jsonl": 2}
    assert checks.dropped(before, {"r.jsonl": '{"a": 1}\n{"a": 9}\n'}) == {"r.jsonl": 1}
    assert checks.dropped(before, {}) == {"r.jsonl": 2}


def test_the_pages_command_covers_the_pages_that_say_they_are_generated():
    import glob
    import os
    import re

    said = []
    for path in glob.glob(os.path.join(common.ROOT, "docs", "results", "*.md")):
        with open(path, encoding="utf-8") as file:
            text = file.read()
        if re.search(r"Generated\s+(from|by)\b", text):
            said.append(os.path.relpath(path, common.ROOT))
    generated = [path for path in registry.pages() if path.startswith("docs/results/")]
    assert sorted(said) == sorted(generated)


def test_ci_and_the_suite_benchmark_run_readmes_test_command(tmp_path):
    import os

    command = readme_timings.readme_command()
    assert command.startswith("python -m pytest ") and command.endswith(" tests")
    with open(os.path.join(common.ROOT, ".ci", "run"), encoding="utf-8") as file:
        assert file.read().rstrip().splitlines()[-1] == command
    # Records of another command are not README's figure: only this command's are shown.
    records = [
        {"selection": "all", "returncode": 0, "seconds": 900.0},  # The one-process command.
        {"selection": "all", "returncode": 0, "seconds": 600.0, "command": command},
        {"selection": "all", "returncode": 1, "seconds": 500.0, "command": command},
    ]
    assert [r["seconds"] for r in readme_timings.recent_suites(records)] == [600.0]
    # Runs of one commit make a line: an older commit's runs are not in its span.
    at = [dict(records[1], commit="a", seconds=700.0), dict(records[1], commit="b")]
    assert [r["seconds"] for r in readme_timings.recent_suites(at + at[1:])] == [600.0, 600.0]
    quick = {"selection": "not slow", "returncode": 0, "command": command}
    records += [dict(quick, seconds=300.0), dict(quick, seconds=320.0)]
    records += [dict(quick, seconds=200.0, returncode=1)]  # A failing run is no figure.
    assert [r["seconds"] for r in readme_timings.quick_suite(records)] == [320.0]
    assert [r["seconds"] for r in readme_timings.shown_suites(records)] == [600.0, 320.0]
    # Of several machines, the one whose newest run took longest, however old.
    slow = [dict(records[1], machine="slow", commit="a", seconds=s) for s in (1500.0, 1600.0)]
    fast = [dict(records[1], machine="fast", commit="b", seconds=s) for s in (700.0, 500.0)]
    assert [r["seconds"] for r in readme_timings.recent_suites(slow + fast)] == [1500.0, 1600.0]
    fast[-1]["seconds"] = 1700.0  # Now the other machine's newest is the slowest.
    assert [r["seconds"] for r in readme_timings.recent_suites(slow + fast)] == [700.0, 1700.0]
    quick_runs = [
        dict(quick, machine="slow", seconds=400.0),
        dict(quick, machine="fast", seconds=90.0),
    ]
    assert [r["seconds"] for r in readme_timings.quick_suite(quick_runs)] == [400.0]
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\n```sh\npip install x && run\n```\n\n```sh\na && b && pytest t\n```\n")
    assert readme_timings.readme_command(str(readme)) == "pytest t"


def test_a_suite_figure_says_cold_only_where_every_run_started_without_compiled_programs():
    cold, warm = {"compile_cache_entries": 0}, {"compile_cache_entries": 137}
    assert readme_timings.cold_label([cold, cold]) == ", with a cold compile cache"
    assert readme_timings.cold_label([cold, warm]) == ""
    assert readme_timings.cold_label([{}]) == ""  # A record made before the count was kept.
