"""histogram without range= over data holding NaN or infinity, on every device of POOT_TEST_DEVICES: run
eagerly it raises NumPy's ValueError (the CPU device's host op, and on GPU devices the lazy form, which
reads the two bounds back: poot/trace/device_histogram.py); under @pt.jit on GPU devices nothing can be
read while tracing, and the documented lazy result has NaN (or infinite) edges and no counts."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot.trace.context import current
from poot.trace.device_search import runs_device_kernels

NOT_FINITE = [np.array([1.0, np.nan, 3.0]), np.array([1.5, np.inf], np.float32),
              np.array([-np.inf, 2.0], np.float16)]


def _numpy_message(a: np.ndarray) -> str:
    with pytest.raises(ValueError) as e:
        np.histogram(a.astype(np.float32) if a.dtype == np.float16 else a)
    return str(e.value)


@pytest.mark.parametrize("a", NOT_FINITE, ids=["nan", "inf", "f16-inf"])
def test_eager_refuses_a_range_that_is_not_finite(device, a):
    with pytest.raises(pt.PootError) as e:
        pt.histogram(pt.asarray(a))[0].numpy()
    assert isinstance(e.value, ValueError)
    assert _numpy_message(a) in str(e.value)


def test_finite_data_still_counts(device):
    a = np.array([0.5, 1.0, 2.0, 2.5, 7.0], np.float32)
    counts, edges = pt.histogram(pt.asarray(a), 4)
    want_counts, want_edges = np.histogram(a, 4)
    np.testing.assert_array_equal(counts.numpy(), want_counts)
    np.testing.assert_allclose(edges.numpy(), want_edges, rtol=1e-6)


def test_jit_keeps_the_lazy_form_on_gpu_devices(device):
    if not runs_device_kernels(current()):
        pytest.skip("the CPU device runs NumPy's histogram as a host op, which raises when it runs")
    counts, edges = pt.jit(lambda v: pt.histogram(v, 3))(pt.asarray(np.array([1.0, np.nan])))
    assert np.isnan(edges.numpy()).all()
    np.testing.assert_array_equal(counts.numpy(), np.zeros(3, np.int64))
