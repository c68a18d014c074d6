"""Creation functions and dtype conversion against NumPy (NumPy's default dtypes: float64, int64),
and the counter-based random generator (known-answer vectors, determinism, distributions)."""
from __future__ import annotations

import numpy as np
import pytest

import poot as pt
from poot import dtypes as dt
from tolerance import assert_close

from .helpers import ALL, ids, values

SHAPES = [(), (0,), (2, 3), (1, 0, 2)]


@pytest.mark.parametrize("dtype", ALL + [None], ids=lambda d: "default" if d is None else d.name)
def test_constant_creation_matches_numpy(device, dtype):
    npd = None if dtype is None else dtype.np
    for shape in SHAPES:
        for name in ("zeros", "ones", "empty"):
            r = getattr(pt, name)(shape, dtype=dtype)
            e = np.zeros(shape, npd) if name == "empty" else getattr(np, name)(shape, dtype=npd)
            assert r.dtype.np == e.dtype and r.device == device
            assert_close(r.numpy(), e, r.dtype)
        r = pt.full(shape, 1, dtype=dtype)
        assert_close(r.numpy(), np.full(shape, 1, dtype=npd), r.dtype)
        like = pt.asarray(values(dtype or dt.float64, shape, 1))
        for name in ("zeros_like", "ones_like"):
            assert_close(getattr(pt, name)(like).numpy(), getattr(np, name)(like.numpy()), like.dtype)
        assert_close(pt.full_like(like, 1).numpy(), np.full_like(like.numpy(), 1), like.dtype)
        assert pt.empty_like(like).shape == shape


def test_full_takes_its_dtype_from_the_value(device):
    assert pt.full(2, 3).dtype is pt.int64 and pt.full(2, 3.0).dtype is pt.float64
    assert pt.full(2, True).dtype is pt.bool_ and pt.full(2, np.float32(1)).dtype is pt.float32
    assert pt.full((2, 2), pt.asarray([1.0, 2.0])).numpy().tolist() == [[1, 2], [1, 2]]


ARANGES = [(5,), (2, 10, 3), (0, 1, 0.1), (10, 0, -2), (0,), (1.5, 4.0), (-3, 3)]


@pytest.mark.parametrize("args", ARANGES, ids=str)
def test_arange_matches_numpy(device, args):
    r, e = pt.arange(*args), np.arange(*args)
    assert r.dtype.np == e.dtype
    assert_close(r.numpy(), e, r.dtype, 4)
    for d in (dt.float32, dt.int32, dt.float16):
        if d.kind in "iu" and any(isinstance(a, float) for a in args):
            continue
        assert_close(pt.arange(*args, dtype=d).numpy(), np.arange(*args, dtype=d.np), d, 4)


BIT_EXACT_ARANGES = [((1.0, 2.0, 0.1), None), ((-1, 1, 0.1), None), ((-1, 1, 0.1), np.float32),
                     ((0, 3, 0.3), np.float16), ((0.5, 5, 1.5), np.int64), ((10.0, 0.0, -0.7), None),
                     ((2, 10, 3), np.float32), ((0, 1, 0.01), np.float32)]


@pytest.mark.parametrize("args,dtype", BIT_EXACT_ARANGES, ids=str)
def test_float_arange_steps_as_numpy_to_the_last_bit(device, args, dtype):
    """NumPy steps by (start + step) - start in the result's precision: arange(1, 2, 0.1)[-1] is
    1.9000000000000008, and a float range into integers steps by int(start + step) - int(start).
    A GPU's compiler may contract first + i * step into one FMA (CUDA and ROCm do, and so may a Vulkan
    driver: rounded once, where NumPy rounds twice): 1 ulp of the product, that is of the largest
    element at most (an element near zero, such as the 11th of arange(-1, 1, 0.1), may differ by many
    of its own ulps)."""
    kw = {} if dtype is None else {"dtype": dtype}
    got, want = pt.arange(*args, **kw).numpy(), np.arange(*args, **kw)
    assert got.dtype == want.dtype
    if device not in ("cpu", "oracle") and want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=0, atol=np.spacing(np.abs(want).max()))
    else:
        np.testing.assert_array_equal(got, want)


LINSPACES = [((0, 1, 5), {}), ((0, 1, 5), {"endpoint": False}), ((-5, 5, 4), {"dtype": int}),
             ((2, 2, 3), {}), ((0, 1, 1), {}), ((0, 1, 0), {}), ((1, -1, 7), {"dtype": np.float32})]


@pytest.mark.parametrize("args,kw", LINSPACES, ids=str)
def test_linspace_matches_numpy(device, args, kw):
    r, e = pt.linspace(*args, **kw), np.linspace(*args, **kw)
    assert r.dtype.np == e.dtype
    assert_close(r.numpy(), e, r.dtype, 4)
    r2, step = pt.linspace(*args, retstep=True, **kw)
    assert np.allclose(step, np.linspace(*args, retstep=True, **kw)[1], equal_nan=True)


