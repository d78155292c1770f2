"""Every shell command of README.md and docs/*.md runs as written.

The commands are the lines of the pages' fenced `sh`, `bash`, `console` and `shell` blocks (a line
ending in `\\` goes on on the next; `#` starts a comment; `&&` separates commands; leading
`NAME=value` words set the command's environment). Each command is one of these kinds:

- `train`: `python -m agents.scripts.train ...`. Every one is checked with `--dry-run` in this
  process (the quick tier: a wrong flag, config name, key or value fails). Those a machine here
  can train also run for real (slow) with a tiny budget appended, `--set train_steps=1` (one
  training call; a resume one call more), in the order of the pages, in one working directory
  that holds the files the pages ask the reader to write (`linear_net.py`, ...) and a run
  named as the pages name it. Dry-run only: commands that say `--dry-run` or `--help`
  themselves, those under a launcher (`mpirun`, `srun`: many processes), an env whose package
  is not installed here (the dry run must then be the one-line install hint of an extra
  setup.py has), an env the pages register but do not implement, and the configs of
  `DRY_RUN_ONLY`.
- `script`: `python -m agents.scripts.<visualize|plot|tune>`: every flag used is in its
  `--help` (quick); they run for real (slow) after the training commands, visualize with
  `--num_episodes 1` and tune with `--trials 1 --set train_steps=1` appended.
- `pip`: `pip install -e ".[extra,...]"` names extras of setup.py's `extras_require`; `pip
  install name` names a package installed with this one.
- `module`: `python -m <module>` of another package (pytest, mkdocs, benchmarks): the module
  exists, and a module of this repository mentions each flag used (benchmarks take hours;
  the docs build and the suite have tests of their own).
- `tool`: `tensorboard`, `ruff`, `mkdocs`: installed beside this Python.
- `setup`: `python3 -m venv`, `. .venv/bin/activate`: the environment this test runs in.
- `external`: `docker`, `curl`, `printf` (a hosts file): other programs and services, not run.
"""

import ast
import contextlib
import dataclasses
import glob
import importlib.util
import io
import itertools
import os
import pathlib
import re
import shlex
import shutil
import sys

import pytest

from tests.scripts.capture import run_main

ROOT = pathlib.Path(__file__).parent.parent
PAGES = ["README.md"] + sorted(str(path.relative_to(ROOT)) for path in (ROOT / "docs").glob("*.md"))
SHELLS = ("sh", "bash", "console", "shell")
TRAIN = ["python", "-m", "agents.scripts.train"]
SCRIPTS = ("visualize", "plot", "tune")
LAUNCHERS = ("mpirun", "srun")
TOOLS = ("tensorboard", "ruff", "mkdocs")
EXTERNAL = ("docker", "curl", "printf")
# The run the pages name, and what stands for "a run directory" in them.
RUN = "20261122T031000-pendulum-s0"
PLACEHOLDERS = {"<run>": RUN}
# Configs a test machine cannot train for real, and why: their dry run is checked.
DRY_RUN_ONLY = {
    "multiroom_rnd": "9,830,400 env steps of MultiRoom with RND (hours)",
    "doorkey_native": "one training call is 65,536 env steps of XLA-compiled MiniGrid",
}


@dataclasses.dataclass(frozen=True)
class Command:
    """One command of a page: where it is, its environment and its words."""

    page: str
    line: int
    env: tuple[tuple[str, str], ...]
    argv: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {shlex.join(self.argv)}"

    @property
    def kind(self) -> str:
        argv = list(self.argv)
        if argv[0] in LAUNCHERS:
            return "train" if _inner(argv)[:3] == TRAIN else "unknown"
        if argv[:3] == TRAIN:
            return "train"
        if argv[:2] == ["python", "-m"] and argv[2].removeprefix("agents.scripts.") in SCRIPTS:
            return "script"
        if argv[:2] == ["pip", "install"]:
            return "pip"
        if argv[:2] == ["python3", "-m"] and argv[2] == "venv" or argv[0] in (".", "source"):
            return "setup"
        if argv[:2] == ["python", "-m"]:
            return "module"
        if argv[0] in TOOLS:
            return "tool"
        return "external" if argv[0] in EXTERNAL else "unknown"

    @property
    def inner(self) -> list[str]:
        """The command's own words, without a launcher and its options."""
        return _inner(list(self.argv)) if self.argv[0] in LAUNCHERS else list(self.argv)

    @property
    def launched(self) -> bool:
        return self.argv[0] in LAUNCHERS


