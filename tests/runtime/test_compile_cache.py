"""Tests for the persistent XLA compilation cache's setting (no TensorFlow needed)."""

import os
import tempfile

import pytest

from agents.runtime import compile_cache, xla_scratch
from tests.scripts.capture import untimed


@pytest.fixture(autouse=True)
def _own_scratch(tmp_path, monkeypatch):
    """This test's scratch folders under tmp_path/tmp, apart from the test process's own."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.setattr(xla_scratch, "_state", {})
    monkeypatch.setattr(compile_cache, "_FOUND_UNUSABLE", set())


def test_cache_directory_is_per_tensorflow_version_under_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    environ = {"TF_XLA_FLAGS": "--tf_xla_enable_xla_devices"}
    directory = compile_cache.enable(environ)
    assert directory.startswith(os.path.join(str(tmp_path), "agents", "xla-"))
    assert os.path.isdir(directory)
    (scratch,) = os.listdir(tmp_path / "tmp")
    assert scratch.startswith(f"agents-xla-{os.getpid()}-")
    assert environ["TF_XLA_FLAGS"] == (
        "--tf_xla_enable_xla_devices --tf_xla_persistent_cache_directory="
        f"{tmp_path / 'tmp' / scratch}"
    )


def test_tensorflow_writes_to_a_scratch_folder_whose_new_entries_the_cache_takes(
    tmp_path, monkeypatch, capsys
):
    """The scratch folder links the cache's entries (TensorFlow reads them there) and takes
    TensorFlow's new ones, which `publish` copies into the cache; a cache that stops taking
    entries costs one warning line and those entries, nothing else."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    directory = compile_cache.cache_directory()
    os.makedirs(directory)
    (old,) = _entries(directory, [(100, 10)])
    environ = {}
    compile_cache.enable(environ)
    scratch = environ["TF_XLA_FLAGS"].split("=", 1)[1]
    linked = os.path.join(scratch, os.path.basename(old))
    assert os.path.islink(linked) and os.path.realpath(linked) == old
    new = os.path.join(scratch, "xla_compile_cache__7__XLA_CPU_JIT.pb")
    with open(new, "wb") as handle:  # As TensorFlow writes a program it compiled.
        handle.write(b"\x08\x07")
    assert xla_scratch.publish() == 1 and xla_scratch.publish() == 0
    published = os.path.join(directory, os.path.basename(new))
    with open(published, "rb") as handle:
        assert handle.read() == b"\x08\x07"
    assert os.path.realpath(new) == published and capsys.readouterr().err == ""
    again = os.path.join(scratch, "xla_compile_cache__8__XLA_CPU_JIT.pb")
    open(again, "wb").close()
    os.rename(directory, f"{directory}.moved")
    with open(directory, "w") as handle:  # The folder replaced during the run: no entries.
        handle.write("a file")
    assert xla_scratch.publish() == 0
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(
        f"warning: XLA's compile cache {directory} could not take this run's new entries ("
    )
    assert "the run is unaffected" in line
    assert xla_scratch.publish() == 0 and capsys.readouterr().err == ""  # Said once.
    xla_scratch.close()
    with open(directory) as handle:
        assert not os.path.exists(scratch) and handle.read() == "a file"


def test_without_room_for_a_scratch_folder_tensorflow_uses_the_cache_itself(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    statvfs, scratch_root = os.statvfs, str(tmp_path / "tmp")
    full = os.statvfs_result((4096, 4096, 100, 10, 10, 100, 10, 10, 0, 255))
    monkeypatch.setattr(os, "statvfs", lambda path: full if path == scratch_root else statvfs(path))
    environ = {}
    directory = compile_cache.enable(environ)
    assert environ["TF_XLA_FLAGS"] == f"--tf_xla_persistent_cache_directory={directory}"
    assert os.listdir(scratch_root) == [] and xla_scratch.publish() == 0


def test_a_dead_process_s_old_scratch_folder_is_published_and_removed_at_a_start(
    tmp_path, monkeypatch
):
    import time

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    directory = compile_cache.cache_directory()
    dead = 2**22 + 1  # Above Linux's largest process id: no such process.
    folders = {}
    cases = [("stale", dead, 7200), ("young", dead, 60), ("alive", os.getpid(), 7200)]
    for name, pid, age in cases:
        folder = tmp_path / "tmp" / f"{xla_scratch.PREFIX}{pid}-{name}"
        folder.mkdir()
        (folder / f"xla_compile_cache__{name}__XLA_CPU_JIT.pb").write_bytes(b"\x08\x01")
        used = time.time() - age
        os.utime(folder, (used, used))
        folders[name] = folder
    compile_cache.enable({})
    assert not folders["stale"].exists() and folders["young"].exists()
    assert folders["alive"].exists()
    assert sorted(name for name in os.listdir(directory) if name.endswith(".pb")) == [
        "xla_compile_cache__stale__XLA_CPU_JIT.pb"
    ]


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


def _train(tmp_path, *extra, limit_file_size=None):
    """The debug config through the command line, with its XLA cache under tmp_path/cache."""
    import resource
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("TF_XLA_FLAGS", "AGENTS_XLA_CACHE")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    argv = [sys.executable, "-m", "agents.scripts.train", "--config=debug"]
    argv += [f"--logdir={tmp_path / 'logs'}", "--set", "train_steps=64", *extra]

    def limit():  # As `ulimit -f`, in the child only.
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_size, limit_file_size))

    return subprocess.run(
        argv, capture_output=True, text=True, env=env,
        preexec_fn=limit if limit_file_size else None,
    )  # fmt: skip


