"""Layout banks ready as a run needs them: sized by its budget, grown while it trains, drawn
once each before any repeats, and shared through the cache by smaller and larger runs."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from agents.config import budget
from agents.envs import NativeBatchEnv
from agents.envs.gridworld import compact, layouts, live_bank
from agents.envs.gridworld.convert import make_minigrid, state_of
from agents.envs.gridworld.env import MiniGridEnv
from agents.scripts import configs

KEYCORRIDOR = "MiniGrid-KeyCorridorS3R3-v0"


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTS_CACHE", str(tmp_path))
    return tmp_path


def _key(grid, pos, direction) -> bytes:
    return np.asarray(grid, np.uint8).tobytes() + np.asarray(pos).tobytes() + bytes([direction])


def _keys(states) -> list[bytes]:
    grid, pos, direction = states.grid.numpy(), states.pos.numpy(), states.direction.numpy()
    return [_key(grid[k], pos[k], int(direction[k])) for k in range(len(grid))]


def test_a_runs_bank_holds_what_its_budget_can_draw_in_powers_of_two_of_chunks():
    # keycorridor: one call of 128 envs x 128 steps x 4 rollouts = 65,536 env steps; each
    # batch step draws at most one layout per env, the first reset one each: 65,664.
    config = dict(configs.keycorridor(), train_steps=1)
    assert budget.layout_draws(config) == 128 + 65536
    assert layouts.size_for(KEYCORRIDOR, 128 + 65536) == 131072  # 9 chunks -> 16.
    assert layouts.size_for(KEYCORRIDOR, 1) == 8192
    assert layouts.size_for(KEYCORRIDOR, 8192) == 8192
    assert layouts.size_for(KEYCORRIDOR, 8193) == 16384
    assert layouts.size_for(KEYCORRIDOR, 3 * 8192) == 32768
    assert layouts.size_for(KEYCORRIDOR, 10**9) == 2**20  # The id's own bank at most.
    assert layouts.size_for("MiniGrid-Empty-5x5-v0", 10**6) == 4096
    with pytest.raises(ValueError, match="at least one layout, not 0"):
        layouts.size_for(KEYCORRIDOR, 0)


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_draws_of_a_block_take_each_layout_once_in_an_order_the_seed_permutes(seed):
    bank = live_bank.shared("MiniGrid-Empty-5x5-v0", 4096, 0)
    drawn = bank.draw(tf.constant(0, tf.int64), 4096, tf.constant(seed, tf.int64)).numpy()
    assert sorted(drawn) == list(range(4096))
    other = bank.draw(tf.constant(0, tf.int64), 4096, tf.constant(seed + 1, tf.int64)).numpy()
    assert (drawn != other).mean() > 0.9
    later = bank.draw(tf.constant(4096 + 5, tf.int64), 3, tf.constant(seed, tf.int64)).numpy()
    np.testing.assert_array_equal(later, drawn[5:8])  # Past the bank: it starts over.


def test_a_seeds_walk_through_a_whole_bank_starts_at_a_block_its_hash_picks():
    """A whole bank of 8 blocks: each seed's walk takes its blocks whole, in turn, every
    layout once, from the block `_mix(seed)` picks; a growing bank's walks all begin at its
    first block, which is built first."""
    size = 8 * live_bank.BLOCK
    layouts.bank("MiniGrid-Empty-5x5-v0", size)  # Built whole before it is opened.
    bank = live_bank.shared("MiniGrid-Empty-5x5-v0", size, 0)
    assert not bank.growing
    for seed in (0, 10_000, 100_000):
        seed = tf.constant(seed, tf.int64)
        drawn = bank.draw(tf.constant(0, tf.int64), size, seed).numpy()
        assert sorted(drawn) == list(range(size))
        blocks = drawn.reshape(8, live_bank.BLOCK) // live_bank.BLOCK
        assert (blocks == blocks[:, :1]).all()  # Each block whole, in turn.
        np.testing.assert_array_equal(np.diff(blocks[:, 0]) % 8, 1)
        assert blocks[0, 0] == int(live_bank._mix(seed)) % 8
    bank.growing = True  # As a growing bank draws.
    assert bank.draw(tf.constant(0, tf.int64), 1, tf.constant(10_000, tf.int64)).numpy() < 4096


@pytest.mark.parametrize("seed", range(5))
def test_a_runs_training_and_evaluation_envs_on_two_ranks_start_at_blocks_apart(seed):
    """The seeds of a run's training and evaluation envs on ranks 0 and 1 (`training.run`:
    + 10,000 for evaluation, + 100,000 a rank) pick four different blocks of a bank of 2**20
    layouts (256 blocks), so at a run's start they draw no layout twice."""
    blocks = (2**20) // live_bank.BLOCK
    offsets = (0, 10_000, 100_000, 110_000)
    firsts = {int(live_bank._mix(tf.constant(seed + o, tf.int64))) % blocks for o in offsets}
    assert len(firsts) == 4


