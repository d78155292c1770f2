"""docs/architecture.md is the one the code gives: its import graph, module counts and package
paragraphs from the source (fast), its traced path of a training step from a run (slow)."""

import argparse
import ast
import pathlib
import sys

import pytest

from benchmarks import architecture


def _write(root: pathlib.Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A small package on three floors and the roof, in place of `agents`."""
    _write(
        tmp_path,
        {
            "agents/__init__.py": '"""The face."""\n',
            "agents/tools/__init__.py": '"""Tools."""\n',
            "agents/tools/a.py": '"""A tool."""\n',
            "agents/config/__init__.py": '"""Configs."""\n',
            "agents/config/named.py": (
                '"""Named."""\n\ndef f():\n    from agents.scripts import configs\n'
            ),
            "agents/ppo/__init__.py": (
                '"""The agent.\n\nSecond paragraph.\n\n```python\nx = 1\n```\n"""\n'
            ),
            "agents/ppo/b.py": '"""B."""\n\nfrom agents.tools import a\n',
            "agents/ppo/nets/__init__.py": '"""Networks of the agent.\n\nMore."""\n',
            "agents/ppo/nets/c.py": '"""C."""\n\nimport agents.ppo.b\n',
            "agents/scripts/__init__.py": '"""The command line."""\n',
            "agents/scripts/configs.py": '"""Configs by name."""\n',
            "agents/scripts/train.py": '"""Train."""\n\nfrom agents.ppo import b\n',
        },
    )
    monkeypatch.setattr(architecture, "PACKAGE", tmp_path / "agents")
    return tmp_path / "agents"


def test_the_page_is_the_one_the_code_gives():
    text = architecture.PAGE.read_text(encoding="utf-8")
    expected = architecture.page(architecture.stored_trace(text))
    assert text == expected, (
        f"docs/architecture.md differs from the code: run {architecture.COMMAND}"
    )


def test_package_edges_count_module_pairs_and_the_init_each_import_runs(package):
    assert architecture.package_edges() == {
        ("agents.ppo", "agents.tools"): 2,  # b imports a, and tools' __init__ runs.
        ("agents.config", "agents.scripts"): 2,  # Inside a function: configs and its __init__.
        ("agents.scripts", "agents.ppo"): 2,
    }


def test_the_picture_draws_each_package_with_its_modules_and_an_upward_edge_dotted(package):
    lines = "\n".join(architecture._graph_section())
    assert 'ppo["agents.ppo<br/>4 modules"]' in lines  # Its __init__, b, nets and nets.c.
    assert 'face["agents<br/>1 module"]' in lines
    assert "    ppo --> tools\n" in lines
    assert "    scripts --> ppo\n" in lines
    assert "    config -.-> scripts\n" in lines
    assert "`agents.config.named` imports `agents.scripts.configs`" in lines


def test_a_new_import_not_regenerated_makes_the_page_differ(package):
    trace = {"path": ["agents.ppo.b"], "imported": [], "run": ["agents.ppo.b"], "args": []}
    before = architecture.page(trace)
    (package / "scripts" / "configs.py").write_text('"""Configs."""\n\nimport agents.tools.a\n')
    after = architecture.page(trace)
    assert "    scripts --> tools\n" in after and "    scripts --> tools\n" not in before


def test_package_paragraphs_join_prose_and_leave_code_out(package):
    text = "\n".join(architecture._packages_section())
    assert "### agents.ppo\n\nThe agent. Second paragraph.\n" in text
    assert "x = 1" not in text
    assert "- `agents.ppo.nets`: Networks of the agent. Modules: `c`" in text
    assert "Modules: `b`" in text


def test_a_traced_module_that_is_gone_names_the_command(package):
    trace = {"path": ["agents.ppo.gone"], "imported": [], "run": ["agents.ppo.gone"], "args": []}
    with pytest.raises(ValueError, match="agents.ppo.gone.*python -m benchmarks.architecture"):
        architecture.page(trace)


def test_the_traced_gradient_step_is_a_function_of_the_package():
    module, function = architecture.GRADIENT_STEP
    path = architecture.modules()[module]
    names = {node.name for node in ast.walk(ast.parse(path.read_text())) if hasattr(node, "name")}
    assert function in names, f"{module} has no {function}: set GRADIENT_STEP to the new name"


@pytest.mark.slow
def test_the_traced_path_is_the_one_a_run_takes_now():
    # About 15 s: the command line trains 64 env steps under a profiler in a child process.
    stored = architecture.stored_trace(architecture.PAGE.read_text(encoding="utf-8"))
    assert architecture.trace() == stored, f"the traced path changed: run {architecture.COMMAND}"


# Three "modules" for the walk below, named by their functions' prefixes.
def _ma_main(args):
    config = _mb_parse(args.set)  # Given a value of `args`: returns the config, followed.
    _mc_other(args.seed)  # A number: not followed (every 0 is one object).
    _ma_build(config)
    used = _mb_use(config)
    _ma_build(config)  # Read already: no new stay.
    return used


def _mb_parse(words):
    return {word.split("=")[0]: word.split("=")[1] for word in words}


def _mc_other(seed):
    return seed + 1


def _ma_build(config):
    return None


def _mb_use(config):
    return len(config)


def test_the_args_walk_follows_the_namespace_its_values_and_what_calls_given_them_return():
    walk = architecture.ArgsWalk()

    def profile(frame, event, arg):
        if frame.f_code.co_name.startswith(("_ma_", "_mb_", "_mc_")):
            walk.see(frame, event, arg, frame.f_code.co_name[1:3])

    sys.setprofile(profile)
    try:
        _ma_main(argparse.Namespace(set=["a=1", "b=2"], seed=0))
    finally:
        sys.setprofile(None)
    assert walk.stays == ["ma", "mb", "ma", "mb"]
    assert architecture.entries(walk.stays) == {"ma": 2, "mb": 2}
    assert architecture.entries(["x", "y", "x", "z", "x"]) == {"x": 3, "y": 1, "z": 1}
