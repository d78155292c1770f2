"""Argument types of the scripts' command lines: a bad value is one line naming what is accepted."""

from __future__ import annotations

import argparse

MAX_SEED = 2**31 - 1  # Env and rank seeds add offsets to it; numpy needs them below 2**32.


def positive_int(text: str) -> int:
    """An integer >= 1."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer (1, 2, ...)")
    return value


def seed(text: str) -> int:
    """A seed: an integer in [0, MAX_SEED]."""
    value = _int(text)
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer in [0, {MAX_SEED}]")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
