"""Layout banks: minigrid's generator, cached on disk, rebuilt when damaged or another bank's,
built by several writers at once, read natively."""

from __future__ import annotations

import concurrent.futures
import io
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import tensorflow as tf

from agents.envs import NativeBatchEnv, make_native
from agents.envs.gridworld import build_progress, building, compact, layouts
from agents.envs.gridworld.convert import make_minigrid, state_of
from agents.envs.gridworld.env import IDS, MiniGridEnv, render


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTS_CACHE", str(tmp_path))
    return tmp_path


def test_state_of_reads_minigrids_encoding():
    env = make_minigrid("MiniGrid-KeyCorridorS3R3-v0")
    env.reset(seed=3)
    state = state_of(env)
    np.testing.assert_array_equal(state["grid"][..., :3], env.grid.encode())
    assert state["pos"].tolist() == list(env.agent_pos)
    assert state["target"].tolist() == list(env.obj.encode()[:2])


@pytest.mark.parametrize("env_id", IDS)
def test_initial_observations_are_minigrids(env_id):
    """Layout k of the bank is minigrid's `reset(seed=k)`: its state and its first image."""
    env = MiniGridEnv(env_id, layout_bank=4)
    original = make_minigrid(env_id)
    states, observ = env.initial(64, tf.constant([1, 2]))
    np.testing.assert_array_equal(observ.numpy(), env.observe(states).numpy())
    index = tf.constant([0, 1, 2, 3])
    states, observ = env._layout(index), env.observe(env._layout(index)).numpy()
    for k in range(4):
        image = original.reset(seed=k)[0]["image"]
        np.testing.assert_array_equal(observ[k], image, err_msg=f"{env_id} layout {k}")
        np.testing.assert_array_equal(states.grid[k].numpy(), state_of(original)["grid"])


def _assert_banks_equal(first: dict, second: dict) -> None:
    assert set(first) == set(second) == set(compact.FIELDS)
    for field in compact.FIELDS:
        np.testing.assert_array_equal(first[field], second[field], err_msg=field)


@pytest.mark.parametrize("env_id", IDS)
def test_compact_layouts_decode_to_minigrids_states(env_id):
    """Every layout of a bank, decoded by the slow reference and rendered by the compiled reset,
    is minigrid's `reset(seed=k)` state, field by field."""
    count = 48
    bank = layouts.generate(env_id, count, 100)
    rendered = render({key: tf.constant(value) for key, value in bank.items()}, tf.range(count))
    original = make_minigrid(env_id)
    for k in range(count):
        original.reset(seed=100 + k)
        expected, decoded = state_of(original), compact.decode(bank, k)
        for field, value in expected.items():
            np.testing.assert_array_equal(decoded[field], value, err_msg=f"{env_id} {k} {field}")
            np.testing.assert_array_equal(
                getattr(rendered, field)[k].numpy(), value, err_msg=f"{env_id} {k} {field}"
            )


def test_a_layout_is_its_rooms_walls_and_the_cells_that_differ():
    """A hand-made bank of one 6x5 layout: a room's border walled over an empty base, a door set
    in it, and a point past the grid that changes nothing."""
    empty, wall, door = (1, 0, 0, 0), compact.RECT_CELL, (4, 2, 1, 0)
    bank = {
        "base": np.tile(np.asarray(empty, np.uint8), [6, 5, 1]),
        "palette": np.asarray([empty, door], np.uint8),
        "rects": np.asarray([[[1, 0, 4, 3]]], np.uint8),  # x 1-4, y 0-2.
        "points": np.asarray([[2 * 5 + 2, 6 * 5]], np.uint16),  # (2, 2), then none.
        "values": np.asarray([[1, 0]], np.uint8),
        "pos": np.asarray([[2, 1]], np.uint8),
        "direction": np.asarray([3], np.uint8),
        "target": np.asarray([[0, 0]], np.uint8),
    }
    expected = np.tile(np.asarray(empty), [6, 5, 1])
    for x, y in [(1, 0), (2, 0), (3, 0), (4, 0), (1, 1), (4, 1), (1, 2), (3, 2), (4, 2)]:
        expected[x, y] = wall
    expected[2, 2] = door
    np.testing.assert_array_equal(compact.decode(bank, 0)["grid"], expected)
    state = render({key: tf.constant(value) for key, value in bank.items()}, tf.constant([0, 0]))
    np.testing.assert_array_equal(state.grid.numpy(), [expected, expected])
    assert state.pos.numpy().tolist() == [[2, 1]] * 2
    assert state.direction.numpy().tolist() == [3] * 2


