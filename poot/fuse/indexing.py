"""Symbolic index arithmetic: how movement ops turn into index math on loads.

An index is an affine `Form`: `const + sum(coef * atom)`. Atoms are loop coordinates (`Coord`, with a
known range), or `Div`/`Mod` of a form by a constant, or `Clamp` (a padded coordinate mapped into its
source, 0 where it falls outside), or `Data` (a value loaded at run time, e.g. a gather index).
Division and modulo simplify with range analysis, and `k*(f // k) + f % k` folds back to `f`, so
reshapes of contiguous data cost no div/mod at run time. The planner uses forms to decide fusion
(does a reduction's row follow the kernel's row?); kernel generation turns them into KIR.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass


class _Shared:
    """Hash, equality, sort key and bounds computed once per node. An index is a DAG: a reshape of a
    transpose of a reshape reads the previous index twice (its // and its %), so a loop of such views
    doubles the tree at every step, and anything recomputed per visit (dataclass hashing, repr as the
    sort key, range analysis) took seconds at 14 steps and minutes at 16. Each node caches them in its
    __dict__ (the dataclasses are frozen, not slotted)."""

    def __hash__(self) -> int:
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((type(self).__name__,) + self._fields())
            object.__setattr__(self, "_hash", h)
        return h

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if type(other) is not type(self):
            return NotImplemented
        return hash(self) == hash(other) and self._fields() == other._fields()

    def sort_key(self) -> str:
        """A short deterministic key ordering a Form's terms: atoms of one kind together (Clamp, Coord,
        Data, Div, Mod); coordinates and loaded indices by their fields (so `i0 + 4*i1` reads in
        coordinate order); the others by a digest of their children's keys (their text doubles at
        every nested reshape)."""
        k = self.__dict__.get("_key")
        if k is None:
            k = self._make_key()
            object.__setattr__(self, "_key", k)
        return k


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


@dataclass(frozen=True, eq=False)
class Coord(_Shared):
    """A loop coordinate taking values 0 .. size-1."""
    name: str
    size: int

    def _fields(self):
        return (self.name, self.size)

    def _make_key(self) -> str:
        return f"Coord({self.name!r}, {self.size})"


@dataclass(frozen=True, eq=False)
class Data(_Shared):
    """An index read from memory at run time; `size` bounds it (0 .. size-1, checked where loaded)."""
    key: object
    size: int

    def _fields(self):
        return (self.key, self.size)

    def _make_key(self) -> str:
        return f"Data({self.key!r}, {self.size})"


@dataclass(frozen=True, eq=False)
class Div(_Shared):
    form: "Form"
    k: int

    def _fields(self):
        return (self.form, self.k)

    def _make_key(self) -> str:
        return "Div" + _digest(f"{self.form.sort_key()}//{self.k}")


@dataclass(frozen=True, eq=False)
class Mod(_Shared):
    form: "Form"
    k: int

    def _fields(self):
        return (self.form, self.k)

    def _make_key(self) -> str:
        return "Mod" + _digest(f"{self.form.sort_key()}%{self.k}")


@dataclass(frozen=True, eq=False)
class Clamp(_Shared):
    """`form` if 0 <= form < size, else 0 (a padded or concatenated coordinate mapped to its source)."""
    form: "Form"
    size: int

    def _fields(self):
        return (self.form, self.size)

    def _make_key(self) -> str:
        return "Clamp" + _digest(f"{self.form.sort_key()},{self.size}")


Atom = Coord | Data | Div | Mod | Clamp


@dataclass(frozen=True, eq=False)
class Form(_Shared):
    const: int
    terms: tuple[tuple[Atom, int], ...]   # sorted by the atoms' sort_key, coefficients non-zero

    def _fields(self):
        return (self.const, self.terms)

    def _make_key(self) -> str:
        return _digest(f"{self.const};" + ";".join(f"{a.sort_key()}*{c}" for a, c in self.terms))

    # -- construction --
    @staticmethod
    def of(x) -> "Form":
        if isinstance(x, Form):
            return x
        if isinstance(x, int):
            return Form(x, ())
        return Form(0, ((x, 1),))

    def __add__(self, other) -> "Form":
        if isinstance(other, int):             # the common cases skip normalizing: terms unchanged
            return Form(self.const + other, self.terms) if other else self
        other = Form.of(other)
        if not other.terms or not self.terms:
            return Form(self.const + other.const, self.terms or other.terms)
        terms = dict(self.terms)
        for a, c in other.terms:
            terms[a] = terms.get(a, 0) + c
        return _normalize(self.const + other.const, terms)

    __radd__ = __add__

    def __sub__(self, other) -> "Form":
        return self + Form.of(other) * -1

    def __mul__(self, k: int) -> "Form":
        if k == 0:
            return Form(0, ())
        return Form(self.const * k, tuple((a, c * k) for a, c in self.terms))

    __rmul__ = __mul__

    # -- queries --
    def bounds(self) -> tuple[int, int]:
        b = self.__dict__.get("_bounds")
        if b is None:
            lo = hi = self.const
            for a, c in self.terms:
                alo, ahi = atom_bounds(a)
                lo += min(c * alo, c * ahi)
                hi += max(c * alo, c * ahi)
            b = (lo, hi)
            object.__setattr__(self, "_bounds", b)
        return b

    @property
    def is_const(self) -> bool:
        return not self.terms

    def __floordiv__(self, k: int) -> "Form":
        return floordiv(self, k)

    def __mod__(self, k: int) -> "Form":
        return mod(self, k)

    def __repr__(self) -> str:
        parts = [f"{c}*{_atom_str(a)}" if c != 1 else _atom_str(a) for a, c in self.terms]
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts)


def _atom_str(a) -> str:
    if isinstance(a, Coord):
        return a.name
    if isinstance(a, Data):
        return f"data{a.key}"
    if isinstance(a, Div):
        return f"({a.form})//{a.k}"
    if isinstance(a, Mod):
        return f"({a.form})%{a.k}"
    return f"clamp({a.form}, {a.size})"


def atom_bounds(a) -> tuple[int, int]:
    if isinstance(a, (Coord, Data)):
        return 0, max(a.size - 1, 0)
    if isinstance(a, Clamp):
        return 0, max(a.size - 1, 0)
    lo, hi = a.form.bounds()
    if isinstance(a, Div):
        return lo // a.k, hi // a.k
    return (lo % a.k, hi % a.k) if hi - lo < a.k and lo % a.k <= hi % a.k else (0, a.k - 1)


def _normalize(const: int, terms: dict) -> Form:
    terms = {a: c for a, c in terms.items() if c != 0}
    if len(terms) < 2:
        return Form(const, tuple(terms.items()))
    # k*(f // k) + (f % k) == f: fold the pair back whenever both appear with matching coefficients
    changed = True
    while changed:
        changed = False
        for a, c in list(terms.items()):
            if isinstance(a, Div) and a in terms:
                m = Mod(a.form, a.k)
                cm = terms.get(m)
                if cm and c == cm * a.k:
                    del terms[a], terms[m]
                    inner = a.form * cm
                    const += inner.const
                    for ia, ic in inner.terms:
                        terms[ia] = terms.get(ia, 0) + ic
                    terms = {x: y for x, y in terms.items() if y != 0}
                    changed = True
                    break
    return Form(const, tuple(sorted(terms.items(), key=lambda t: t[0].sort_key())))


def _split(f: Form, k: int):
    """f = k*q + r where q is a Form and r a Form whose coefficients/const are reduced mod k."""
    q_terms, r_terms = {}, {}
    for a, c in f.terms:
        qc, rc = divmod(c, k)
        if qc:
            q_terms[a] = qc
        if rc:
            r_terms[a] = rc
    qc, rc = divmod(f.const, k)
    return _normalize(qc, q_terms), _normalize(rc, r_terms)


def floordiv(f: Form, k: int) -> Form:
    if k == 1:
        return f
    lo, hi = f.bounds()
    if 0 <= lo and hi < k:
        return Form(0, ())
    if f.is_const:
        return Form(f.const // k, ())
    q, r = _split(f, k)
    rlo, rhi = r.bounds()
    if 0 <= rlo and rhi < k:
        return q
    return Form(0, ((Div(f, k), 1),))


def mod(f: Form, k: int) -> Form:
    if k == 1:
        return Form(0, ())
    lo, hi = f.bounds()
    if 0 <= lo and hi < k:
        return f
    if f.is_const:
        return Form(f.const % k, ())
    _, r = _split(f, k)
    rlo, rhi = r.bounds()
    if 0 <= rlo and rhi < k:
        return r
    return Form(0, ((Mod(r, k), 1),))


def clamp(f: Form, size: int) -> Form:
    if size <= 1:      # a piece one element wide is read at 0 wherever it is read at all
        return Form(0, ())
    if f.const == 0 and len(f.terms) == 1 and f.terms[0][1] == 1 and isinstance(f.terms[0][0], Clamp):
        inner = f.terms[0][0]    # clamp(clamp(g, m), n) == clamp(g, min(m, n)): appends stay one deep
        if size <= inner.size:
            return clamp(inner.form, size)
    lo, hi = f.bounds()
    if 0 <= lo and hi < size:
        return f
    return Form(0, ((Clamp(f, size), 1),))


# --- shapes --------------------------------------------------------------------------------------
def strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


def ravel(index: list[Form], shape: tuple[int, ...]) -> Form:
    total = Form(0, ())
    for f, s in zip(index, strides(shape)):
        total = total + f * s
    return total


def unravel(linear: Form, shape: tuple[int, ...]) -> list[Form]:
    if math.prod(shape) == 0:          # an empty domain: the index is never used
        return [Form(0, ()) for _ in shape]
    out = []
    for i, s in enumerate(strides(shape)):
        f = floordiv(linear, s)
        out.append(f if i == 0 else mod(f, shape[i]))
    return out


def reshape_index(index: list[Form], out_shape, in_shape) -> list[Form]:
    """The input index of `reshape(x, out_shape)` at `index` (x has `in_shape`)."""
    return unravel(ravel(index, out_shape), in_shape)


def coords(shape: tuple[int, ...], prefix: str = "i") -> list[Form]:
    return [Form.of(Coord(f"{prefix}{d}", n)) if n != 1 else Form(0, ()) for d, n in enumerate(shape)]