@pytest.mark.parametrize("args,kw", [((3,), {}), ((3, 4), {"k": 1}), ((4,), {"k": -2, "dtype": np.int32}),
                                     ((2, 5), {"k": 7}), ((0,), {})], ids=str)
def test_eye_tril_triu_match_numpy(device, args, kw):
    r, e = pt.eye(*args, **kw), np.eye(*args, **kw)
    assert r.dtype.np == e.dtype
    assert_close(r.numpy(), e, r.dtype)
    a = values(dt.float32, (2, 3, 4), 1)
    for k in (-1, 0, 2):
        assert_close(pt.tril(a, k).numpy(), np.tril(a, k), pt.float32)
        assert_close(pt.triu(a, k).numpy(), np.triu(a, k), pt.float32)
    assert pt.identity(3).numpy().tolist() == np.identity(3).tolist()


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_matches_numpy(device, indexing):
    a, b, c = np.arange(3.0), np.arange(4.0) * 2, np.arange(2.0)
    for mine, theirs in zip(pt.meshgrid(a, b, c, indexing=indexing), np.meshgrid(a, b, c, indexing=indexing)):
        assert_close(mine.numpy(), theirs, pt.float64)


@pytest.mark.parametrize("dtype", ALL, ids=ids)
def test_array_from_host_data(device, dtype):
    a = values(dtype, (3, 4), 5)
    x = pt.array(a)
    a_copy = a.copy()
    a[...] = a[0, 0]  # poot copied the data: later writes to the NumPy array do not leak in
    assert x.dtype is dtype and x.device == device
    assert_close(x.numpy(), a_copy, dtype)
    assert pt.asarray(x) is x
    assert_close(pt.asarray(a_copy.tolist(), dtype=dtype).numpy(), a_copy, dtype)
    assert_close(pt.array(a_copy[:, ::-1].T).numpy(), a_copy[:, ::-1].T, dtype)


@pytest.mark.parametrize("code", [">f8", ">f4", ">i2", ">u4", ">c16"])
def test_array_from_big_endian_data_keeps_its_values(device, code):
    a = np.arange(6, dtype=code).reshape(2, 3) * 3
    x = pt.asarray(a)
    assert x.dtype is pt.dtypes.as_dtype(a.dtype.newbyteorder("=")) and x.shape == (2, 3)
    np.testing.assert_array_equal(x.numpy(), a)
    np.testing.assert_array_equal((x + 1).numpy(), a + 1)


def test_array_from_python_objects(device):
    assert pt.array(3).dtype is pt.int64 and pt.array(2.5).dtype is pt.float64
    assert pt.array(True).dtype is pt.bool_ and pt.array([[1, 2], [3, 4]]).shape == (2, 2)
    assert pt.array([1, 2.0]).dtype is pt.float64 and pt.array([]).dtype is pt.float64
    x = pt.asarray([1.0, 2.0])
    s = pt.array([x, x * 2])  # a list of poot arrays stacks lazily
    assert s.shape == (2, 2) and s.numpy().tolist() == [[1, 2], [2, 4]]
    assert pt.array(np.float32(2)).dtype is pt.float32 and pt.array([1], ndmin=3).shape == (1, 1, 1)


@pytest.mark.parametrize("src", ALL, ids=ids)
def test_astype_matches_numpy(device, src):
    a = values(src, (3, 5), 9)
    if src.kind == "f":
        a = (np.abs(a.astype(np.float32)) * 10).astype(src.np)  # in range for every integer type
    x = pt.asarray(a)
    cases = [(d, x.astype(d), a.astype(d.np)) for d in ALL]
    pt.realize(*(c[1] for c in cases))
    for d, r, e in cases:
        assert r.dtype is d
        assert_close(r.numpy(), e, d, 1, f"{src.name} -> {d.name}")
    assert pt.f32(x).dtype is pt.float32 and pt.float64(2).dtype is pt.float64
    assert pt.astype(a, pt.int16).dtype is pt.int16


def test_dlpack_round_trip(device):
    a = np.arange(6.0).reshape(2, 3)
    x = pt.asarray(a) * 2
    if x.device != "cpu":                # DLPack exports host memory only: a GPU array says so
        with pytest.raises(pt.DeviceError, match=r"CPU only.*x\.to\('cpu'\)"):
            np.from_dlpack(x)
        x = x.to("cpu")
    b = np.from_dlpack(x)
    assert np.array_equal(b, a * 2) and x.__dlpack_device__() == (1, 0)
    y = pt.from_dlpack(b)
    assert isinstance(y, pt.Array) and np.array_equal(y.numpy(), a * 2)