def test_a_large_bank_is_built_by_worker_processes_as_one_process_builds_it(monkeypatch, capsys):
    env_id = "MiniGrid-MultiRoom-N4-S5-v1"
    serial = layouts.generate(env_id, 40, 7)
    monkeypatch.setattr(building, "PARALLEL_FROM", 10)
    monkeypatch.setattr(compact, "CHUNK", 16)
    capsys.readouterr()
    _assert_banks_equal(layouts.generate(env_id, 40, 7), serial)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"Building the layout bank of {env_id}: 40 layouts from minigrid's ")
    assert out[-1].startswith(f"Layout bank of {env_id}: 40 of 40 layouts (100%) in ")


class _Stop(BaseException):
    """What a stop signal raises in the main thread (as `StartUpStopped` does)."""


def _processes_naming(text):
    """Pids of the live (not zombie) processes whose command line holds `text`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline, open(f"/proc/{pid}/stat") as stat:
                if (
                    text.encode() in cmdline.read()
                    and stat.read().rsplit(")", 1)[1].split()[0] != "Z"
                ):
                    found.append(int(pid))
        except OSError:
            pass
    return found


def test_a_build_stopped_by_an_exception_kills_its_workers_and_leaves_no_files(
    cache, tmp_path, monkeypatch
):
    """An exception in the builder while its workers run (a stop signal's, raised from the
    wait) kills and reaps the workers, removes their folder and writes no bank."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(building.tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(building, "PARALLEL_FROM", 10)
    monkeypatch.setattr(compact, "CHUNK", 10**6)  # Each worker's one chunk takes minutes.
    seen = []

    def stop(progress, done):
        seen.append(_processes_naming(str(scratch)))
        raise _Stop

    monkeypatch.setattr(building.BuildProgress, "update", stop)
    with pytest.raises(_Stop):
        layouts.bank("MiniGrid-FourRooms-v0", 2 * 10**6)
    assert seen and seen[0], "no worker ran"
    assert _processes_naming(str(scratch)) == []
    assert list(scratch.iterdir()) == []
    assert not layouts.path_of("MiniGrid-FourRooms-v0", 2 * 10**6, 0).parent.exists()


def test_a_worker_whose_builder_is_gone_removes_its_folder_and_exits(tmp_path):
    """The builder's end of the worker's stdin closes when the builder dies (SIGKILL, a second
    signal's `os._exit`): the worker does not go on alone."""
    folder = tmp_path / "agents-layouts-x"
    folder.mkdir()
    np.save(folder / "base.npy", compact.base_layout("MiniGrid-FourRooms-v0", 16, 0))
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            building.__name__,
            "MiniGrid-FourRooms-v0",
            str(folder),
            "0:10000000",
        ],
        stdin=subprocess.PIPE,
    )
    try:
        worker.stdin.close()
        assert worker.wait(timeout=30) == 1
    finally:
        worker.kill()
        worker.wait()
    assert not folder.exists()


