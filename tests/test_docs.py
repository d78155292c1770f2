"""The docs site builds in strict mode, its config table is the generated one, and ruff passes."""

import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).parent.parent


def test_docs_build_in_strict_mode(tmp_path):
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for page in ("index.html", "training/index.html", "results/mujoco/index.html"):
        assert (site / page).is_file(), page
    reference = (site / "reference/tools/index.html").read_text(encoding="utf-8")
    assert "InGraphBatchEnv" in reference  # The API reference is generated from the docstrings.


def test_config_table_is_the_one_generated_from_the_schema():
    from agents.scripts import cli

    text = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    begin, end = text.index(cli.TABLE_BEGIN), text.index(cli.TABLE_END)
    table = text[begin + len(cli.TABLE_BEGIN) : end].strip()
    assert table == cli.markdown_table(), "Regenerate it: python -m agents.scripts.cli"


def test_ruff_check_passes():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_readme_links_into_the_docs_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", text)
    assert targets, "README links into docs/"
    missing = [target for target in targets if not (ROOT / target).exists()]
    assert not missing, missing
