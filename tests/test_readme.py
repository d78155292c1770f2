"""The README's examples run as written (the tools and the Python API)."""

import pathlib
import re


def test_readme_tools_example_runs():
    text = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    example = next(block for block in blocks if "tools.Loop" in block)
    namespace: dict = {}
    exec(compile(example, "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["observ"].shape == (8, 4)  # The batch observation, rebound last.
    assert namespace["loop"].step == 800


def test_readme_config_table_is_the_one_generated_from_the_schema():
    from agents.scripts import cli

    text = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
    begin, end = text.index(cli.README_BEGIN), text.index(cli.README_END)
    table = text[begin + len(cli.README_BEGIN) : end].strip()
    assert table == cli.markdown_table(), "Regenerate it: python -m agents.scripts.cli"


def test_readme_python_api_example_runs(tmp_path, monkeypatch):
    text = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
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
