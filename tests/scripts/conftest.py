"""Fixtures of the fault tests: a finished debug run (one per test process, never changed) and
a fresh copy of it per test."""

import pytest

from tests.scripts import runs


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory):
    return runs.finished_run(tmp_path_factory.mktemp("logdir"))


@pytest.fixture
def run_copy(finished_run, tmp_path):
    return runs.copy_run(finished_run, tmp_path)