def _inner(argv: list[str]) -> list[str]:
    return argv[argv.index("python") :] if "python" in argv else []


def page_commands() -> list[Command]:
    """The commands of every page's shell blocks, in page order (see the module)."""
    commands = []
    for page in PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        for block in re.finditer(r"^```(\w+)[^\n]*\n(.*?)^```", text, re.M | re.S):
            if block.group(1) not in SHELLS:
                continue
            first = text[: block.start(2)].count("\n") + 1
            body = block.group(2).replace("\\\n", "  ")  # Continuations, line numbers kept.
            for offset, line in enumerate(body.split("\n")):
                words = shlex.split(line, comments=True)
                for part in _split(words, "&&"):
                    env = []
                    while part and re.fullmatch(r"[A-Z_]+=\S*", part[0]):
                        env.append(tuple(part.pop(0).split("=", 1)))
                    argv = [PLACEHOLDERS.get(w, w) for w in part]
                    argv = [_substituted(w) for w in argv]
                    if argv:
                        commands.append(Command(page, first + offset, tuple(env), tuple(argv)))
    return commands


def _split(words: list[str], separator: str) -> list[list[str]]:
    parts = [[]]
    for word in words:
        if word == separator:
            parts.append([])
        else:
            parts[-1].append(word)
    return parts


def _substituted(word: str) -> str:
    for placeholder, value in PLACEHOLDERS.items():
        word = word.replace(placeholder, value)
    return word


COMMANDS = page_commands()


def _of(*kinds: str) -> list[Command]:
    return [command for command in COMMANDS if command.kind in kinds]


def test_every_command_is_of_a_known_kind():
    assert len(COMMANDS) > 40  # The pages' commands were found.
    assert [str(command) for command in _of("unknown")] == []
    assert {command.kind for command in COMMANDS} >= {"train", "script", "pip", "module"}


# Files the pages ask the reader to write, with where the pages give them.
def _doc_block(page: str, after: str, language: str = "python") -> str:
    """The first `language` block that holds `after` or follows it."""
    text = (ROOT / page).read_text(encoding="utf-8")
    at = text.index(after)
    for block in re.finditer(rf"^```{language}\n(.*?)^```", text, re.M | re.S):
        if block.end() > at:
            return block.group(1)
    raise AssertionError(f"{page}: no {language} block at or after {after!r}")


def _corridor() -> str:
    """my_pkg/corridor.py as docs/native-envs.md composes it: the class, then its registration
    (without the example's own `agents.train` call)."""
    example = _doc_block("docs/native-envs.md", "## Writing one")
    kept = example[: example.index("result = agents.train(")]
    return kept + _doc_block("docs/native-envs.md", "# my_pkg/corridor.py, below the class")


def _write_doc_files(folder: pathlib.Path) -> None:
    files = {
        "linear_net.py": _doc_block("docs/extending.md", "in a file `linear_net.py`:"),
        "my_package/envs.py": _doc_block("docs/environments.md", "## By id"),
        "my_pkg/corridor.py": _corridor(),
        "space.yaml": _doc_block("docs/experiments.md", "or a YAML file of your own", "yaml"),
    }
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        if path.suffix == ".py":
            (path.parent / "__init__.py").touch()


# Packages that register their ids once, when first imported: a later test in this process
# imports them again for nothing, so their ids stay registered.
_REGISTER_ON_IMPORT = ("minigrid", "ale_py")


