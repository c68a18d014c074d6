"""@pt.jit as a user calls it: Python scalar arguments stay weak in float-only functions and live on the
arrays' device, plain objects' scalars key the call (no stale values), OrderedDict/defaultdict are
pytrees, opaque results holding tracers are refused, static_argnums/argnames are checked."""
import collections

import numpy as np
import pytest

import poot as pt


def _x(dtype=np.float32):
    return pt.asarray(np.array([0.5, 1.5, 2.0, 3.0], dtype))


# --- A1: a Python scalar argument stays weak in float-only binary functions ---------------------
@pytest.mark.parametrize("name", ["arctan2", "hypot", "copysign", "logaddexp", "logaddexp2", "nextafter",
                                  "heaviside"])
def test_scalar_argument_weak_in_float_only_functions(name):
    f = getattr(pt, name)
    for dtype in (np.float16, np.float32, np.int8, np.int32):
        g = pt.jit(lambda a, s: f(a, s))
        x = _x(dtype)
        for s in (2, 2.5):
            eager, traced = f(x, s), g(x, s)
            assert traced.dtype == eager.dtype, (dtype, s)
            np.testing.assert_array_equal(traced.numpy(), eager.numpy())


def test_nextafter_scalar_argument_steps_in_float32():
    got = pt.jit(lambda a, s: pt.nextafter(a, s))(_x(), 2).numpy()
    np.testing.assert_array_equal(got, np.nextafter(np.array([0.5, 1.5, 2.0, 3.0], np.float32), np.float32(2)))


# --- A1b: a Python scalar argument made an array, given a dtype or passed to exp/sin... is strong ----
_STRONG = {
    "asarray": lambda t: pt.asarray(t), "array": lambda t: pt.array(t),
    "asarray_dtype": lambda t: pt.asarray(t, dtype=pt.float64), "float64": lambda t: pt.float64(t),
    "astype": lambda t: pt.asarray(t).astype(pt.float64), "astype_fn": lambda t: pt.astype(t, pt.float64),
    "sin": lambda t: pt.sin(t), "exp": lambda t: pt.exp(t), "sqrt": lambda t: pt.sqrt(t),
    "sin_of_expr": lambda t: pt.sin(2 * t) * 0.5,
}


@pytest.mark.parametrize("name", sorted(_STRONG))
def test_scalar_argument_made_strong_as_eagerly(name):
    """np.sin(0.5) and np.asarray(0.5) are float64 NumPy values, not Python floats: a float32 array
    plus one is float64, eagerly, and so under jit when 0.5 is the jitted function's argument."""
    g = _STRONG[name]
    f = pt.jit(lambda y, t: y + g(t))
    y = _x()
    value = {"sin": np.sin(0.5), "exp": np.exp(0.5), "sqrt": np.sqrt(0.5),
             "sin_of_expr": np.sin(2 * 0.5) * 0.5}.get(name, np.float64(0.5))
    want = np.float32([0.5, 1.5, 2.0, 3.0]) + value
    for got in (y + g(0.5), f(y, 0.5)):
        assert got.dtype == pt.float64, name
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)


def test_scalar_argument_operators_stay_weak():
    """Operators on a Python scalar give a Python scalar (weak): `t * 2` and `t ** 0.5` keep a float32
    array float32, eagerly and under jit."""
    f = pt.jit(lambda y, t: y + t * 2 + t ** 0.5 - (-t))
    y = _x()
    want = np.float32([0.5, 1.5, 2.0, 3.0]) + 0.5 * 2 + 0.5 ** 0.5 - (-0.5)
    for got in (y + 0.5 * 2 + 0.5 ** 0.5 - (-0.5), f(y, 0.5)):
        assert got.dtype == pt.float32
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


# --- A2: plain objects as arguments: scalars key the signature, NumPy arrays are refused -------
class _Cfg:
    def __init__(self):
        self.scale = 2.0
        self.mode = "a"
        self.sizes = [1, 2]


def test_object_scalar_attribute_change_retraces():
    @pt.jit
    def f(cfg, x):
        y = x * cfg.scale + cfg.sizes[1]
        return y if cfg.mode == "a" else -y

    cfg, x = _Cfg(), _x()
    np.testing.assert_allclose(f(cfg, x).numpy(), x.numpy() * 2 + 2)
    np.testing.assert_allclose(f(cfg, x).numpy(), x.numpy() * 2 + 2)
    assert f.trace_count == 1
    cfg.scale = 10.0
    np.testing.assert_allclose(f(cfg, x).numpy(), x.numpy() * 10 + 2)
    cfg.sizes[1] = 5          # one level into a list
    np.testing.assert_allclose(f(cfg, x).numpy(), x.numpy() * 10 + 5)
    cfg.mode = "b"
    np.testing.assert_allclose(f(cfg, x).numpy(), -(x.numpy() * 10 + 5))
    assert f.trace_count == 4


