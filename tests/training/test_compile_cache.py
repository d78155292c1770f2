"""Tests for the persistent XLA compilation cache's setting (no TensorFlow needed)."""

import os

from agents.training import compile_cache


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
