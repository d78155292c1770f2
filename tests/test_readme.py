"""The examples of README.md (the Python API) and of docs/tools.md run as written."""

import pathlib
import re

ROOT = pathlib.Path(__file__).parent.parent


def test_tools_example_runs():
    text = (ROOT / "docs" / "tools.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    example = next(block for block in blocks if "tools.Loop" in block)
    namespace: dict = {}
    exec(compile(example, "docs/tools.md", "exec"), namespace)  # noqa: S102
    assert namespace["observ"].shape == (8, 4)  # The batch observation, rebound last.
    assert namespace["loop"].step == 800


def test_readme_python_api_example_runs(tmp_path, monkeypatch):
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    example = next(block for block in blocks if "from agents import evaluate" in block)
    monkeypatch.chdir(tmp_path)  # Its logdir="logdir" goes there.
    namespace: dict = {}
    exec(compile(example, "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["result"].env_steps >= 20_000
    assert namespace["action"].shape == (1,) and -2.0 <= namespace["action"][0] <= 2.0
    assert len(list((tmp_path / "logdir").iterdir())) == 1


def test_evaluate_runs_whole_episodes_from_a_run_directory(tmp_path):
    import agents

    result = agents.train("debug", logdir=str(tmp_path), train_steps=128)
    evaluation = agents.evaluate(result.run_dir, "Pendulum-v1", episodes=2, seed=5)
    assert evaluation.lengths == [200, 200] and len(evaluation.returns) == 2
    again = agents.evaluate(agents.load_policy(result.run_dir), "Pendulum-v1", 2, seed=5)
    assert again.returns == evaluation.returns  # Deterministic policy, seeded episodes.
    assert evaluation.mean == sum(evaluation.returns) / 2
