"""Fixtures of the fault tests: a finished debug run (module-wide) and a fresh copy per test."""

import pytest

from tests.scripts import runs


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    return runs.finished_run(tmp_path_factory.mktemp("logdir"))


@pytest.fixture
def run_copy(finished_run, tmp_path):
    return runs.copy_run(finished_run, tmp_path)
