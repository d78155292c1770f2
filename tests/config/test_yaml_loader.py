"""The YAML reader of config files and search spaces: floats in any usual spelling, no aliases."""

import io

import pytest
import yaml

from agents.config import files
from agents.config.errors import UsageError
from agents.multirun import tuning_space


@pytest.mark.parametrize(
    "text, value",
    [
        ("1e-3", 1e-3),  # YAML 1.1 (PyYAML's safe_load) reads these three as strings.
        ("2E+5", 2e5),
        ("-3e2", -300.0),
        ("1.0e-4", 1e-4),
        ("0.5", 0.5),
        (".5", 0.5),
        ("1", 1),
        ("-7", -7),
        ("1_000", 1000),
        ("true", True),
        ("'1e-3'", "1e-3"),  # Quoted: a string, as written.
        ("1e", "1e"),
        ("e5", "e5"),
        ("v1e3", "v1e3"),
        ("1e-3x", "1e-3x"),
    ],
)
def test_numbers_read_as_python_reads_them_and_other_words_stay_strings(text, value):
    loaded = files.load_yaml(io.StringIO(f"key: {text}\n"))["key"]
    assert loaded == value and type(loaded) is type(value)


def test_an_alias_is_refused():
    with pytest.raises(yaml.YAMLError, match="an alias"):
        files.load_yaml(io.StringIO("a: &x 1\nb: *x\n"))


def test_a_config_file_takes_a_learning_rate_written_1e_minus_3(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("config:\n  learning_rate: 1e-3\n  update_epochs: 3\nname: mine\n")
    saved = files.read_saved(str(path))
    assert saved.config.learning_rate == 1e-3 and isinstance(saved.config.learning_rate, float)
    assert saved.config.update_epochs == 3 and isinstance(saved.config.update_epochs, int)


def test_a_search_space_takes_bounds_written_without_a_dot(tmp_path):
    path = tmp_path / "space.yaml"
    path.write_text("learning_rate: {type: float, low: 1e-5, high: 3E-3, log: true}\n")
    assert tuning_space.load_space(str(path)) == {
        "learning_rate": {"type": "float", "low": 1e-5, "high": 3e-3, "log": True}
    }
    path.write_text("learning_rate: {type: float, low: 1e-5x, high: 3e-3}\n")
    with pytest.raises(UsageError, match="learning_rate"):
        tuning_space.load_space(str(path))
