"""The error of bad user input: a config, a key, a value, a path or a run that does not fit."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: printed as one line, without a traceback.

    The command line prints it as `error: ...` (exit status 2); the Python API raises it as a
    `ValueError` with the same message.
    """
