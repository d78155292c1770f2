"""The package's layers, checked on the imports: agents.tools <- agents.envs <- agents.config
<- agents.ppo <- agents.training <- agents.scripts and agents.api.

Three modules of scripts serve the layers below as data or helpers, and no others: the named
configs (`configs`, read by agents.config), how a process loads TensorFlow (`console`) and the
learning curve (`plot`), which the trainer uses.
"""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).parent.parent / "agents"


def _imported_modules(path: pathlib.Path) -> set[str]:
    """Every module `path` imports, at module level or inside functions."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


HIGHER = ("agents.ppo", "agents.training", "agents.scripts", "agents.api")


@pytest.mark.parametrize(
    "layer, forbidden, allowed",
    [
        ("tools", (*HIGHER, "agents.envs", "agents.config"), ()),
        ("envs", HIGHER, ()),
        ("config", HIGHER, ("agents.scripts.configs",)),
        ("ppo", HIGHER[1:], ()),
        ("training", HIGHER[2:], ("agents.scripts.console", "agents.scripts.plot")),
    ],
)
def test_lower_layers_never_import_higher_ones(layer, forbidden, allowed):
    files = sorted((PACKAGE / layer).glob("*.py"))
    assert files
    offenders = {
        f"{path.name} imports {name}"
        for path in files
        for name in _imported_modules(path)
        if name.startswith(forbidden)
        and name not in allowed
        and not any(a.startswith(f"{name}.") for a in allowed)  # `from <package> import <a>`
    }
    assert not offenders, sorted(offenders)


def test_the_check_sees_imports_inside_functions(tmp_path):
    path = tmp_path / "module.py"
    path.write_text("def f():\n    from agents.scripts import train\n")
    assert "agents.scripts.train" in _imported_modules(path)