@contextlib.contextmanager
def _working_dir(folder: pathlib.Path, monkeypatch):
    """`folder` as the current directory and first on the path, as `python -m` has it; after,
    what the pages' commands left in this process is undone (their modules, the env ids they
    registered, W&B's service and the variables it set), so later tests in it meet none of it."""
    import gymnasium as gym

    from agents.envs import registry
    from agents.envs.python import vector_envs

    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("WANDB_MODE", "offline")  # --track: no network here.
    environ, gym_ids = dict(os.environ), set(gym.registry)
    natives, vectors = dict(registry._REGISTERED), dict(vector_envs._USER_FACTORIES)
    try:
        yield
    finally:
        for name in ("linear_net", "my_package", "my_package.envs", "my_pkg", "my_pkg.corridor"):
            sys.modules.pop(name, None)
        for env_id in set(gym.registry) - gym_ids:
            entry = gym.registry[env_id].entry_point
            where = str(getattr(entry, "__module__", entry))
            if not where.startswith(_REGISTER_ON_IMPORT):  # Theirs come back on no import.
                del gym.registry[env_id]
        tables = ((registry._REGISTERED, natives), (vector_envs._USER_FACTORIES, vectors))
        for table, kept in tables:
            table.clear()
            table.update(kept)
        if "wandb" in sys.modules:
            sys.modules["wandb"].teardown()
        for key in set(os.environ) - set(environ):
            os.environ.pop(key)
        os.environ.update({key: value for key, value in environ.items() if key != "WANDB_MODE"})


def _missing_extra(stderr: str) -> bool:
    """Whether `stderr` is the one-line hint of an extra of setup.py whose package is missing."""
    match = re.fullmatch(
        r'error: \S+ needs the (\w+) package: pip install -e "\.\[(\w+)\]"\.\n', stderr
    )
    return bool(match) and _absent(match.group(1)) and match.group(2) in _extras()


def _absent(module: str) -> bool:
    return importlib.util.find_spec(module) is None


def _extras() -> set[str]:
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "extras_require":
            return {key.value for key in node.value.keys}
    raise AssertionError("setup.py has no extras_require")


def _train_main(argv):
    from agents.scripts import train

    try:
        return run_main(train.main, argv)
    except SystemExit as exit:  # --help, or argparse refusing a flag.
        return exit.code, "", ""


def _needs_run(command: Command) -> bool:
    return any("--timestamp" in word or RUN in word for word in command.argv)


@pytest.mark.parametrize("command", _of("train"), ids=str)
def test_train_command_passes_its_dry_run(command, tmp_path, monkeypatch):
    if _needs_run(command):
        pytest.skip("names a run: checked by test_the_pages_commands_run_for_real (slow)")
    argv = command.inner[3:]
    _write_doc_files(tmp_path)
    with _working_dir(tmp_path, monkeypatch):
        for name, value in command.env:
            monkeypatch.setenv(name, value)
        extra = [] if "--help" in argv or "--dry-run" in argv else ["--dry-run"]
        code, stdout, stderr = _train_main(argv + extra)
    assert code == 0 or (code == 2 and _missing_extra(stderr)), stderr
    assert not (tmp_path / "logdir").exists()  # A dry run writes nothing.


def _flags(argv) -> list[str]:
    return [word.split("=")[0] for word in argv if word.startswith("--")]


@pytest.mark.parametrize("command", _of("script"), ids=str)
def test_script_command_uses_flags_of_its_help(command):
    module = importlib.import_module(command.argv[2])
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout), pytest.raises(SystemExit) as exit:
        module.main(["--help"])
    assert exit.value.code == 0
    for flag in _flags(command.argv[3:]):
        assert re.search(rf"{flag}\b", stdout.getvalue()), f"{command}: no {flag}"


@pytest.mark.parametrize("command", _of("pip"), ids=str)
def test_pip_command_names_extras_of_setup_py_or_installed_packages(command):
    names = [word for word in command.argv[2:] if not word.startswith("-")]
    assert names, command
    for name in names:
        extras = re.fullmatch(r"\.\[([\w,]+)\]", name)
        if extras:
            assert set(extras.group(1).split(",")) <= _extras(), command
        else:
            assert not _absent(name), f"{command}: {name} is not installed with the package"


@pytest.mark.parametrize("command", _of("module"), ids=str)
def test_module_command_names_a_module_that_takes_its_flags(command):
    name = command.argv[2]
    spec = importlib.util.find_spec(name)
    assert spec is not None, command
    if name == "pytest" and "-n" in command.argv:
        assert not _absent("xdist"), command
    origin = pathlib.Path(spec.origin or sys.prefix)
    # This repository's (not a package installed in a venv inside it): its source.
    if origin.is_relative_to(ROOT) and not origin.is_relative_to(sys.prefix):
        source = origin
        if source.name == "__init__.py":
            source = source.with_name("__main__.py")
        text = "".join(path.read_text() for path in source.parent.glob("*.py"))
        for flag in _flags(command.argv[3:]):
            assert f'"{flag}"' in text, f"{command}: no {flag} in {source.parent}"


