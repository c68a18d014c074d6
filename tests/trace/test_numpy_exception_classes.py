"""NumPy code catches NumPy's exception classes: `except np.exceptions.AxisError` and
`except np.linalg.LinAlgError` must catch poot's errors for the same mistakes, which stay PootErrors
whose message names the user's line."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import poot as pt


@pytest.mark.parametrize("call", [lambda: pt.sum(pt.ones(2), axis=3), lambda: pt.unique(pt.ones((2, 2)), axis=3),
                                  lambda: np.sum(pt.ones(2), axis=5), lambda: pt.moveaxis(pt.ones((2, 3)), 2, 0)])
def test_axis_errors_are_numpys_axis_error(device, call):
    with pytest.raises(np.exceptions.AxisError) as info:
        call()
    e = info.value
    assert isinstance(e, pt.AxisError) and isinstance(e, pt.PootError)
    assert isinstance(e, IndexError) and isinstance(e, ValueError)
    assert "out of bounds" in str(e) and "(at " in str(e)        # the user's line is in the message


def test_axis_error_message_and_pickling(device):
    e = pt.AxisError("axis 3 is out of bounds")
    assert str(e) == "axis 3 is out of bounds" and e.args == ("axis 3 is out of bounds",)
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is pt.AxisError and str(back) == str(e)


def test_linalg_errors_are_numpys_linalg_error(device):
    with pytest.raises(np.linalg.LinAlgError):
        pt.linalg.inv(pt.zeros((2, 2))).numpy()
