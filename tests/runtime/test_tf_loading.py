"""Tests for TensorFlow's process settings, made before it loads, and the light `import agents`."""

import json
import os
import subprocess
import sys

import pytest

from agents.runtime import tf_loading

_CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("TF_", "AGENTS_"))}


def test_prepare_turns_onednn_on_only_for_an_agent_that_runs_with_it(monkeypatch):
    for onednn, expected in [(True, "1"), (False, "0")]:
        monkeypatch.delenv(tf_loading.ONEDNN, raising=False)
        monkeypatch.delenv(tf_loading.OURS, raising=False)
        monkeypatch.setattr(tf_loading.sys, "modules", {})  # As before TensorFlow loads.
        monkeypatch.setattr(tf_loading.compile_cache, "enable", lambda: None)
        tf_loading.prepare(onednn)
        assert os.environ[tf_loading.ONEDNN] == expected


def test_unapplied_names_what_a_tensorflow_loaded_first_lacks():
    environ = {"TF_XLA_FLAGS": "--tf_xla_persistent_cache_directory=/c"}
    assert tf_loading.unapplied(False, environ) == [
        "oneDNN stays on (this agent runs with TF_ENABLE_ONEDNN_OPTS=0)"
    ]
    assert tf_loading.unapplied(True, {}) == ["XLA's compile cache is off"]


@pytest.mark.slow
def test_importing_tensorflow_through_tf_loading_applies_them_before_it_loads():
    # A fresh interpreter: TensorFlow reads the variables only when it loads.
    code = (
        "import os, sys\n"
        "from agents.runtime import tf_loading\n"
        "tf_loading.import_tensorflow()\n"
        "assert 'tensorflow' in sys.modules\n"
        "print(os.environ['TF_ENABLE_ONEDNN_OPTS'])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=_CLEAN, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["0"]


def test_settings_agents_made_are_its_own_in_child_processes_and_the_users_are_kept():
    """A script that prepared ppo's settings runs a pixel agent's training in a child: the child
    sets its agent's oneDNN; a value the user set stays in both."""
    child = (
        "from agents.runtime import tf_loading; tf_loading.prepare(onednn=True); "
        "import os; print(os.environ['TF_ENABLE_ONEDNN_OPTS'])"
    )
    parent = (
        "import os, subprocess, sys; import agents.runtime; agents.runtime.prepare(); "
        "print(os.environ['TF_ENABLE_ONEDNN_OPTS']); "
        f"sys.stdout.flush(); subprocess.run([sys.executable, '-c', {child!r}])"
    )
    for user, expected in [(None, ["0", "1"]), ("0", ["0", "0"])]:
        run_env = dict(_CLEAN, TF_ENABLE_ONEDNN_OPTS=user) if user else _CLEAN
        result = subprocess.run(
            [sys.executable, "-c", parent], capture_output=True, text=True, env=run_env
        )
        assert result.stdout.split() == expected, result.stderr


_PROBE = """
import json, os, sys
before = dict(os.environ)
import {module}
print(json.dumps({{
    "agents": sorted(m for m in sys.modules if m == "agents" or m.startswith("agents.")),
    "heavy": sorted(m for m in ("tensorflow", "keras", "tensorflow_probability", "tqdm")
                    if m in sys.modules),
    "environ": sorted(k for k in os.environ if os.environ.get(k) != before.get(k)),
}}))
"""


def test_importing_agents_loads_no_tensorflow_sets_nothing_and_creates_nothing(tmp_path):
    """`import agents` and the env registry are free: no TensorFlow, no run or command-line
    module, no environment variable, no file (the XLA cache folder is made when a run starts)."""
    env = dict(_CLEAN, XDG_CACHE_HOME=str(tmp_path / "cache"), HOME=str(tmp_path / "home"))
    found = {}
    for module in ("agents", "agents.envs.registry"):
        result = subprocess.run(
            [sys.executable, "-c", _PROBE.format(module=module)],
            capture_output=True, text=True, env=env, cwd=tmp_path, check=True,
        )  # fmt: skip
        found[module] = json.loads(result.stdout)
    for facts in found.values():
        assert facts["heavy"] == [] and facts["environ"] == []
        higher = [m for m in facts["agents"] if m.startswith(("agents.training", "agents.scripts"))]
        assert higher == []
    assert len(found["agents"]["agents"]) <= 12, found["agents"]["agents"]
    assert sorted(os.listdir(tmp_path)) == []  # Neither the cache nor a home folder was made.


def test_a_later_run_is_measured_against_what_tensorflow_loaded_with(monkeypatch):
    """`agents.train` restores the caller's environment after a run; the next run in the
    process must not read that as a TensorFlow loaded without the settings."""
    loaded_with = {
        "TF_ENABLE_ONEDNN_OPTS": "0",
        "TF_XLA_FLAGS": "--tf_xla_persistent_cache_directory=/c",
    }
    monkeypatch.setitem(tf_loading._state, "loaded_with", loaded_with)
    monkeypatch.setitem(tf_loading._state, "warned", False)
    for key in ("TF_ENABLE_ONEDNN_OPTS", "TF_XLA_FLAGS"):
        monkeypatch.delenv(key, raising=False)
    assert tf_loading.import_tensorflow(onednn=False) is None
    warning = tf_loading.import_tensorflow(onednn=True)
    assert "oneDNN stays off (this agent runs with TF_ENABLE_ONEDNN_OPTS=1)" in warning
    assert "compile cache" not in warning
