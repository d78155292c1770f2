"""Figures as their labels claim them: a page refuses a "median" its records cannot give.

A median of one or two values is that value or their mean: a label that says "median" promises
a middle of several rounds, runs or seeds. Pages take their medians here, so that a record set
too small for its label stops the page generator with a line naming the figure instead of a
figure that says more than was measured.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

MEDIAN_AT_LEAST = 3  # Values a figure labelled "median" needs.


class ClaimError(ValueError):
    """A figure whose records lack what its label claims."""


def median(values: Iterable[float], what: str = "a figure labelled median") -> float:
    """The median of `values`, which must hold at least `MEDIAN_AT_LEAST` of them.

    Raises:
        ClaimError: Fewer values, naming `what` and how many the records hold.
    """
    values = list(values)
    if len(values) < MEDIAN_AT_LEAST:
        raise ClaimError(
            f"{what}: a median needs at least {MEDIAN_AT_LEAST} values, the records hold "
            f"{len(values)}; measure more rounds or label the figure as what it is"
        )
    return statistics.median(values)