@pytest.mark.slow
def test_a_cache_that_cannot_take_entries_costs_the_run_nothing_but_one_warning(tmp_path):
    """Through the command line: a garbled entry is set aside alone before TensorFlow reads it,
    and a process that may not write files as large as entries (`ulimit -f 400`) runs without
    the cache; both runs finish, each with one warning, and the cache keeps what it had."""
    import glob

    filled = _train(tmp_path)
    assert filled.returncode == 0, filled.stderr
    (cache,) = glob.glob(str(tmp_path / "cache" / "agents" / "xla-*"))
    entries = sorted(name for name in os.listdir(cache) if name.endswith(".pb"))
    assert entries
    kept = os.path.join(cache, "xla_compile_cache__kept__XLA_CPU_JIT.pb")
    with open(kept, "wb") as handle:  # A whole entry of another program: never touched.
        handle.write(b"\x08\x01" * 64)
    for entry in entries:
        with open(os.path.join(cache, entry), "wb") as handle:
            handle.write(os.urandom(4096))
    garbled = _train(tmp_path)
    assert garbled.returncode == 0, garbled.stderr
    (line,) = garbled.stderr.splitlines()
    assert line.startswith(f"warning: XLA's compile cache {cache}: set aside {len(entries)} ")
    names = set(os.listdir(cache))
    assert {f"{entry}.unreadable" for entry in entries} <= names and os.path.exists(kept)
    assert untimed(garbled.stdout.splitlines()[-1]).startswith("Done: 64 env steps")
    before = {name: os.path.getsize(os.path.join(cache, name)) for name in os.listdir(cache)}
    limited = _train(tmp_path, limit_file_size=400 * 1024)
    assert limited.returncode == 0, limited.stderr
    assert limited.stderr.splitlines() == [
        f"warning: XLA's compile cache {cache} is not usable (ulimit -f lets this process write "
        "files of 400 KiB at most); this run compiles without it. Free space or fix the "
        "folder's permissions, or set AGENTS_XLA_CACHE=0 to turn the cache off."
    ]
    after = {name: os.path.getsize(os.path.join(cache, name)) for name in os.listdir(cache)}
    assert after == before  # Untouched.


