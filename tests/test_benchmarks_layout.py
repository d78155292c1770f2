"""The benchmarks' layout, checked on the imports: one package run as `python -m benchmarks.<name>`.

Every module imports the others absolutely from the `benchmarks` package (no `sys.path` edits, no
relative or bare-name imports). A benchmark (a module of the package's top level) imports only the
shared `benchmarks.common` and the page machinery (`benchmarks.pages`), never another benchmark;
the page machinery makes its pages from records with `benchmarks.common` and imports no benchmark.
And no module imports itself through others, at module level or inside a function.
"""

import ast
import pathlib

ROOT = pathlib.Path(__file__).parent.parent
PACKAGE = ROOT / "benchmarks"
SHARED = {"benchmarks", "benchmarks.common"}


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
PAGES = {name for name in MODULES if name.split(".")[:2] == ["benchmarks", "pages"]}
BENCHMARKS = {name for name in MODULES if name.count(".") == 1} - SHARED - PAGES


def _tree(module: str) -> ast.Module:
    return ast.parse(MODULES[module].read_text())


def _imports(module: str) -> set[str]:
    """The package's modules `module` imports anywhere in it (bare names included), with the
    packages whose `__init__` each import runs."""
    names = set()
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    # A bare name imports a module of the importer's folder, as a script run by its path does.
    folder = module if MODULES[module].name == "__init__.py" else module.rsplit(".", 1)[0]
    names |= {f"{folder}.{name}" for name in names if not name.startswith("benchmarks")}
    found = set()
    for name in names:
        parts = name.split(".")
        found.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))
    return (found & set(MODULES)) - {module}


def test_the_benchmarks_are_a_package_with_a_docstring_per_folder():
    for package in ("benchmarks", "benchmarks.pages"):
        docstring = ast.get_docstring(_tree(package))
        assert docstring and "\n" not in docstring.strip(), package
    assert "benchmarks.pages.__main__" in MODULES  # `python -m benchmarks.pages`.


def test_no_module_edits_sys_path():
    for module in MODULES:
        for node in ast.walk(_tree(module)):
            if isinstance(node, ast.Attribute) and node.attr == "path":
                assert not (isinstance(node.value, ast.Name) and node.value.id == "sys"), module


def test_every_import_of_the_package_is_absolute_from_benchmarks():
    # A bare `import common` or `from learning import table` works only with the module's folder
    # on sys.path, as a script run by its path has it.
    bare = {name.rsplit(".", 1)[-1] for name in MODULES if name != "benchmarks"}
    for module in MODULES:
        for node in ast.walk(_tree(module)):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{module}: relative import"
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                assert name.split(".")[0] not in bare, f"{module} imports {name}"


def test_every_benchmark_runs_as_a_module():
    for module in BENCHMARKS:
        guards = [
            node
            for node in _tree(module).body
            if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
        ]
        assert guards, f"{module} has no `if __name__ == '__main__':`"


def test_no_benchmark_imports_another():
    for module in BENCHMARKS:
        others = _imports(module) - SHARED - PAGES
        assert not others, f"{module} imports {sorted(others)}: move what they share to common"


def test_the_page_machinery_imports_no_benchmark():
    for module in PAGES:
        outside = _imports(module) - SHARED - PAGES
        assert not outside, f"{module} imports {sorted(outside)}"


def test_no_module_imports_itself_through_others():
    graph = {module: _imports(module) for module in MODULES}
    state: dict[str, str] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for other in sorted(graph[module]):
            assert state.get(other) != "open", " -> ".join([*path, module, other])
            if other not in state:
                visit(other, [*path, module])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
