"""Tests for the persistent XLA compilation cache's setting (no TensorFlow needed)."""

import os
import re

from agents.runtime import compile_cache
from tests.scripts.capture import untimed


def test_cache_directory_is_per_tensorflow_version_under_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    environ = {"TF_XLA_FLAGS": "--tf_xla_enable_xla_devices"}
    directory = compile_cache.enable(environ)
    assert directory.startswith(os.path.join(str(tmp_path), "agents", "xla-"))
    assert os.path.isdir(directory)
    assert environ["TF_XLA_FLAGS"] == (
        f"--tf_xla_enable_xla_devices --tf_xla_persistent_cache_directory={directory}"
    )


def test_a_cache_flag_the_user_set_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    environ = {"TF_XLA_FLAGS": "--tf_xla_persistent_cache_directory=/mine"}
    assert compile_cache.enable(environ) is None
    assert environ["TF_XLA_FLAGS"] == "--tf_xla_persistent_cache_directory=/mine"


def test_off_when_asked_or_when_the_directory_cannot_be_made(tmp_path, monkeypatch):
    environ = {"AGENTS_XLA_CACHE": "0"}
    assert compile_cache.enable(environ) is None and "TF_XLA_FLAGS" not in environ
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # A file where a directory must go.
    environ = {}
    assert compile_cache.enable(environ) is None and environ == {}


def _entries(directory, sizes_and_ages):
    """Files of the given sizes, each last used `age` seconds ago; returns their paths."""
    import time

    paths = []
    for index, (size, age) in enumerate(sizes_and_ages):
        path = os.path.join(directory, f"xla_compile_cache__{index}__XLA_CPU_JIT.pb")
        with open(path, "wb") as handle:
            handle.write(b"x" * size)
        used = time.time() - age
        os.utime(path, (used, used))
        paths.append(path)
    return paths


def test_prune_deletes_the_least_recently_used_entries_down_to_three_quarters(tmp_path):
    # 10 entries of 100 bytes, the oldest first; limit 800: 1,000 > 800, prune to <= 600.
    paths = _entries(str(tmp_path), [(100, 1000 - 10 * i) for i in range(10)])
    assert compile_cache.prune(str(tmp_path), 800) == 400
    assert [os.path.exists(path) for path in paths] == [False] * 4 + [True] * 6
    assert compile_cache.prune(str(tmp_path), 800) == 0  # Within the limit: nothing more.


def test_prune_keeps_a_cache_within_its_limit_and_survives_a_missing_one(tmp_path):
    paths = _entries(str(tmp_path), [(100, 50), (100, 10)])
    assert compile_cache.prune(str(tmp_path), 200) == 0
    assert all(os.path.exists(path) for path in paths)
    assert compile_cache.prune(str(tmp_path / "absent"), 0) == 0


def test_enable_prunes_to_the_limit_set_in_megabytes(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    directory = compile_cache.cache_directory()
    os.makedirs(directory)
    paths = _entries(directory, [(2**20, 100), (2**20, 50), (2**20, 10)])  # 3 MB.
    compile_cache.enable({"AGENTS_XLA_CACHE_MB": "2"})  # Down to <= 1.5 MB: the newest stays.
    assert [os.path.exists(path) for path in paths] == [False, False, True]
    compile_cache.enable({})  # The default (1 GB) keeps it.
    assert os.path.exists(paths[2])


def test_a_limit_that_is_not_a_positive_number_is_named_in_one_warning(tmp_path, monkeypatch):
    import pytest

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for value in ("0", "-5", "nan", "inf", "lots", ""):
        with pytest.raises(ValueError, match=f"AGENTS_XLA_CACHE_MB={value!r} is not a positive"):
            compile_cache.limit_bytes({"AGENTS_XLA_CACHE_MB": value})
    assert compile_cache.limit_bytes({"AGENTS_XLA_CACHE_MB": "0.5"}) == 2**19
    assert compile_cache.limit_bytes({}) == compile_cache.DEFAULT_LIMIT_MB * 2**20
    with pytest.warns(UserWarning, match="keeps its default limit of 1024 MB"):
        assert compile_cache.enable({"AGENTS_XLA_CACHE_MB": "lots"}) is not None


def test_a_damaged_cache_stops_the_run_with_one_line_and_is_moved_aside(tmp_path):
    """Through the command line: a garbled entry is met at the first compiled call; the run
    stops naming the cache, the cache moves aside, and the resumed run trains."""
    import glob
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("TF_XLA_FLAGS", "AGENTS_XLA_CACHE")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    argv = [sys.executable, "-m", "agents.scripts.train", "--config=debug"]
    argv += [f"--logdir={tmp_path / 'logs'}", "--set", "train_steps=64"]

    def train(*extra):
        return subprocess.run([*argv, *extra], capture_output=True, text=True, env=env)

    assert train().returncode == 0  # Fills the cache.
    (cache,) = glob.glob(str(tmp_path / "cache" / "agents" / "xla-*"))
    entries = os.listdir(cache)
    assert entries
    for entry in entries:
        with open(os.path.join(cache, entry), "wb") as handle:
            handle.write(os.urandom(4096))
    result = train()
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    (line,) = lines
    assert line.startswith(f"error: Stopped at env step 32: XLA's compile cache {cache} could not")
    # Random bytes read as a garbled proto, or, where they announce a longer entry, as one cut
    # short: either names the cache.
    assert re.search(r"\(an entry is (garbled|cut short)\); moved it to", line), line
    assert "Resume with: " in line
    (moved,) = glob.glob(f"{cache}.unreadable-*")
    assert sorted(os.listdir(moved)) == sorted(entries)  # Kept, for a look; nothing deleted.
    resume = line.split("Resume with: ")[1].split()[-1]  # --timestamp=<run>
    resumed = train(resume)
    assert resumed.returncode == 0, resumed.stderr
    assert untimed(resumed.stdout.splitlines()[-1]).startswith("Done: 64 env steps")
