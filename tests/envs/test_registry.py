"""The native registry: built-in ids, ids registered by a module named in the id, bad ids."""

from __future__ import annotations

import sys

import pytest

from agents.envs import check_native, make_native, native_ids, registry
from agents.envs.cartpole import CartPole


def test_an_id_naming_its_module_imports_it_and_finds_what_it_registers(tmp_path, monkeypatch):
    (tmp_path / "my_native_envs.py").write_text(
        "from agents.envs import register\n"
        "from agents.envs.cartpole import CartPole\n"
        "register('ShortPole-v0', lambda: CartPole(max_episode_steps=20))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_REGISTERED", {})  # Left as found for other tests.
    assert "ShortPole-v0" not in native_ids()
    env = make_native("my_native_envs:ShortPole-v0", max_episode_steps=None)
    assert isinstance(env, CartPole) and env.max_episode_steps == 20
    assert make_native("my_native_envs:ShortPole-v0", 7).max_episode_steps == 7
    sys.modules.pop("my_native_envs")


def test_unknown_ids_and_modules_are_one_line_naming_what_there_is():
    with pytest.raises(ValueError, match=r"^env 'Nope-v0' has no native .*: CartPole-v0, "):
        check_native("Nope-v0")
    with pytest.raises(ValueError, match=r"^env 'no_such_module:X-v0': cannot import "):
        check_native("no_such_module:X-v0")


def test_native_minigrid_runs_are_played_on_minigrids_env_observed_as_they_trained():
    assert registry.python_wrapper("MiniGrid-DoorKey-8x8-v0") == "minigrid_image"
    assert (
        registry.python_wrapper("MiniGrid-DoorKey-8x8-v0", "minigrid_pixels") == "minigrid_pixels"
    )
    assert registry.python_wrapper("CartPole-v1") is None
    assert registry.native_wrappers("MiniGrid-Empty-5x5-v0") == (
        "minigrid_image",
        "minigrid_pixels",
    )
    assert registry.native_wrappers("Pendulum-v1") == ()
