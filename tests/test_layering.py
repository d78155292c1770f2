"""The package's layers: agents.tools <- agents.ppo <- agents.scripts, checked on the imports."""

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


@pytest.mark.parametrize(
    "layer, forbidden",
    [
        ("tools", ("agents.ppo", "agents.scripts", "agents.api", "agents.envs")),
        ("envs", ("agents.ppo", "agents.scripts", "agents.api")),
        ("ppo", ("agents.scripts",)),
    ],
)
def test_lower_layers_never_import_higher_ones(layer, forbidden):
    files = sorted((PACKAGE / layer).glob("*.py"))
    assert files
    offenders = {
        f"{path.name} imports {name}"
        for path in files
        for name in _imported_modules(path)
        if name.startswith(forbidden)
    }
    assert not offenders, sorted(offenders)


def test_the_check_sees_imports_inside_functions(tmp_path):
    path = tmp_path / "module.py"
    path.write_text("def f():\n    from agents.scripts import session\n")
    assert "agents.scripts.session" in _imported_modules(path)
