"""The one tolerance for float32 results against a reference: float32 rounding at their scale.

A purely relative tolerance fails on values near zero (a log-prob of -0.0043 off by 2e-10 after
a different summation order fails rtol=1e-5 with atol=0), and whether it does depends on the CPU,
oneDNN and the order tests run in. A purely absolute one ignores the values' size. Here both
scale with float32's machine epsilon: a result may differ from the reference by `ulps`
roundings of the larger of 1 and the reference's largest magnitude.
"""

from __future__ import annotations

import numpy as np

EPS32 = float(np.finfo(np.float32).eps)  # 1.19e-7


def assert_float32_close(actual, expected, ulps: float = 64.0) -> None:
    """Assert `actual` equals `expected` up to `ulps` float32 roundings (rtol and atol)."""
    expected = np.asarray(expected, np.float64)
    scale = max(1.0, float(np.max(np.abs(expected))) if expected.size else 1.0)
    tolerance = ulps * EPS32
    np.testing.assert_allclose(
        np.asarray(actual, np.float64), expected, rtol=tolerance, atol=tolerance * scale
    )
