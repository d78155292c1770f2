"""The map of the package, docs/architecture.md, generated from the code, so that it cannot drift.

`python -m benchmarks.architecture` writes the page: the packages and their imports (from the
source's import statements), one paragraph per package (from its docstring), and the path of one
training step (a short run of the command line under a profiler). `--static` rewrites what the
source alone gives and keeps the traced part as it is; `--check` writes nothing and exits 1 when
what the source gives differs from the page (tests/test_architecture.py runs it). The import graph
is also what tests/test_layering.py checks the floors on.
"""

from __future__ import annotations

import argparse
import ast
import collections
import difflib
import json
import pathlib
import subprocess
import sys
import tempfile
import threading
import types

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "agents"
PAGE = ROOT / "docs" / "architecture.md"
COMMAND = "python -m benchmarks.architecture"
# The packages from the floor up: a module imports only its own floor or those below it.
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
# The training run traced for the page, and the function that applies a gradient step.
TRAIN_ARGV = ["--config=debug", "--set", "train_steps=64"]
GRADIENT_STEP = ("agents.ppo.algorithm", "_gradient_step")
TRACED_BEGIN = "<!-- traced: begin -->"
TRACED_END = "<!-- traced: end -->"


def module_name(path: pathlib.Path) -> str:
    """The dotted name of a module file (`agents/ppo/__init__.py` is `agents.ppo`)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, pathlib.Path]:
    """Every module of the package, by dotted name."""
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(path: pathlib.Path, top_level_only: bool = False) -> set[str]:
    """Every name `path` imports, at module level or (unless `top_level_only`) in functions;
    `from p import m` gives both `p` and `p.m`. Imports under `if TYPE_CHECKING:` are not
    counted: they never run (annotations only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else _runtime_nodes(tree)
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _runtime_nodes(tree: ast.AST):
    """`ast.walk(tree)` but for the bodies of `if TYPE_CHECKING:` blocks."""
    for node in ast.iter_child_nodes(tree):
        test = getattr(node, "test", None) if isinstance(node, ast.If) else None
        if test is not None and ast.unparse(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            yield from (n for orelse in node.orelse for n in [orelse, *_runtime_nodes(orelse)])
            continue
        yield node
        yield from _runtime_nodes(node)


def with_parents(name: str) -> list[str]:
    """`a.b.c` and the packages whose `__init__` importing it runs: `a.b`, `a`."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (`from p import m` counts as m where m is one),
    with the package `__init__`s of other packages that importing them runs."""
    files = modules()
    graph = {}
    for module, path in files.items():
        targets = {name for name in imported_modules(path) if name in files}
        # `from agents.training import trainer` names agents.training and agents.training.trainer;
        # only the submodule is the edge when it is one.
        graph[module] = {t for t in targets if not any(o.startswith(f"{t}.") for o in targets)}
        # Importing a module of another package runs that package's `__init__` (and its
        # parents'): an edge of its own. Within one package the `__init__` has already run.
        for target in list(graph[module]):
            for parent in with_parents(target)[1:]:
                if parent in files and parent != "agents" and not module.startswith(f"{parent}."):
                    graph[module].add(parent)
        graph[module].discard(module)
    return graph


def package_of(module: str) -> str:
    """The floor a module belongs to (`agents` for the package's face, its `__init__`)."""
    return next((p for p in FLOORS if module == p or module.startswith(f"{p}.")), "agents")


def package_edges() -> dict[tuple[str, str], int]:
    """(importer, imported) package -> how many module pairs make the edge."""
    edges: dict[tuple[str, str], int] = {}
    for module, targets in import_graph().items():
        for target in targets:
            pair = (package_of(module), package_of(target))
            if pair[0] != pair[1]:
                edges[pair] = edges.get(pair, 0) + 1
    return edges


def docstring(module: str, first_only: bool = False) -> str:
    """A module's docstring on one line: its prose paragraphs joined (code blocks left out), or
    with `first_only` its first paragraph."""
    text = ast.get_docstring(ast.parse(modules()[module].read_text(encoding="utf-8"))) or ""
    kept, fenced = [], False
    for line in text.split("\n\n")[0].splitlines() if first_only else text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.strip():
            kept.append(line.strip())
    return " ".join(kept)


def trace() -> dict[str, list[str]]:
    """Runs the traced training in a child process; returns its module lists (see `_traced`)."""
    # Here, not at the top: the traced child imports this module, and its trace would miss it.
    from agents.runtime import tf_loading

    with tempfile.TemporaryDirectory() as folder:
        out = pathlib.Path(folder) / "trace.json"
        argv = [sys.executable, "-m", "benchmarks.architecture", "--trace-to", str(out)]
        environ = tf_loading.fresh_environ()
        result = subprocess.run(
            argv, cwd=ROOT, capture_output=True, text=True, timeout=600, env=environ
        )
        if result.returncode != 0 or not out.exists():
            raise RuntimeError(f"the traced training failed:\n{result.stdout}{result.stderr}")
        return json.loads(out.read_text(encoding="utf-8"))


def _traced(out: pathlib.Path) -> None:
    """Trains `TRAIN_ARGV` with the command line's `main`, recording in first-call order the
    package modules a function of which runs (imported alone does not count): up to the first
    entry of `GRADIENT_STEP` (`path`), over the whole run (`run`), and those imported (`imported`,
    by the first gradient step)."""
    seen_codes: set = set()
    run: list[str] = []
    imported: list[str] = []
    found: dict[str, list[str]] = {}
    walk, main = ArgsWalk(), threading.main_thread()

    def profile(frame, event, arg):
        name = frame.f_globals.get("__name__") or ""
        ours = name == "agents" or name.startswith("agents.")
        if ours and "path" not in found and threading.current_thread() is main:
            walk.see(frame, event, arg, name)  # The main thread's: others' interleave at random.
        if event != "call" or frame.f_code in seen_codes:
            return
        code = frame.f_code
        seen_codes.add(code)
        if not ours:
            return
        if (name, code.co_name.removeprefix("tf__")) == GRADIENT_STEP and "path" not in found:
            found["path"], found["imported"] = list(run), list(imported)
            found["args"] = list(walk.stays)
        listed = imported if code.co_name == "<module>" else run
        if name not in listed:
            listed.append(name)

    with tempfile.TemporaryDirectory() as logdir:
        sys.setprofile(profile)
        threading.setprofile(profile)
        from agents.scripts import train

        code = train.main([*TRAIN_ARGV, f"--logdir={logdir}"])
        sys.setprofile(None)
        threading.setprofile(None)
    if code != 0 or "path" not in found:
        raise SystemExit(f"the traced run exited {code}, gradient step reached: {'path' in found}")
    out.write_text(json.dumps(dict(found, run=run)), encoding="utf-8")


# Methods a reader does not step into: reading a value of the config is not a visit.
_ACCESSORS = {"__getattr__", "__getattribute__", "__getitem__", "__contains__", "__iter__"}
_ACCESSORS |= {"__len__", "__eq__", "__hash__", "__setattr__", "__setitem__", "__repr__"}


class ArgsWalk:
    """The library modules a reader enters following the command line's `args`, as a profiler
    sees calls: a call follows `args` when one of its arguments is the parsed
    `argparse.Namespace`, one of its values (not a number, a bool or None), or what a call that
    followed `args` returned (the config built from them, ...). A reader reads each function
    once, at its first such call (a loop's later calls, a value's accessors, `_ACCESSORS`, and
    a module's import add nothing). `stays` lists the modules in the order the walk enters
    them, a module once per stay (functions read in a row in one module are one stay), so a
    module listed twice is one the walk left and came back to."""

    def __init__(self) -> None:
        self.followed: dict[int, object] = {}  # id -> the object (kept, so ids stay unique)
        self.open: set[int] = set()  # Frames of calls that follow `args`: their results follow.
        self.read: set = set()  # Functions met already: a reader reads each once.
        self.stays: list[str] = []

    def see(self, frame, event: str, value, module: str) -> None:
        """Takes one profiler event of a frame of the package's `module`."""
        if event == "return" and id(frame) in self.open:
            self.open.discard(id(frame))
            self._follow(value)
            return
        if event != "call":
            return
        values = list(frame.f_locals.values())  # At a call: its arguments.
        if not self.followed:
            spaces = [v for v in values if isinstance(v, argparse.Namespace)]
            if not spaces:
                return
            for field in (spaces[0], *vars(spaces[0]).values()):
                self._follow(field)
        if any(self.followed.get(id(v)) is v for v in values):
            self.open.add(id(frame))
            code = frame.f_code
            if code in self.read or code.co_name in _ACCESSORS or code.co_name == "<module>":
                return
            self.read.add(code)
            if not self.stays or self.stays[-1] != module:
                self.stays.append(module)

    def _follow(self, value) -> None:
        """Follows a value: data, not a number (every 0 is one object), a module, a class or a
        function (TensorFlow returned by the call that imports it is not `args`)."""
        code = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType)
        if value is not None and not isinstance(value, (bool, int, float, *code)):
            self.followed[id(value)] = value


def entries(stays: list[str]) -> dict[str, int]:
    """How many times a walk's `stays` enter each module, the most entered first."""
    return dict(collections.Counter(stays).most_common())


def _short(package: str) -> str:
    return package.removeprefix("agents.") if package != "agents" else "face"


def _named(package: str) -> str:
    """A package as the tables name it (the face as `agents`)."""
    return "agents" if package == "agents" else _short(package)


def _modules(count: int) -> str:
    return f"{count} module{'s' if count != 1 else ''}"


def _packages() -> list[str]:
    """The face and the floors that hold modules, from the bottom."""
    return [p for p in ["agents", *FLOORS] if p in _package_counts()]


def _package_counts() -> dict[str, int]:
    counts: dict[str, int] = {}
    for module in modules():
        counts[package_of(module)] = counts.get(package_of(module), 0) + 1
    return counts


def _graph_section() -> list[str]:
    counts, edges = _package_counts(), package_edges()
    order = [_packages()[0], *reversed(_packages()[1:])]
    upward = sorted(e for e in edges if e[0] in FLOORS and FLOORS.index(e[0]) < FLOORS.index(e[1]))
    lines = [
        "## The packages and their imports",
        "",
        f"{sum(counts.values())} modules in {len(order)} packages (`agents/__init__.py`, the "
        "package's face, counted as its own). An arrow goes from a package to one it imports, "
        "at module level or in a function (importing a module runs its package's `__init__`, "
        "which counts too). The floors, from the bottom: "
        + ", ".join(f"`{_short(p)}`" for p in _packages()[1:])
        + "; a package imports only those below it"
        + (
            ", but for the dotted arrows: "
            + ", ".join(
                f"`{module}` imports `{target}`"
                for module, targets in sorted(import_graph().items())
                for target in sorted(targets)
                if (package_of(module), package_of(target)) in upward
            )
            + "."
            if upward
            else "."
        ),
        "",
        "```mermaid",
        "flowchart TD",
    ]
    for package in order:
        lines.append(f'    {_short(package)}["{package}<br/>{_modules(counts[package])}"]')
    for a, b in sorted(edges, key=lambda e: (order.index(e[0]), order.index(e[1]))):
        lines.append(f"    {_short(a)} {'-.->' if (a, b) in upward else '-->'} {_short(b)}")
    lines += [
        "```",
        "",
        "| package | modules | imports | imported by |",
        "| --- | --- | --- | --- |",
    ]
    for package in order:
        out = [f"`{_named(b)}` ({n})" for (a, b), n in sorted(edges.items()) if a == package]
        into = [f"`{_named(a)}` ({n})" for (a, b), n in sorted(edges.items()) if b == package]
        lines.append(
            f"| `{package}` | {counts[package]} | {', '.join(out) or '-'} | "
            f"{', '.join(into) or '-'} |"
        )
    lines += ["", "The number after a package is how many module pairs make the edge."]
    return lines


def _packages_section() -> list[str]:
    files = modules()
    lines = ["## The packages", ""]
    for package in _packages():
        lines += [f"### {package}", "", docstring(package)]
        folders = [
            package,
            *(m for m in files if m.startswith(f"{package}.") and files[m].name == "__init__.py"),
        ]
        for folder in folders:
            names = [m for m in files if m.rsplit(".", 1)[0] == folder and m not in folders]
            listed = ", ".join(f"`{n.rsplit('.', 1)[1]}`" for n in names)
            if folder != package:
                lines.append(
                    f"- `{folder}`: {docstring(folder, first_only=True)} Modules: {listed}"
                )
            elif names:
                lines += ["", f"Modules: {listed}", ""]
        lines.append("")
    return lines


def _traced_section(found: dict[str, list[str]]) -> list[str]:
    files = modules()
    gone = sorted(m for key in ("path", "run") for m in found[key] if m not in files)
    if gone:
        raise ValueError(f"the traced modules {gone} are gone: run {COMMAND}")
    path, run = found["path"], found["run"]
    module, function = GRADIENT_STEP
    command = " ".join(["python -m agents.scripts.train", *TRAIN_ARGV, "--logdir=<tmp>"])
    lines = [
        "## The path of one training step",
        "",
        TRACED_BEGIN,
        f"<!-- trace: {json.dumps(found)} -->",
        "",
        f"`{command}` traced with a profiler (this process only, not environment child "
        f"processes). A module counts when a function of it "
        f"runs, at import time included (a decorator, a table built), and not when it is only "
        f"imported; the body of a `tf.function` runs as Python while it is traced, and counts "
        f"then. The first gradient step is the first call of `{module}.{function}`.",
        "",
        f"**argv -> first gradient step: {len(path)} library modules** (by then "
        f"{len(found['imported'])} modules are imported), in the order their code first runs:",
        "",
        "| # | module | what it does |",
        "| --- | --- | --- |",
    ]
    lines += [f"| {i} | `{m}` | {docstring(m, first_only=True)} |" for i, m in enumerate(path, 1)]
    lines += ["", *_args_lines(found["args"])]
    counts = _package_counts()
    lines += [
        "",
        f"**The whole run: {len(run)} library modules** run code, by package:",
        "",
        "| package | modules that run | of |",
        "| --- | --- | --- |",
    ]
    for package in _packages():
        ran = sum(package_of(m) == package for m in run)
        lines.append(f"| `{package}` | {ran} | {counts[package]} |")
    later = [m for m in run if m not in path]
    lines += ["", "After the first gradient step these run for the first time: "]
    lines[-1] += ", ".join(f"`{m}`" for m in later) + "." if later else "none."
    return [*lines, TRACED_END]


def _args_lines(stays: list[str]) -> list[str]:
    """The paragraph on the walk that follows `args` (`ArgsWalk`) to the first gradient step."""
    counted = entries(stays)
    again = {module: count for module, count in counted.items() if count > 1}
    most = max(counted.values(), default=0)
    line = (
        f"**Following `args` to the first gradient step: {len(stays)} stays in {len(counted)} "
        f"modules; the most entered, {most} times.** The walk follows the parsed command "
        "line, its values and what the calls given them return (the config built from them, "
        "...): a call follows it when one of its arguments is one of these, and a reader reads "
        "each function once (a loop's later calls, a value's accessors add nothing). In the "
        "order the walk enters them (a module once per stay): "
    )
    line += " -> ".join(f"`{_short(m)}`" for m in stays) + "."
    if again:
        line += " Entered more than once: "
        line += ", ".join(f"`{_short(m)}` {n} times" for m, n in again.items()) + "."
    return [line]


LOOP = "agents/training/loop.py"  # The training loop, one file.


def function_imports() -> dict[str, int]:
    """Module -> how many imports it makes inside functions (those that have any): import
    statements, and calls of `importlib.import_module` (an import by a computed name)."""
    found = {}
    for module, path in modules().items():
        count = _imports_in_functions(ast.parse(path.read_text(encoding="utf-8")), False)
        if count:
            found[module] = count
    return found


def _imports_in_functions(node: ast.AST, inside: bool) -> int:
    if isinstance(node, ast.Import | ast.ImportFrom) or _is_import_call(node):
        return int(inside)
    inside = inside or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    return sum(_imports_in_functions(child, inside) for child in ast.iter_child_nodes(node))


def _is_import_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    function = node.func
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    return name in ("import_module", "__import__")


def _reading_section() -> list[str]:
    """How the code reads: the loop's length, and where imports wait for a function call."""
    loop_lines = len((ROOT / LOOP).read_text(encoding="utf-8").splitlines())
    waiting = function_imports()
    listed = ", ".join(
        f"`{module}` {count}"
        for module, count in sorted(waiting.items(), key=lambda item: (-item[1], item[0]))
    )
    return [
        "## How it reads",
        "",
        f"The training loop is one file, `{LOOP}` ({loop_lines} lines): a training call, its "
        "report, a checkpoint, an evaluation at each phase's end, the callbacks, the stop. "
        f"{sum(waiting.values())} imports in {len(waiting)} modules wait inside functions, most "
        "for TensorFlow (loaded once the run's agent family has set its process options) or for "
        f"an optional package: {listed}.",
    ]


def stored_trace(text: str) -> dict[str, list[str]]:
    """The trace a page holds (in its `<!-- trace: ... -->` line)."""
    start = text.index("<!-- trace: ") + len("<!-- trace: ")
    return json.loads(text[start : text.index(" -->", start)])


def page(found: dict[str, list[str]]) -> str:
    """The page's text, with the given trace (`trace()` or `stored_trace`)."""
    lines = [
        "# Architecture",
        "",
        f"<!-- generated from the code by {COMMAND}: change the code and run it -->",
        "",
        f"This page is generated from the code by `{COMMAND}`: the picture and its table from the "
        "import statements of `agents/**/*.py`, the paragraphs from the packages' docstrings, and "
        "the path of a training step from a short run of the command line under a profiler. "
        "`tests/test_architecture.py` fails when the page and the code differ.",
        "",
        *_graph_section(),
        "",
        *_traced_section(found),
        "",
        *_reading_section(),
        "",
        *_packages_section(),
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


def check() -> int:
    """Says on stderr how the page differs from what the code gives; returns 1 if it does."""
    text = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
    try:
        expected = page(stored_trace(text))
    except ValueError as error:
        print(f"{PAGE.relative_to(ROOT)}: {error}", file=sys.stderr)
        return 1
    if text == expected:
        return 0
    diff = difflib.unified_diff(text.splitlines(), expected.splitlines(), "page", "code", n=0)
    print(f"{PAGE.relative_to(ROOT)} differs from the code; run {COMMAND}", file=sys.stderr)
    print("\n".join(list(diff)[:40]), file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    group.add_argument("--static", action="store_true", help="keep the page's traced part")
    group.add_argument("--trace-to", type=pathlib.Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.trace_to:
        _traced(args.trace_to)
        return 0
    if args.check:
        return check()
    found = stored_trace(PAGE.read_text(encoding="utf-8")) if args.static else trace()
    PAGE.write_text(page(found), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
