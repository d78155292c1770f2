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

The import graph and the floors are those `python -m benchmarks.architecture` draws on
docs/architecture.md.
"""

import pathlib

from benchmarks.architecture import (
    FLOORS,
    PACKAGE,
    import_graph,
    imported_modules,
    module_name,
    with_parents,
)

NAMED_CONFIGS = "agents.scripts.configs"


def _library_files() -> list[pathlib.Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "scripts" not in p.relative_to(PACKAGE).parts)


def _floor(module: str) -> int | None:
    """The floor of a package module (None for `agents` itself and for other packages)."""
    for index, prefix in enumerate(FLOORS):
        if module == prefix or module.startswith(f"{prefix}."):
            return index
    return None


def test_every_package_module_is_on_a_floor():
    modules = {module_name(p) for p in PACKAGE.rglob("*.py")} - {"agents"}
    assert [m for m in sorted(modules) if _floor(m) is None] == []


def test_lower_floors_never_import_higher_ones():
    offenders = set()
    for path in PACKAGE.rglob("*.py"):
        module = module_name(path)
        own = _floor(module)
        if own is None:
            continue
        for name in imported_modules(path):
            for target in with_parents(name):
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
    assert [n for n in imported_modules(init, top_level_only=True) if n.startswith("agents")] == []


def test_library_code_never_imports_the_command_line_but_the_named_configs():
    offenders = {
        f"{module_name(path)} imports {name}"
        for path in _library_files()
        for name in imported_modules(path)
        if name.startswith("agents.scripts")
    }
    assert offenders == {
        "agents.config.named imports agents.scripts",
        "agents.config.named imports agents.scripts.configs",
    }


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
    assert _cycles(import_graph()) == []


def test_the_cycle_check_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_the_check_sees_imports_inside_functions(tmp_path):
    path = tmp_path / "module.py"
    path.write_text("def f():\n    from agents.scripts import train\n")
    assert "agents.scripts.train" in imported_modules(path)


def test_the_check_skips_imports_made_for_type_checkers_only(tmp_path):
    path = tmp_path / "module.py"
    path.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agents import api\n"
        "else:\n    import json\ndef f():\n    from agents.scripts import train\n"
    )
    assert imported_modules(path) == {"typing", "typing.TYPE_CHECKING", "json", "agents.scripts",
                                      "agents.scripts.train"}  # fmt: skip