@pytest.mark.slow
@pytest.mark.parametrize("drawn", [0, 3000])
def test_2000_resets_early_and_late_in_a_run_are_as_distinct_as_minigrids_own(drawn):
    """Resets of a batch of envs, restarting a few at a time (a draw's unused states given
    back), at a run's start and where the run has drawn most of its bank (the resets then
    pass its end and start over), against 2,000 of minigrid's own resets: no fewer distinct
    layouts than it gives, less three standard deviations of its repeats."""
    env = MiniGridEnv(KEYCORRIDOR, layout_bank=4096)
    batch = NativeBatchEnv(env, 32, seed=3)
    env._drawn.assign(drawn)
    batch.reset()
    keys = _keys(tf.nest.map_structure(lambda v: v.read_value(), batch.state))
    restart = tf.function(batch.reset_where, autograph=False)
    random = np.random.default_rng(0)
    while len(keys) < 2000:
        mask = random.random(32) < 0.06
        restart(tf.constant(mask))
        states = tf.nest.map_structure(lambda v: v.read_value(), batch.state)
        keys += [key for key, fresh in zip(_keys(states), mask) if fresh]
    assert not drawn or int(env._drawn.numpy()) > 4096  # Late: past the bank's end.
    native = len(set(keys[:2000]))
    original, own = make_minigrid(KEYCORRIDOR), set()
    for seed in range(10**6, 10**6 + 2000):
        original.reset(seed=seed)
        state = state_of(original)
        own.add(_key(state["grid"], state["pos"], int(state["direction"])))
    assert native >= len(own) - 3 * np.sqrt(max(1, 2000 - len(own))), (native, len(own))


def test_a_resumed_envs_first_draw_starts_past_what_the_run_drew():
    """Draw 5 of a batch of 8 drew at most 40 layouts: a fresh env (a resumed run) that
    draws there takes none of them."""
    first = MiniGridEnv("MiniGrid-FourRooms-v0", layout_bank=512)
    drawn = sum((_keys(first.initial_state(8, tf.constant([2, k]))) for k in range(5)), [])
    resumed = MiniGridEnv("MiniGrid-FourRooms-v0", layout_bank=512)
    assert not set(_keys(resumed.initial_state(8, tf.constant([2, 5])))) & set(drawn)


def test_a_row_a_call_sees_unwritten_is_a_layout_of_the_first_chunk():
    bank = live_bank.shared("MiniGrid-FourRooms-v0", 64, 0)
    written = bank.fields(tf.constant([5]))
    bank.rows[5:6].assign(np.full([1, bank.shape.width], live_bank.UNWRITTEN, np.uint8))
    bank.first, bank.growing = 4, True  # Rows 0-3 were written before any draw.
    fallback, expected = bank.fields(tf.constant([5])), bank.fields(tf.constant([1]))
    for field in expected:
        np.testing.assert_array_equal(fallback[field], expected[field], err_msg=field)
    assert not np.array_equal(written["pos"], fallback["pos"]) or not np.array_equal(
        written["points"], fallback["points"]
    )


def _assert_rows_are_the_banks(bank: live_bank.LiveBank, whole: dict, indices) -> None:
    index = tf.constant(indices)
    fields = bank.fields(index)
    for k, i in enumerate(indices):
        expected = compact.decode(whole, i)
        state = compact.decode(
            {
                "base": bank.base.numpy(),
                "palette": fields["cells"][k].numpy().astype(np.uint8),
                "rects": fields["rects"][k : k + 1].numpy(),
                "points": fields["points"][k : k + 1].numpy(),
                "values": np.arange(bank.shape.points)[None],
                **{key: fields[key][k : k + 1].numpy() for key in ("pos", "direction", "target")},
            },
            0,
        )
        for field in ("grid", "pos", "direction", "target"):
            np.testing.assert_array_equal(state[field], expected[field], err_msg=f"{i} {field}")


