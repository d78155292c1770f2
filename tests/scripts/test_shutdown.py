"""exit_quickly ends the process as sys.exit does: status, atexit handlers, flushed output."""

import subprocess
import sys

import pytest


@pytest.mark.parametrize("status, expected", [(3, 3), (None, 0)])
def test_exit_quickly_keeps_status_atexit_handlers_and_buffered_output(tmp_path, status, expected):
    marker = tmp_path / "atexit.txt"
    code = (
        "import atexit, pathlib, sys\n"
        f"atexit.register(pathlib.Path({str(marker)!r}).write_text, 'ran')\n"
        "from agents.scripts.shutdown import exit_quickly\n"
        "sys.stdout.write('buffered')\n"  # Not flushed by hand: the exit must flush it.
        f"exit_quickly({status!r})\n"
        "print('not reached')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == expected, result.stderr
    assert result.stdout == "buffered"
    assert marker.read_text() == "ran"


def test_exit_quickly_leaves_objects_alive_out_of_later_collections():
    code = (
        "import gc\n"
        "from agents.scripts import shutdown\n"
        "try:\n"
        "    shutdown.exit_quickly(0)\n"
        "except SystemExit:\n"
        "    print(gc.get_freeze_count() > 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "True", result.stderr