def test_build_progress_says_layouts_done_elapsed_and_time_left(monkeypatch):
    clock = iter([100.0, 100.0, 104.0, 112.0, 130.0])
    monkeypatch.setattr(build_progress.time, "monotonic", lambda: next(clock))
    out = io.StringIO()
    progress = build_progress.BuildProgress("MiniGrid-FourRooms-v0", 1000, out, every=10.0)
    progress.start(2)
    progress.update(100)  # 4 s after the last line: none.
    progress.update(300)  # 12 s.
    progress.finish()
    assert out.getvalue().splitlines() == [
        "Building the layout bank of MiniGrid-FourRooms-v0: 1,000 layouts from minigrid's "
        "generator in 2 processes (cached for later runs).",
        "Layout bank of MiniGrid-FourRooms-v0: 300 of 1,000 layouts (30%) in 12 s, about 28 s "
        "left.",
        "Layout bank of MiniGrid-FourRooms-v0: 1,000 of 1,000 layouts (100%) in 30 s.",
    ]


def test_a_failing_layout_worker_ends_the_build_with_its_last_line(monkeypatch, tmp_path):
    interpreter = tmp_path / "python"
    interpreter.write_text(
        "#!/bin/sh\necho 'Traceback (most recent call last):' >&2\necho MemoryError >&2\nexit 1\n"
    )
    interpreter.chmod(0o755)
    monkeypatch.setattr(building, "PARALLEL_FROM", 10)
    monkeypatch.setattr(building.sys, "executable", str(interpreter))
    failed = (
        r"^The layout bank of MiniGrid-Empty-5x5-v0 could not be built: a worker failed with "
        r"'MemoryError'; run again to rebuild it, or set layout_bank lower\.$"
    )
    with pytest.raises(ValueError, match=failed):
        layouts.generate("MiniGrid-Empty-5x5-v0", 40, 0)


