"""The package's layers, checked on the imports: agents.runtime <- agents.tools <- agents.envs
<- agents.config <- agents.ppo <- agents.training <- agents.multirun <- agents.policy
<- agents.api <- agents.scripts.

A module imports only modules of its own floor or below, subpackages and package `__init__`s
included (importing `a.b.c` runs the `__init__` of `a` and of `a.b`, so those count as edges
too). The command line (`agents.scripts`) is the roof: no library module imports it, except that
`agents.config.named` reads the named configs of `agents/scripts/configs.py`, the user's fixed place
for them. `import agents` imports nothing of the package at module level (names load on first
use). And no module imports itself through others (no circles of any length), whether it
imports at module level or inside a function.
"""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).parent.parent / "agents"
NAMED_CONFIGS = "agents.scripts.configs"
FLOORS = [
    "agents.runtime",
    "agents.tools",
    "agents.envs",
    "agents.config",
    "agents.ppo",
    "agents.training",
    "agents.multirun",
    "agents.policy",
    "agents.api",
    "agents.scripts",
]


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: pathlib.Path, top_level_only: bool = False) -> set[str]:
    """Every module `path` imports, at module level or (unless `top_level_only`) in functions."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else ast.walk(tree)
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _library_files() -> list[pathlib.Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "scripts" not in p.relative_to(PACKAGE).parts)


def _floor(module: str) -> int | None:
    """The floor of a package module (None for `agents` itself and for other packages)."""
    for index, prefix in enumerate(FLOORS):
        if module == prefix or module.startswith(f"{prefix}."):
            return index
    return None


def _with_parents(name: str) -> list[str]:
    """`a.b.c` and the packages whose `__init__` importing it runs: `a.b`, `a`."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


def test_every_package_module_is_on_a_floor():
    modules = {_module_name(p) for p in PACKAGE.rglob("*.py")} - {"agents"}
    assert [m for m in sorted(modules) if _floor(m) is None] == []


def test_lower_floors_never_import_higher_ones():
    offenders = set()
    for path in PACKAGE.rglob("*.py"):
        module = _module_name(path)
        own = _floor(module)
        if own is None:
            continue
        for name in _imported_modules(path):
            for target in _with_parents(name):
                floor = _floor(target)
                if (
                    floor is not None
                    and floor > own
                    and not (
                        module == "agents.config.named" and target.startswith("agents.scripts")
                    )
                ):
                    offenders.add(f"{module} imports {target}")
    assert not offenders, sorted(offenders)


def test_import_agents_imports_nothing_of_the_package_at_module_level():
    init = PACKAGE / "__init__.py"
    assert [n for n in _imported_modules(init, top_level_only=True) if n.startswith("agents")] == []


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
        # Importing a module of another package runs that package's `__init__` (and its
        # parents'): an edge of its own. Within one package the `__init__` has already run.
        for target in list(graph[module]):
            for parent in _with_parents(target)[1:]:
                if parent in files and parent != "agents" and not module.startswith(f"{parent}."):
                    graph[module].add(parent)
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
