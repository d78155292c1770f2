"""Pages and README say where their records ran on an older `agents/` tree than HEAD's: the
words from fake tree checks, and the check itself on a small git repository."""

import subprocess

import pytest

from benchmarks import common
from benchmarks.pages import readme_numbers, registry, trees


def _ages(**known):
    """A fake tree check: commit -> Age from `known` (name -> files changed, 0: HEAD's tree);
    a commit it does not know is not in history."""

    def age_of(commit):
        if commit not in known:
            return trees.Age(commit, False, None)
        return trees.Age(commit, known[commit] == 0, known[commit])

    return age_of


def _record(commit, date="2026-11-27 22:01"):
    return {"commit": commit, "date": date, "machine": "CPU, 2 cores"}


def test_a_page_of_todays_tree_carries_no_line_and_an_older_ones_names_commit_days_and_files():
    today = _ages(new1111=0, old2222=7)
    assert trees.page_line([_record("new1111")], today) is None
    page = "# Title\n\nText.\n"
    assert trees.mark(page, [_record("new1111")], today) == page
    records = [_record("old2222", "2026-11-27 23:00"), _record("old2222", "2026-11-28 01:00")]
    line = trees.page_line(records, today)
    assert line.startswith("**Measured on an older `agents/` tree**: commit old2222 of 2026-11-27")
    assert "to 2026-11-28 (7 files of `agents/` changed since)" in line
    assert "git diff --stat old2222 HEAD -- agents/" in line
    marked = trees.mark(page, records, today)
    assert marked.splitlines()[:3] == ["# Title", "", line]  # Under the title, before the text.
    assert marked.endswith("\nText.\n")


def test_a_commit_git_does_not_know_or_a_dirty_one_counts_as_older():
    age_of = _ages(mine111=0)
    line = trees.page_line([_record("gone999")], age_of)
    assert "commit gone999 of 2026-11-27 (not in this repository's history)" in line
    dirty = trees.page_line([_record("mine111-dirty")], lambda c: trees.Age(c, False, None))
    assert "commit mine111 of 2026-11-27 (uncommitted changes on top)" in dirty
    assert "commit not recorded" in trees.page_line([{"date": "2026-11-27"}], age_of)


def test_a_page_of_several_commits_names_each_older_one_and_says_partly_where_one_is_todays():
    age_of = _ages(new1111=0, old2222=3, old3333=1)
    records = [_record("old2222"), _record("new1111"), _record("old3333", "2026-11-29 10:00")]
    line = trees.page_line(records, age_of)
    assert line.startswith("**Partly measured on older `agents/` trees**: commit old2222")
    assert "(3 files of" in line and "commit old3333 of 2026-11-29 (1 file of" in line
    assert "new1111" not in line
    both_old = trees.page_line([records[0], records[2]], age_of)
    assert both_old.startswith("**Measured on older `agents/` trees**")


def test_the_moving_count_of_changed_files_does_not_make_a_page_stale_but_other_words_do():
    page = "# T\n\nText.\n"
    records = [_record("old2222")]
    then = trees.mark(page, records, _ages(old2222=7))
    now = trees.mark(page, records, _ages(old2222=12))
    assert then != now and trees.steady(then) == trees.steady(now)
    assert trees.steady(trees.mark(page, records, _ages(old2222=1))) == trees.steady(now)
    assert trees.steady(page) != trees.steady(now)  # Old code that lost its line is stale.


def test_readme_words_name_the_older_commits_and_nothing_for_todays_tree():
    age_of = _ages(new1111=0, old2222=3)
    assert trees.readme_words([_record("new1111")], age_of) == ""
    assert trees.readme_words([_record("old2222")], age_of) == (
        "; measured on an older tree, commit old2222"
    )
    both = [_record("old2222"), _record("gone999")]
    assert trees.readme_words(both, age_of) == "; measured on older trees, commits old2222, gone999"
    where = readme_numbers.where(_record("old2222"), age_of=age_of)
    assert where == "2026-11-27, CPU; measured on an older tree, commit old2222"
    assert readme_numbers.where(_record("new1111"), age_of=age_of) == "2026-11-27, CPU"


def test_every_results_page_names_its_records_and_is_marked_by_the_check_it_is_given():
    pages = registry.pages(age_of=lambda c: trees.Age(c, True, 0))
    results = {path for path in pages if path.startswith("docs/results/")}
    assert set(registry.SOURCES) == results
    today = pages["docs/results/rnd.md"]()
    assert "older `agents/` tree" not in today
    older = registry.pages(age_of=lambda c: trees.Age(c, False, 4))["docs/results/rnd.md"]()
    assert older.splitlines()[0] == today.splitlines()[0]
    assert older.splitlines()[2].startswith("**Measured on an older `agents/` tree**: commit ")
    assert "(4 files of `agents/` changed since)" in older


def _git(repo, *args):
    result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.fixture
def tiny_repo(tmp_path, monkeypatch):
    """A git repository with commits `first` (agents/a.py), `docs` (README only: the same
    `agents/` tree) and HEAD (agents/a.py changed, agents/b.py added), as the checkout."""
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "x@example.com")
    _git(tmp_path, "config", "user.name", "x")
    (tmp_path / "agents").mkdir()
    commits = {}
    for name, files in (
        ("first", {"agents/a.py": "a = 1\n"}),
        ("docs", {"README.md": "text\n"}),
        ("head", {"agents/a.py": "a = 2\n", "agents/b.py": "b = 1\n"}),
    ):
        for path, text in files.items():
            (tmp_path / path).write_text(text)
        _git(tmp_path, "add", ".")
        _git(tmp_path, "commit", "-q", "-m", name)
        commits[name] = _git(tmp_path, "rev-parse", "--short", "HEAD")
    monkeypatch.setattr(common, "ROOT", str(tmp_path))
    common.agents_tree.cache_clear()
    trees.git_age.cache_clear()
    yield commits
    common.agents_tree.cache_clear()  # The real checkout's trees again.
    trees.git_age.cache_clear()


def test_git_age_compares_a_commits_agents_tree_with_heads_and_counts_the_files(tiny_repo):
    assert trees.git_age(tiny_repo["head"]) == trees.Age(tiny_repo["head"], True, 0)
    assert trees.git_age(tiny_repo["first"]) == trees.Age(tiny_repo["first"], False, 2)
    assert trees.git_age(tiny_repo["docs"]).changed == 2  # A docs commit: the same old tree.
    assert trees.git_age("0123abc") == trees.Age("0123abc", False, None)
    assert trees.git_age(tiny_repo["head"] + "-dirty").current is False
