"""The distribution as an index would get it: the sdist and wheel carry the metadata and notices."""

import email
import importlib.util
import pathlib
import shutil
import subprocess
import sys
import tarfile
import zipfile

ROOT = pathlib.Path(__file__).parent.parent
_SOURCES = ("setup.py", "pyproject.toml", "README.md", "LICENSE", "NOTICE", "agents")


def _build(tmp_path) -> tuple[pathlib.Path, pathlib.Path]:
    """The sdist and the wheel, built from a copy of the sources (nothing written beside them)."""
    source = tmp_path / "source"
    source.mkdir()
    for name in _SOURCES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, source / name)
    # The venv's setuptools where it has one (no download); else pip's isolated build.
    isolation = ["--no-build-isolation"] if importlib.util.find_spec("setuptools") else []
    dist = tmp_path / "dist"
    for command in (
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation, "-w", dist, "."],
        [sys.executable, "setup.py", "-q", "sdist", "-d", dist],
    ):
        subprocess.run(command, cwd=source, check=True, capture_output=True, timeout=300)
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    return sdist, wheel


def test_the_sdist_and_wheel_carry_the_metadata_and_notices(tmp_path):
    sdist, wheel = _build(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        wheel_info = email.message_from_bytes(archive.read(metadata))
    assert {n.rsplit("/", 1)[-1] for n in names if ".dist-info/" in n} >= {"LICENSE", "NOTICE"}
    with tarfile.open(sdist) as archive:
        members = archive.getnames()
        (pkg_info,) = [n for n in members if n.count("/") == 1 and n.endswith("/PKG-INFO")]
        sdist_info = email.message_from_bytes(archive.extractfile(pkg_info).read())
    assert {n.partition("/")[2] for n in members} >= {"LICENSE", "NOTICE", "README.md", "setup.py"}
    for info in (wheel_info, sdist_info):
        license = info["License-Expression"] or info["License"]  # By setuptools' version.
        assert info["Name"] == "batch-ppo-tf2" and license == "Apache-2.0"
        assert info["Author"] == "The agents authors"
        assert info["Requires-Python"] == ">=3.10"
        classifiers = info.get_all("Classifier")
        assert not [c for c in classifiers if c.startswith("License ::")]  # Deprecated.
        assert "Programming Language :: Python :: 3.11" in classifiers
    assert "Copyright 2026 The agents authors" in (ROOT / "NOTICE").read_text()
