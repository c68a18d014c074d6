"""A jitted function runs on copies of the lists, dicts and dataclasses it is given: storing into one
(`st["m"] = ...`) would be dropped on every call where an eager call keeps it, so a training loop would
silently stop making progress. Such a function is refused by name; in-place array updates still reach
the caller."""
import dataclasses

import numpy as np
import pytest

import poot as pt


def test_storing_into_a_dict_argument_is_refused_and_names_the_entry():
    def step(st, x):
        st["m"] = st["m"] + x
        return st["m"]

    st = {"m": pt.zeros(2)}
    with pytest.raises(pt.TracerError, match=r"pt.jit\(step\) changed the argument entry st\['m'\]"):
        pt.jit(step)(st, pt.ones(2))
    np.testing.assert_array_equal(st["m"].numpy(), 0.0)        # the caller's dict is as it was


@dataclasses.dataclass
class _State:
    m: object


@pytest.mark.parametrize("case", ["list append", "list item", "dataclass field"])
def test_other_container_writes_are_refused(case):
    def f(c, x):
        if case == "list append":
            c.append(x)
        elif case == "list item":
            c[0] = c[0] * x
        else:
            c.m = c.m * x
        return x

    c = _State(pt.ones(2)) if case == "dataclass field" else [pt.ones(2)]
    with pytest.raises(pt.TracerError, match="list, dict or dataclass it was given"):
        pt.jit(f)(c, pt.ones(2))


def test_in_place_array_updates_inside_containers_still_reach_the_caller():
    def step(st, x):
        st["m"] += x
        st["v"][0] = 3.0
        return st["m"] * 2

    st = {"m": pt.zeros(2), "v": pt.zeros(2)}
    f = pt.jit(step)
    f(st, pt.ones(2))
    out = f(st, pt.ones(2))
    np.testing.assert_array_equal(st["m"].numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(st["v"].numpy(), [3.0, 0.0])
    np.testing.assert_array_equal(out.numpy(), [4.0, 4.0])
