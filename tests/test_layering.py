"""The package's layers, checked on the imports: agents.tools <- agents.envs <- agents.config
<- agents.ppo <- agents.training <- agents.policy and agents.api <- agents.scripts.

The command line (`agents.scripts`) is the roof: no library module imports it, except that
`agents.config.named` reads the named configs of `agents/scripts/configs.py`, the user's fixed place
for them. And no module imports itself through others (no circles), whether it imports at module
level or inside a function.
"""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).parent.parent / "agents"
NAMED_CONFIGS = "agents.scripts.configs"


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


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


def _library_files() -> list[pathlib.Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "scripts" not in p.relative_to(PACKAGE).parts)


HIGHER = ("agents.ppo", "agents.training", "agents.policy", "agents.api", "agents.scripts")


@pytest.mark.parametrize(
    "layer, forbidden",
    [
        ("tools", (*HIGHER, "agents.envs", "agents.config")),
        ("envs", (*HIGHER, "agents.config")),
        ("config", HIGHER),
        ("ppo", HIGHER[1:]),
        ("training", HIGHER[2:]),
        ("policy.py", ("agents.api", "agents.scripts")),
        ("api.py", ("agents.scripts",)),
    ],
)
def test_lower_layers_never_import_higher_ones(layer, forbidden):
    path = PACKAGE / layer
    files = sorted(path.glob("*.py")) if path.is_dir() else [path]
    assert files
    offenders = {
        f"{path.name} imports {name}"
        for path in files
        for name in _imported_modules(path)
        if name.startswith(forbidden)
        and not (path.name == "named.py" and name in (NAMED_CONFIGS, "agents.scripts"))
    }
    assert not offenders, sorted(offenders)


def test_library_code_never_imports_the_command_line_but_the_named_configs():
    offenders = {
        f"{_module_name(path)} imports {name}"
        for path in _library_files()
        for name in _imported_modules(path)
        if name.startswith("agents.scripts")
    }
    assert offenders == {
        "agents.config.named imports agents.scripts",
        "agents.config.named imports agents.scripts.configs",
    }


def _import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (`from p import m` counts as m where m is one)."""
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for module, path in files.items():
        targets = set()
        for name in _imported_modules(path):
            if name in files:
                targets.add(name)
        # `from agents.training import trainer` names agents.training and agents.training.trainer;
        # only the submodule is the edge when it is one.
        graph[module] = {t for t in targets if not any(o.startswith(f"{t}.") for o in targets)}
        graph[module].discard(module)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_through_others():
    assert _cycles(_import_graph()) == []


def test_the_cycle_check_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_the_check_sees_imports_inside_functions(tmp_path):
    path = tmp_path / "module.py"
    path.write_text("def f():\n    from agents.scripts import train\n")
    assert "agents.scripts.train" in _imported_modules(path)
