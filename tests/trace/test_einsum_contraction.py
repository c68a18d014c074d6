"""einsum contracts a label shared by two operands and needed nowhere later inside the matmul (BLAS on
the CPU), not as a batch axis of outer products summed afterwards: 'ik,kj->ij' of 600 x 600 once
built a 600**3 intermediate."""
import numpy as np
import pytest

import poot as pt


def _matmul_shapes(x) -> list:
    shapes, stack, seen = [], [x._node], set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.op == "matmul":
            shapes.append([i.aval.shape for i in n.inputs])
        stack.extend(n.inputs)
    return shapes


@pytest.mark.parametrize("sub, shapes, want", [
    ("ik,kj->ij", [(60, 50), (50, 40)], [[(1, 60, 50), (1, 50, 40)]]),
    ("bij,bkj->bik", [(3, 5, 7), (3, 6, 7)], [[(3, 5, 7), (3, 7, 6)]]),
    ("ij,ij->i", [(30, 20), (30, 20)], [[(30, 1, 20), (30, 20, 1)]]),
])
def test_shared_labels_are_summed_by_the_matmul(sub, shapes, want):
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s) for s in shapes]
    got = pt.einsum(sub, *[pt.asarray(x) for x in xs])
    assert _matmul_shapes(got) == want
    np.testing.assert_allclose(got.numpy(), np.einsum(sub, *xs), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("sub, shapes", [
    ("ij,jk,kl->il", [(4, 5), (5, 6), (6, 7)]), ("ab,bc,ca->", [(3, 4), (4, 5), (5, 3)]),
    ("ij,jk,ik->ik", [(3, 4), (4, 5), (3, 5)]), ("bi,bi,bi->b", [(4, 3)] * 3),
    ("ijk,jkl->il", [(3, 4, 5), (4, 5, 6)]), ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 8), (2, 3, 6, 8)]),
])
def test_chains_match_numpy_eager_and_jitted(device, sub, shapes):
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    want = np.einsum(sub, *[x.astype(np.float64) for x in xs])
    args = [pt.asarray(x) for x in xs]
    np.testing.assert_allclose(pt.einsum(sub, *args).numpy(), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(pt.jit(lambda *a: pt.einsum(sub, *a))(*args).numpy(), want, rtol=1e-4, atol=1e-4)