@pytest.mark.slow
def test_a_bank_grows_while_drawn_and_is_cached_whole(cache, monkeypatch, capsys):
    """The first chunk is ready at once, the rest arrive from workers in order; the rows are
    the layouts minigrid's generator makes, and the whole bank is cached."""
    monkeypatch.setattr(compact, "CHUNK", 1024)
    env_id, size = "MiniGrid-MultiRoom-N4-S5-v1", 4096
    bank = live_bank.LiveBank(layouts.open_bank(env_id, size, 0))
    assert bank.first == 1024 and int(bank.ready.numpy()) >= 1024
    bank.wait()
    assert int(bank.ready.numpy()) == size
    out = capsys.readouterr().out
    assert f"Building the first 1,024 layouts of the layout bank of {env_id} (4,096" in out
    assert "while training starts: its first 1,024 layouts are ready, the other 3,072" in out
    whole = layouts.generate(env_id, size, 0)
    _assert_rows_are_the_banks(bank, whole, [0, 1023, 1024, 2500, 4095])
    cached = layouts.bank(env_id, size)
    for field in compact.FIELDS:
        np.testing.assert_array_equal(cached[field], whole[field], err_msg=field)


def test_a_smaller_cached_bank_begins_a_larger_one_and_a_larger_serves_a_smaller(
    cache, monkeypatch
):
    monkeypatch.setattr(compact, "CHUNK", 1024)
    env_id = "MiniGrid-DoorKey-8x8-v0"
    layouts.bank(env_id, 1024)
    opened = layouts.open_bank(env_id, 3072, 0)
    assert [len(chunk["pos"]) for chunk in opened.ready] == [1024] and opened.rest is not None
    assert len(list(opened.rest())) == 2  # Only layouts 1,024-3,071 are built.
    kept = [path.name for path in (cache / "minigrid_layouts").iterdir()]
    assert len(kept) == 1 and "-n3072-" in kept[0], kept  # It holds the 1,024 it began with.
    whole = layouts.generate(env_id, 3072, 0)
    for field in compact.FIELDS:
        np.testing.assert_array_equal(layouts.bank(env_id, 3072)[field], whole[field])

    def built(*args):
        raise AssertionError("built instead of read from the larger bank")

    monkeypatch.setattr(compact, "encode_chunk", built)
    smaller = live_bank.LiveBank(layouts.open_bank(env_id, 2048, 0))
    assert smaller.thread is None and int(smaller.ready.numpy()) == 2048
    _assert_rows_are_the_banks(smaller, whole, [0, 1500, 2047])


def test_a_cached_bank_replaces_the_smaller_ones_it_holds(cache):
    """Banks of 1,024 and 2,048 layouts are the first layouts of one of 4,096: caching it
    removes them; a bank below `compact.BASE_SAMPLE` (a base of its own) and another seed's
    stay."""
    env_id = "MiniGrid-Empty-5x5-v0"
    for size, seed in ((512, 0), (1024, 0), (2048, 0), (1024, 1)):
        layouts.bank(env_id, size, seed)
    layouts.bank(env_id, 4096)
    kept = sorted(
        path.name.split("-minigrid")[0] for path in (cache / "minigrid_layouts").iterdir()
    )
    assert kept == [f"{env_id}-n{size}-s{seed}" for size, seed in ((1024, 1), (4096, 0), (512, 0))]


def test_a_process_that_ends_mid_build_caches_what_was_built(cache):
    """A run shorter than its bank's build: the layouts built so far are cached, and the next
    run of that bank starts from them."""
    code = (
        "from agents.envs.gridworld import compact, layouts\n"
        "compact.CHUNK = 1024\n"
        "opened = layouts.open_bank('MiniGrid-DoorKey-8x8-v0', 8192, 0)\n"
        "building = opened.rest()\n"
        "next(building)\n"  # One chunk past the first in; the process then exits.
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=120)
    kept = sorted(path.name for path in (cache / "minigrid_layouts").iterdir())
    assert len(kept) == 1 and ("-n2048-" in kept[0] or "-n3072-" in kept[0]), kept
    found = layouts._largest_cached("MiniGrid-DoorKey-8x8-v0", 8192, 0)
    assert found is not None and found[0] in (2048, 3072)


def test_a_damaged_cache_of_the_runs_bank_is_rebuilt_while_it_trains(cache, monkeypatch, capsys):
    monkeypatch.setattr(compact, "CHUNK", 1024)
    env_id = "MiniGrid-DoorKey-8x8-v0"
    path = layouts.path_of(env_id, 3072, 0)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a bank")
    opened = layouts.open_bank(env_id, 3072, 0)
    assert "is not usable (unreadable" in capsys.readouterr().err
    assert [len(chunk["pos"]) for chunk in opened.ready] == [1024]
    assert len(list(opened.rest())) == 2
    whole = layouts.generate(env_id, 3072, 0)
    for field in compact.FIELDS:
        np.testing.assert_array_equal(layouts.bank(env_id, 3072)[field], whole[field])