@pytest.mark.slow
def test_a_cache_that_stops_taking_entries_during_a_run_costs_one_warning(tmp_path, monkeypatch):
    """Through the command line: the cache folder replaced by a file after the first report;
    the run finishes (exit 0) with one warning line, and the file is left as it was."""
    import glob
    import subprocess

    from tests.scripts.capture import training_process

    for name in ("TF_XLA_FLAGS", "AGENTS_XLA_CACHE", "AGENTS_TF_SETTINGS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    argv = ["--config=debug", f"--logdir={tmp_path / 'logs'}", "--set", "train_steps=512"]
    with training_process(argv, stderr=subprocess.PIPE) as process:
        (cache,) = glob.glob(str(tmp_path / "cache" / "agents" / "xla-*"))
        os.rename(cache, f"{cache}.moved")
        with open(cache, "w") as handle:
            handle.write("a file")
        assert process.wait(timeout=300) == 0
        stderr = process.stderr.read()
    assert glob.glob(str(tmp_path / "logs" / "*-debug-s0" / "policy" / "saved_model.pb"))
    (line,) = stderr.splitlines()
    assert line.startswith(f"warning: XLA's compile cache {cache} could not take this run's new")
    with open(cache) as handle:
        assert handle.read() == "a file" and os.listdir(tmp_path / "tmp") == []


def test_a_folder_without_room_or_that_cannot_be_written_leaves_the_cache_off(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(compile_cache, "_FOUND_UNUSABLE", set())
    full = os.statvfs_result((4096, 4096, 100, 10, 10, 100, 10, 10, 0, 255))
    monkeypatch.setattr(compile_cache.os, "statvfs", lambda path: full)
    environ = {}
    assert compile_cache.enable(environ) is None and environ == {}
    (line,) = capsys.readouterr().err.splitlines()
    assert "is not usable (0 MB free on its file system); this run compiles without it" in line
    assert compile_cache.enable(environ) is None and capsys.readouterr().err == ""  # Said once.
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(compile_cache, "_FOUND_UNUSABLE", set())

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(compile_cache.tempfile, "mkstemp", refused)
    assert compile_cache.enable(environ) is None and environ == {}
    assert "is not usable (Permission denied)" in capsys.readouterr().err


class DataLossError(Exception):
    """Stands for TensorFlow's error of that name (the cache matches errors by name)."""


class OutOfRangeError(Exception):
    pass


class ResourceExhaustedError(Exception):
    pass


def test_a_failed_write_is_named_as_one_and_leaves_the_cache_as_it_was(tmp_path):
    directory = str(tmp_path)
    environ = {"TF_XLA_FLAGS": f"--tf_xla_persistent_cache_directory={directory}"}
    whole = _entries(directory, [(100, 10)])[0]
    partial = os.path.join(directory, "xla_compile_cache__1__XLA_CPU_JIT.pb.pbvm-ab-12-cd.tmp")
    for error, reason in [
        (OutOfRangeError, "File too large"),
        (ResourceExhaustedError, "No space left on device"),
    ]:
        open(partial, "wb").close()
        message = f"Graph execution error:\n\n{partial}; {reason}\n\t [[{{{{node while}}}}]]"
        line = compile_cache.failure(error(message), environ)
        assert line == (
            f"XLA's compile cache {directory} could not be written ({reason}); the cache is "
            "unchanged. Free space there, or set AGENTS_XLA_CACHE=0 to run without it"
        )
        assert not os.path.exists(partial) and os.path.exists(whole)
    assert compile_cache.failure(ValueError("another error"), environ) is None


def test_a_garbled_or_cut_entry_read_at_run_time_is_set_aside_alone(tmp_path):
    directory = str(tmp_path)
    environ = {"TF_XLA_FLAGS": f"--tf_xla_persistent_cache_directory={directory}"}
    good, bad = _entries(directory, [(100, 10), (100, 10)])
    with open(bad, "wb") as handle:
        handle.write(b"\x0a\x40short")  # A 64-byte field with 5 bytes: cut short.
    line = compile_cache.failure(OutOfRangeError("Read less bytes than requested"), environ)
    assert "could not be read (garbled: xla_compile_cache__1__XLA_CPU_JIT.pb)" in line
    assert os.path.exists(good) and os.path.exists(f"{bad}.unreadable")
    line = compile_cache.failure(DataLossError(f"Can't parse {good} as binary proto"), environ)
    assert os.path.exists(f"{good}.unreadable") and "xla_compile_cache__0__" in line


def test_a_garbled_entry_read_through_the_scratch_folder_is_set_aside_in_the_cache(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    directory = compile_cache.cache_directory()
    os.makedirs(directory)
    good, bad = _entries(directory, [(100, 10), (100, 10)])
    environ = {}
    compile_cache.enable(environ)  # Both entries are whole at the start: both linked.
    scratch = environ["TF_XLA_FLAGS"].split("=", 1)[1]
    with open(bad, "wb") as handle:
        handle.write(b"\x0a\x40short")  # Garbled during the run, by another writer.
    error = DataLossError(f"Can't parse {scratch}/{os.path.basename(bad)} as binary proto")
    line = compile_cache.failure(error, environ)
    assert line.startswith(f"XLA's compile cache {directory} could not be read (garbled: ")
    assert os.path.exists(f"{bad}.unreadable") and os.path.exists(good)
    assert not os.path.lexists(os.path.join(scratch, os.path.basename(bad)))
    partial = os.path.join(scratch, "xla_compile_cache__2__XLA_CPU_JIT.pb.pbvm-ab-12-cd.tmp")
    open(partial, "wb").close()
    error = ResourceExhaustedError(f"{partial}; No space left on device\n\t [[{{node while}}]]")
    assert compile_cache.failure(error, environ) == (
        f"XLA's compile cache could not write a new entry to its scratch folder {scratch} (No "
        f"space left on device); the cache {directory} is unchanged. Free space there (or set "
        "TMPDIR to a folder with room), or set AGENTS_XLA_CACHE=0 to run without it"
    )
    assert not os.path.exists(partial)


def test_the_framing_check_tells_whole_entries_from_damaged_ones(tmp_path):
    path = tmp_path / "entry.pb"
    # Field 1 varint 150, field 2 a 3-byte string, field 3 fixed32, field 4 fixed64.
    whole = b"\x08\x96\x01" + b"\x12\x03abc" + b"\x1d" + bytes(4) + b"\x21" + bytes(8)
    damaged = [whole[:-1], b"\x12\x7fab", b"\x00\x01", b"\x0b", b"\x08\xff"]
    for data, expected in [(whole, True)] + [(data, False) for data in damaged]:
        path.write_bytes(data)
        assert compile_cache._whole(str(path)) is expected, data
