"""What the float32 tolerance accepts and what it catches."""

import numpy as np
import pytest

from tests.floats import assert_float32_close


def test_float32_rounding_near_zero_passes_where_a_relative_tolerance_fails():
    reference = np.array([-0.0042779, 1.5, -2.25])  # float64, as a numpy reference is.
    computed = (reference + np.array([2e-7, 0.0, 0.0])).astype(np.float32)  # Another order.
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(computed, reference, rtol=1e-5)
    assert_float32_close(computed, reference)


def test_a_real_error_fails_at_any_scale():
    with pytest.raises(AssertionError):
        assert_float32_close([0.0, 1.001], [0.0, 1.0])
    with pytest.raises(AssertionError):
        assert_float32_close([1e-3], [0.0])
    with pytest.raises(AssertionError):
        assert_float32_close([1000.1], [1000.0])  # The scale is 1000: 1e-4 relative is too far.
    assert_float32_close([1000.0 + 1e-3], [1000.0])  # 64 roundings of 1000 is 7.6e-3.