def test_object_int_to_float_attribute_retraces():
    class C:
        k = None

    f = pt.jit(lambda c, x: x // c.k)
    c, xi = C(), pt.asarray(np.array([7, 8], np.int32))
    c.k = 2
    assert f(c, xi).dtype == pt.int32
    c.k = 2.0                 # equal to 2, but a float: x // 2.0 is float
    assert f(c, xi).dtype == pt.float64


def test_slots_object_scalar_attribute_change_retraces():
    class S:
        __slots__ = ("k",)

        def __init__(self):
            self.k = 2.0

    f = pt.jit(lambda s, x: x * s.k)
    s, x = S(), _x()
    f(s, x)
    s.k = 3.0
    np.testing.assert_allclose(f(s, x).numpy(), x.numpy() * 3)


def test_jitted_method_sees_new_scalar_attribute():
    class M:
        def __init__(self):
            self.k = 2.0

        @pt.jit
        def f(self, x):
            return x * self.k

        def g(self, x):
            return x * self.k

    m, x = M(), _x()
    np.testing.assert_allclose(m.f(x).numpy(), x.numpy() * 2)
    m.k = 5.0
    np.testing.assert_allclose(m.f(x).numpy(), x.numpy() * 5)
    bound = pt.jit(m.g)       # a bound method jitted itself: its object's scalars key it too
    np.testing.assert_allclose(bound(x).numpy(), x.numpy() * 5)
    m.k = 7.0
    np.testing.assert_allclose(bound(x).numpy(), x.numpy() * 7)


def test_object_holding_numpy_array_refused():
    class C:
        def __init__(self):
            self.w = np.ones(3, np.float32)

    f = pt.jit(lambda c, x: x + c.w)
    with pytest.raises(pt.PootError, match=r"NumPy array c\.w.*pass the array as an argument"):
        f(C(), pt.zeros(3))
    # kept constant on purpose: allowed
    assert pt.jit(lambda c, x: x + c.w, static_argnums=0)(C(), pt.zeros(3)).numpy().tolist() == [1, 1, 1]


# --- A3 / B3: OrderedDict and defaultdict are pytrees; opaque results holding tracers refused ---
def test_ordereddict_and_defaultdict_in_and_out():
    x = _x()
    od = pt.jit(lambda d: collections.OrderedDict(b=d["a"] + 1, a=d["a"] * 2))(collections.OrderedDict(a=x))
    assert type(od) is collections.OrderedDict and list(od) == ["b", "a"]
    np.testing.assert_allclose(od["b"].numpy(), x.numpy() + 1)
    dd = collections.defaultdict(list, a=x)
    out = pt.jit(lambda d: collections.defaultdict(int, a=d["a"] + 1))(dd)
    assert type(out) is collections.defaultdict and out.default_factory is int
    np.testing.assert_allclose(out["a"].numpy(), x.numpy() + 1)


def test_opaque_result_holding_traced_array_refused():
    class Box:
        def __init__(self, v):
            self.v = v

    with pytest.raises(pt.TracerError, match=r"returns a Box at result\['out'\] .*result\['out'\]\.v"):
        pt.jit(lambda x: {"out": Box(x * 2)})(_x())

    class T(tuple):
        pass

    with pytest.raises(pt.TracerError, match=r"returns a T at result\[1\]"):
        pt.jit(lambda x: (x, T((x + 1,))))(_x())
    # an object holding no traced array is a trace-time constant, as before
    assert pt.jit(lambda x: Box(3))(_x()).v == 3


def test_unhashable_unflattened_argument_message():
    class T(tuple):
        pass

    with pytest.raises(pt.PootError, match=r"argument 'd' is or holds a T, which poot does not flatten") as e:
        pt.jit(lambda d: d[0] * 2)(T((_x(),)))
    assert "static" not in str(e.value)


# --- B1: a Python scalar argument has no device of its own ------------------------------------
def test_scalar_argument_joins_array_device():
    try:
        with pt.device("vulkan"):
            xv = pt.asarray(np.arange(4, dtype=np.float32))
            xv.numpy()
    except pt.PootError as e:
        pytest.skip(f"no vulkan device: {e}")
    f = pt.jit(lambda x, s: x * s + 1)
    r = f(xv, 2.0)
    assert r._node.device == "vulkan"
    np.testing.assert_allclose(r.numpy(), np.arange(4) * 2 + 1)
    x = pt.asarray(np.arange(4, dtype=np.float32))
    with pt.device("vulkan"):
        r = f(x, 3.0)
    assert r._node.device == "cpu"
    np.testing.assert_allclose(r.numpy(), np.arange(4) * 3 + 1)


# --- B2 / C1: static_argnums / static_argnames validation --------------------------------------
def test_negative_static_argnums():
    def f(x, n):
        for _ in range(n):
            x = x + 1
        return x

    g = pt.jit(f, static_argnums=-1)
    assert g.static_argnums == (1,)
    np.testing.assert_allclose(g(pt.zeros(3), 3).numpy(), [3, 3, 3])


def test_unknown_static_argname_refused():
    with pytest.raises(pt.ArgumentError, match="static_argnames names 'm'"):
        pt.jit(lambda a, n: a * n, static_argnames="m")
    # a function taking **kwargs takes any name
    pt.jit(lambda a, **kw: a * kw["m"], static_argnames="m")(pt.ones(2), m=2)


# --- C2: integer power of a negative Python int argument ---------------------------------------
def test_negative_int_exponent_argument_refused():
    xi = pt.asarray(np.array([-7, -1, 0, 5], np.int32))
    f = pt.jit(lambda a, s: a ** s)
    assert f(xi, 2).numpy().tolist() == [49, 1, 0, 25]
    with pytest.raises(pt.DomainError, match="negative integer powers"):
        f(xi, -2)
    assert f(xi, 3).numpy().tolist() == [-343, -1, 0, 125]
    with pytest.raises(pt.DomainError):
        pt.jit(lambda a, s: a ** s)(xi, -1)        # refused on the first call too
    np.testing.assert_allclose(f(_x(), -2).numpy(), _x().numpy() ** -2.0)   # a float base is fine