def _occupancy(grids: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Per cell, how often each object lies there, and how often the agent starts there."""
    kinds = [(grids[..., 0] == kind).mean(axis=0) for kind in range(2, 10)]
    agent = np.zeros(grids.shape[1:3])
    np.add.at(agent, (positions[:, 0], positions[:, 1]), 1.0 / len(positions))
    return np.stack([*kinds, agent])


@pytest.mark.parametrize(
    "env_id",
    [
        "MiniGrid-DoorKey-8x8-v0",
        "MiniGrid-KeyCorridorS3R3-v0",
        "MiniGrid-MultiRoom-N4-S5-v1",
        "MiniGrid-FourRooms-v0",
        "MiniGrid-LavaGapS7-v0",
    ],
)
def test_native_resets_follow_minigrids_generator(env_id):
    """Where walls, doors, keys, goals, lava and the agent fall at native resets, against fresh
    minigrid resets from other seeds: per-cell frequencies agree within sampling noise."""
    count = 400
    env = MiniGridEnv(env_id, layout_bank=count)
    drawn = env.initial_state(count, tf.constant([5, 7]))
    native = _occupancy(drawn.grid.numpy(), drawn.pos.numpy())
    original = make_minigrid(env_id)
    fresh = []
    for seed in range(10**6, 10**6 + count):
        original.reset(seed=seed)
        fresh.append(state_of(original))
    reference = _occupancy(
        np.stack([s["grid"] for s in fresh]), np.stack([s["pos"] for s in fresh])
    )
    # Two samples of 400 (one drawn with replacement from a bank of 400): within 5 standard
    # errors of a frequency near 1/2 (a generator that moved a door or key differs by ~0.5).
    assert np.abs(native - reference).max() < 5 * np.sqrt(2 * 0.25 / count)


def test_bank_is_cached_and_a_corrupt_cache_is_rebuilt(cache, monkeypatch, capsys):
    first = layouts.bank("MiniGrid-DoorKey-5x5-v0", 8)
    path = layouts.path_of("MiniGrid-DoorKey-5x5-v0", 8, 0)
    assert path.exists() and str(path).startswith(str(cache))

    def generate(*args):
        raise AssertionError("generated again instead of read")

    with monkeypatch.context() as patched:
        patched.setattr(layouts, "generate", generate)
        read = layouts.bank("MiniGrid-DoorKey-5x5-v0", 8)
    _assert_banks_equal(read, first)

    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    rebuilt = layouts.bank("MiniGrid-DoorKey-5x5-v0", 8)
    assert "is not usable" in capsys.readouterr().err
    _assert_banks_equal(rebuilt, first)

    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # A write cut short.
    rebuilt = layouts.bank("MiniGrid-DoorKey-5x5-v0", 8)
    assert "is not usable (unreadable" in capsys.readouterr().err
    _assert_banks_equal(rebuilt, first)


def test_a_bank_of_another_env_under_the_right_name_is_rebuilt(capsys):
    path = layouts.path_of("MiniGrid-DoorKey-5x5-v0", 8, 0)
    layouts.bank("MiniGrid-Empty-5x5-v0", 8)
    layouts.path_of("MiniGrid-Empty-5x5-v0", 8, 0).rename(path)
    bank = layouts.bank("MiniGrid-DoorKey-5x5-v0", 8)
    err = capsys.readouterr().err
    assert f"Layout bank {path} is not usable (it holds env_id 'MiniGrid-Empty-5x5-v0', " in err
    _assert_banks_equal(bank, layouts.generate("MiniGrid-DoorKey-5x5-v0", 8, 0))
    _assert_banks_equal(layouts.bank("MiniGrid-DoorKey-5x5-v0", 8), bank)
    assert capsys.readouterr().err == ""  # The rebuilt file is read as it is.


def test_builders_of_one_bank_at_once_each_get_it(cache, monkeypatch):
    """Two builders write their files before either renames its own into place."""
    both_written = threading.Barrier(2, timeout=60)
    rename = os.replace

    def replace_when_both_wrote(source, target):
        both_written.wait()
        rename(source, target)

    monkeypatch.setattr(layouts.os, "replace", replace_when_both_wrote)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        builds = [pool.submit(layouts.bank, "MiniGrid-Empty-5x5-v0", 4) for _ in range(2)]
        banks = [build.result() for build in builds]
    _assert_banks_equal(banks[0], banks[1])
    folder = layouts.path_of("MiniGrid-Empty-5x5-v0", 4, 0).parent
    assert [path.name for path in folder.iterdir()] == [
        layouts.path_of("MiniGrid-Empty-5x5-v0", 4, 0).name
    ]


def test_an_unwritable_cache_names_the_file_and_the_fix(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("AGENTS_CACHE", str(blocked))
    with pytest.raises(ValueError, match="cannot be written.*AGENTS_CACHE"):
        layouts.bank("MiniGrid-Empty-5x5-v0", 2)


def test_batch_of_minigrid_envs_truncates_and_restarts_from_the_bank():
    env = make_native("MiniGrid-DoorKey-5x5-v0", max_episode_steps=3, layout_bank=16)
    assert env.max_episode_steps == 3 and env.max_steps == 250
    batch = NativeBatchEnv(env, 6, seed=1)
    batch.reset()
    for _ in range(3):
        batch.simulate(tf.zeros([6], tf.int32))  # Turning left never ends an episode.
    assert batch.truncated.numpy().all() and not batch.terminated.numpy().any()
    assert (batch.state.step_count.numpy() == 3).all()
    batch.reset_where(tf.constant([True, False] * 3))
    np.testing.assert_array_equal(batch.state.step_count.numpy(), [0, 3] * 3)
    observ = env.observe(tf.nest.map_structure(lambda v: v.read_value(), batch.state)).numpy()
    np.testing.assert_array_equal(batch.observ.numpy()[::2], observ[::2])


def test_unknown_minigrid_id_names_the_native_ones():
    with pytest.raises(ValueError, match="MiniGrid-DoorKey-8x8-v0"):
        make_native("MiniGrid-DoorKey-7x7-v0")
