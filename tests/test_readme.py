"""The README's tools example runs as written."""

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