# --- random ------------------------------------------------------------------------------------------
def _threefry_numpy(k0, k1, x0, x1):
    """An independent NumPy Threefry-2x32 (20 rounds): the reference for 'same bits everywhere'."""
    m = np.uint64(0xFFFFFFFF)
    u = lambda v: np.asarray(v, np.uint64) & m  # noqa: E731
    rot = lambda v, r: u((v << np.uint64(r)) | (v >> np.uint64(32 - r)))  # noqa: E731
    ks = [u(k0), u(k1), u(k0) ^ u(k1) ^ np.uint64(0x1BD11BDA)]
    x0, x1 = u(u(x0) + ks[0]), u(u(x1) + ks[1])
    for i in range(5):
        for r in ((13, 15, 26, 6), (17, 29, 16, 24))[i % 2]:
            x0 = u(x0 + x1)
            x1 = rot(x1, r) ^ x0
        x0 = u(x0 + ks[(i + 1) % 3])
        x1 = u(x1 + ks[(i + 2) % 3] + np.uint64(i + 1))
    return x0.astype(np.uint32), x1.astype(np.uint32)


KAT = [((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
       ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
       ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7))]


@pytest.mark.parametrize("key,ctr,out", KAT, ids=["pi", "zeros", "ones"])
def test_threefry_known_answers(device, key, ctr, out):
    from poot.trace.random import threefry2x32

    k0, k1, x0, x1 = (pt.asarray(np.uint32(v))._node for v in key + ctr)
    y0, y1 = threefry2x32(k0, k1, x0, x1)
    assert (int(pt.Array(y0)), int(pt.Array(y1))) == out
    assert tuple(int(v) for v in _threefry_numpy(*key, *ctr)) == out


def test_random_bits_are_threefry_of_an_iota_counter(device):
    key = pt.random.key(42)
    k0, k1 = key.numpy().tolist()
    n = 7
    half = (n + 1) // 2
    ctr = np.arange(2 * half, dtype=np.uint64)
    y0, y1 = _threefry_numpy(k0, k1, ctr[:half], ctr[half:])
    assert pt.random.bits(key, (n,)).numpy().tolist() == np.concatenate([y0, y1])[:n].tolist()


def test_split_matches_jax(device):
    k1, k2 = pt.random.split(pt.random.key(0))  # jax.random.split(jax.random.PRNGKey(0))
    assert k1.tolist() == [4146024105, 967050713] and k2.tolist() == [2718843009, 1272950319]
    assert pt.random.split(pt.random.key(0), 3).shape == (3, 2)


@pytest.mark.parametrize("dtype", [dt.float16, dt.bfloat16, dt.float32, dt.float64], ids=ids)
def test_uniform_and_normal(device, dtype):
    key = pt.random.key(7)
    u = pt.random.uniform(key, (4000,), dtype)
    v = u.numpy().astype(np.float64)
    assert u.dtype is dtype and (v >= 0).all() and (v < 1).all()
    assert abs(v.mean() - 0.5) < 0.03 and np.array_equal(v, pt.random.uniform(key, (4000,), dtype).numpy()
                                                           .astype(np.float64))
    w = pt.random.uniform(key, (2, 3), dtype, minval=-2.0, maxval=3.0).numpy().astype(np.float64)
    assert (w >= -2).all() and (w < 3).all()
    z = pt.random.normal(pt.random.key(8), (4000,), dtype).numpy().astype(np.float64)
    assert abs(z.mean()) < 0.1 and abs(z.std() - 1) < 0.1 and np.isfinite(z).all()
    k1, k2 = pt.random.split(key)
    assert not np.array_equal(pt.random.uniform(k1, (8,)).numpy(), pt.random.uniform(k2, (8,)).numpy())


@pytest.mark.parametrize("dtype,lo,hi", [(dt.int64, 0, 10), (dt.int8, -5, 5), (dt.uint8, 0, 256),
                                         (dt.int64, -2**40, 2**40), (dt.int32, 3, 4)], ids=str)
def test_randint_range(device, dtype, lo, hi):
    r = pt.random.randint(pt.random.key(3), (3000,), lo, hi, dtype=dtype)
    v = r.numpy().astype(np.float64)
    assert r.dtype is dtype and v.min() >= lo and v.max() < hi
    if hi - lo <= 256:
        assert len(np.unique(v)) == hi - lo  # every value shows up
    assert pt.random.randint(pt.random.key(3), (4,), 5).numpy().max() < 5


def test_fold_in_and_bernoulli(device):
    k = pt.random.key(1)
    a, b = pt.random.fold_in(k, 1), pt.random.fold_in(k, 2)
    assert a.shape == (2,) and a.tolist() != b.tolist()
    m = pt.random.bernoulli(k, 0.25, (4000,)).numpy()
    assert m.dtype == np.bool_ and abs(m.mean() - 0.25) < 0.03