@pytest.mark.parametrize("command", _of("tool"), ids=str)
def test_tool_command_is_installed_beside_this_python(command):
    executable = pathlib.Path(sys.executable).parent / command.argv[0]
    assert executable.exists() or shutil.which(command.argv[0]), command


def _runs_for_real(command: Command) -> bool:
    argv = command.inner[3:]
    if command.launched or "--help" in argv or "--dry-run" in argv:
        return False
    words = " ".join(argv)
    if any(f"--config={name}" in words for name in DRY_RUN_ONLY):
        return False
    if "my_package.envs:" in words:  # docs/environments.md registers it, implements no env.
        return False
    code, _, stderr = _train_main([*argv, "--dry-run"])
    return not (code == 2 and _missing_extra(stderr))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A folder with the pages' files and the run they name, trained; and a copy of that run."""
    folder = tmp_path_factory.mktemp("reader")
    _write_doc_files(folder)
    logdir = folder / "logdir"
    code, _, stderr = _train_main(
        ["--config=pendulum", f"--logdir={logdir}", "--set", "train_steps=1"]
    )
    assert code == 0, stderr
    (trained,) = glob.glob(str(logdir / "*-pendulum-s0"))
    os.rename(trained, logdir / RUN)
    pristine = tmp_path_factory.mktemp("pristine") / RUN
    shutil.copytree(logdir / RUN, pristine)
    return folder, pristine


def _real_argv(command: Command, folder: pathlib.Path, pristine: pathlib.Path) -> list[str]:
    """The command's arguments with its tiny budget; a resumed run is the pristine one again."""
    argv = command.inner[3:]
    if command.kind == "script":
        name = command.argv[2].rpartition(".")[2]
        tiny = {"visualize": ["--num_episodes", "1"], "tune": ["--trials", "1"]}.get(name, [])
        return argv + tiny + (["--set", "train_steps=1"] if name == "tune" else [])
    budget = 1
    if "--seeds" in argv:  # One seed takes the seeds' path (a process, the summary, W&B's
        # group); tests/scripts/test_seeds.py trains several apart, in parallel, and fails one.
        at = argv.index("--seeds") + 1
        seeds = list(itertools.takewhile(lambda word: not word.startswith("-"), argv[at:]))
        argv = argv[:at] + seeds[:1] + argv[at + len(seeds) :]
    if "--timestamp" in " ".join(argv):
        shutil.rmtree(folder / "logdir" / RUN)
        shutil.copytree(pristine, folder / "logdir" / RUN)
        budget = _env_steps(pristine) + 1  # One call more than it trained.
    return argv + ["--set", f"train_steps={budget}"]


def _env_steps(run_dir: pathlib.Path) -> int:
    import json

    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return max(json.loads(line).get("env_steps", 0) for line in lines)


@pytest.mark.slow
def test_the_pages_commands_run_for_real(workspace, monkeypatch):
    """In the pages' order, each command once; those that name the run but cannot train here
    (under mpirun) pass their dry run against it."""
    folder, pristine = workspace
    failures, seen = [], set()
    with _working_dir(folder, monkeypatch):
        for command in _of("train", "script"):
            if tuple(command.inner) in seen:
                continue
            seen.add(tuple(command.inner))
            for name, value in command.env:
                monkeypatch.setenv(name, value)
            if command.kind == "script" or _runs_for_real(command):
                argv = _real_argv(command, folder, pristine)
                module = importlib.import_module(command.argv[2])
                code, _, stderr = run_main(module.main, argv)
            elif _needs_run(command):  # Its dry run is not the quick tier's: it needs the run.
                code, _, stderr = _train_main([*command.inner[3:], "--dry-run"])
            else:
                continue
            if code != 0:
                failures.append(f"{command} exited {code}: {stderr.strip()[-600:]}")
    assert len(seen) > 30 and failures == []
