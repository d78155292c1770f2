"""The examples of README.md (the Python API) and of docs/tools.md run as written."""

import pathlib
import re

import pytest

from agents.scripts import configs

ROOT = pathlib.Path(__file__).parent.parent


def test_tools_example_runs():
    text = (ROOT / "docs" / "tools.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    example = next(block for block in blocks if "tools.Loop" in block)
    namespace: dict = {}
    exec(compile(example, "docs/tools.md", "exec"), namespace)  # noqa: S102
    assert namespace["observ"].shape == (8, 4)  # The batch observation, rebound last.
    assert namespace["loop"].step == 800


@pytest.mark.slow
def test_readme_python_api_example_runs(tmp_path, monkeypatch):
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    example = next(block for block in blocks if "from agents import evaluate" in block)
    assert "train_steps=20_000" in example
    example = example.replace("train_steps=20_000", "train_steps=2_048")  # Its shape, quicker.
    monkeypatch.chdir(tmp_path)  # Its logdir="logdir" goes there.
    namespace: dict = {}
    exec(compile(example, "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["result"].env_steps >= 2_048
    assert namespace["action"].shape == (1,) and -2.0 <= namespace["action"][0] <= 2.0
    assert len(list((tmp_path / "logdir").iterdir())) == 1


@pytest.mark.slow
def test_evaluate_runs_whole_episodes_from_a_run_directory(tmp_path):
    import agents

    result = agents.train("debug", logdir=str(tmp_path), train_steps=128)
    evaluation = agents.evaluate(result.run_dir, "Pendulum-v1", episodes=2, seed=5)
    assert evaluation.lengths == [200, 200] and len(evaluation.returns) == 2
    again = agents.evaluate(agents.load_policy(result.run_dir), "Pendulum-v1", 2, seed=5)
    assert again.returns == evaluation.returns  # Deterministic policy, seeded episodes.
    assert evaluation.mean == sum(evaluation.returns) / 2


def _quiet_env(tmp_path):
    """The environment of a new user's shell: no TensorFlow variables of the test run's."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("TF_", "AGENTS_"))}
    return dict(env, XDG_CACHE_HOME=str(tmp_path / "cache"))


@pytest.mark.slow
def test_the_native_env_example_prints_nothing_on_stderr(tmp_path):
    import subprocess
    import sys

    text = (ROOT / "docs" / "native-envs.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    example = next(block for block in blocks if "class Corridor" in block)
    example = example.replace("train_steps=16_384", "train_steps=2_048")  # Its shape, quicker.
    result = subprocess.run(
        [sys.executable, "-c", example + "\nprint(result.env_steps)"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=_quiet_env(tmp_path),
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert result.stdout.splitlines()[-1] == "8192"  # One call of 64 envs x 16 steps x 8.


@pytest.mark.slow
def test_tensorflow_imported_first_gets_one_warning_and_no_log_lines_from_the_run(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys\nimport tensorflow as tf\nprint('--imported--', file=sys.stderr, flush=True)\n"
        "import agents\n"
        "result = agents.train('debug', logdir='logdir', verbose=0, train_steps=64)\n"
        "agents.load_policy(result.run_dir)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=_quiet_env(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    after_import = result.stderr.split("--imported--\n", 1)[1]
    assert after_import == (
        "warning: TensorFlow was loaded before agents could set its process settings: oneDNN "
        "stays on (this agent runs with TF_ENABLE_ONEDNN_OPTS=0), XLA's compile cache is off; "
        "call agents.runtime.prepare() before importing tensorflow, or set them in the "
        "environment before it loads.\n"
    )


def test_every_named_config_is_named_in_readme():
    """README's Configs section names each config, or its task where a pattern names the arms."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Configs") :]
    section = section[: section.index("\n## ", 1)]
    arms = ("_rnd", "_noveld", "_count", "_e3b")
    missing = [
        name
        for name in configs.CONFIGS
        if f"`{name}`" not in section
        and f"`{next((name[: -len(a)] for a in arms if name.endswith(a)), name)}`" not in section
    ]
    assert missing == []
