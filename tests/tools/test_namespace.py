"""Tests for the lazy `agents.tools` namespace."""

import importlib
import os
import subprocess
import sys

import agents
from agents import tools


def test_public_simulate_is_the_function_after_importing_its_submodule(monkeypatch):
    # Import the submodule afresh, as a first `import agents.tools.simulate` would.
    monkeypatch.delitem(sys.modules, "agents.tools.simulate", raising=False)
    monkeypatch.delitem(vars(tools), "simulate", raising=False)
    monkeypatch.delitem(vars(tools), "simulate_steps", raising=False)
    module = importlib.import_module("agents.tools.simulate")
    assert tools.simulate is module.simulate
    assert tools.simulate_steps is module.simulate_steps
    from agents.tools import simulate

    assert simulate is module.simulate


def test_every_public_name_resolves_to_its_object():
    for name in tools.__all__:
        value = getattr(tools, name)
        assert callable(value) and value.__name__ == name, name


def test_light_names_do_not_import_tensorflow():
    code = (
        "import sys\n"
        "from agents import tools\n"
        "import agents.tools.wrappers\n"
        "tools.AttrDict, tools.BatchEnv, tools.ExternalProcess, tools.MockEnvironment\n"
        "assert 'tensorflow' not in sys.modules, 'tensorflow imported'\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(agents.__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
