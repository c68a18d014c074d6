"""KIR <-> JSON (the `.kir.json` form), deterministic: the same kernel always gives the same bytes.

`to_json(kernel)` writes sorted keys, no whitespace, ASCII only; dtypes by their short names
('f32', 'bf16'...); float constants as the exact bit pattern of the value in its own dtype, as a
'0x…' hex string of width/4 digits (so -0.0, NaN payloads and subnormals survive, and no decimal
printing is involved); ints and bools as JSON ints and booleans. `from_json(text)` rebuilds an equal
Kernel (raising KIRError('bad-json', ...) on malformed input); it does not verify — call `verify`.

Layout: {"format": "poot-kir", "version": 1, "name", "params": [...], "locals": [...], "shared":
[...], "workgroup": [x, y, z], "checks", "traps": [...], "body": [stmt...]}; an expression is an
object with "k" (its node kind) and "t" (its dtype), a statement an object with "s" (its kind).
"""
from __future__ import annotations

import json
import struct

import ml_dtypes
import numpy as np

from poot import dtypes as dt
from poot.errors import KIRError
from poot.jit.kir.model import (Access, Assign, AsyncCommit, AsyncWait, AtomicAdd, Barrier, Binary, Bitcast, Break,
                    BufferParam, Cast, Const, Continue, CopyAsync, FenceProxyAsync, Fma, For, If, Index, Kernel,
                    LdMatrix, Len, Load, LoadX4, Local, Mma, Read, Return, ScalarParam, Select, SharedArray, Shuffle,
                    ShuffleXor, Store, StoreX4, Trap, TrapSite, Unary, Wgmma, While)

FORMAT, VERSION = "poot-kir", 1

# node class -> (tag, ((json key, field name, how), ...)); how: e expr, t tuple of exprs, b block, d dtype,
# p plain
_EXPRS = {
    Read: ("read", (("name", "name", "p"),)),
    Load: ("load", (("buf", "buffer", "p"), ("i", "index", "e"))),
    Len: ("len", (("buf", "buffer", "p"),)),
    Unary: ("unary", (("op", "op", "p"), ("x", "x", "e"))),
    Binary: ("binary", (("op", "op", "p"), ("a", "a", "e"), ("b", "b", "e"))),
    Select: ("select", (("c", "cond", "e"), ("a", "a", "e"), ("b", "b", "e"))),
    Fma: ("fma", (("a", "a", "e"), ("b", "b", "e"), ("c", "c", "e"))),
    Cast: ("cast", (("x", "x", "e"),)),
    Bitcast: ("bitcast", (("x", "x", "e"),)),
    Index: ("index", (("kind", "kind", "p"), ("axis", "axis", "p"))),
    ShuffleXor: ("shuffle_xor", (("x", "x", "e"), ("mask", "mask", "p"))),
    Shuffle: ("shuffle", (("x", "x", "e"), ("i", "index", "e"))),
    Mma: ("mma", (("a", "a", "t"), ("b", "b", "t"), ("c", "c", "t"), ("elem", "elem", "p"), ("shape", "shape", "p"))),
    LdMatrix: ("ldmatrix", (("buf", "shared", "p"), ("i", "index", "e"), ("trans", "trans", "p"),
                            ("elem", "elem", "p"))),
    LoadX4: ("load_x4", (("buf", "buffer", "p"), ("i", "index", "e"), ("elem", "elem", "p"))),
    Wgmma: ("wgmma", (("abuf", "a_shared", "p"), ("ai", "a_index", "e"), ("bbuf", "b_shared", "p"),
                      ("bi", "b_index", "e"), ("c", "c", "t"), ("elem", "elem", "p"), ("in", "inputs", "p"), ("n", "n", "p"),
                      ("bt", "bt", "p"))),
}
_STMTS = {
    Assign: ("assign", (("name", "name", "p"), ("value", "value", "e"))),
    Store: ("store", (("buf", "buffer", "p"), ("i", "index", "e"), ("value", "value", "e"))),
    AtomicAdd: ("atomic_add", (("buf", "buffer", "p"), ("i", "index", "e"), ("value", "value", "e"),
                               ("result", "result", "p"))),
    If: ("if", (("cond", "cond", "e"), ("then", "then", "b"), ("else", "orelse", "b"))),
    For: ("for", (("var", "var", "p"), ("start", "start", "e"), ("stop", "stop", "e"), ("step", "step", "p"),
                  ("body", "body", "b"))),
    While: ("while", (("cond", "cond", "e"), ("body", "body", "b"))),
    Break: ("break", ()), Continue: ("continue", ()), Return: ("return", ()), Barrier: ("barrier", ()),
    Trap: ("trap", (("code", "code", "p"),)),
    StoreX4: ("store_x4", (("buf", "buffer", "p"), ("i", "index", "e"), ("values", "values", "t"))),
    CopyAsync: ("copy_async", (("dst", "dst", "p"), ("di", "dst_index", "e"), ("src", "src", "p"),
                               ("si", "src_index", "e"), ("ok", "ok", "e"))),
    AsyncCommit: ("async_commit", ()), AsyncWait: ("async_wait", (("pending", "pending", "p"),)),
    FenceProxyAsync: ("fence_proxy_async", ()),
}
_EXPR_BY_TAG = {tag: (cls, f) for cls, (tag, f) in _EXPRS.items()}
_STMT_BY_TAG = {tag: (cls, f) for cls, (tag, f) in _STMTS.items()}
_FLOAT_BITS = {dt.float16: (np.float16, np.uint16), dt.bfloat16: (ml_dtypes.bfloat16, np.uint16),
               dt.float32: (np.float32, np.uint32)}


# --- encoding ------------------------------------------------------------------------------------
def float_bits(value: float, dtype) -> int:
    """The bit pattern of `value` in float dtype `dtype` (rounded to it if it is not exact)."""
    if dtype is dt.float64:
        return struct.unpack("<Q", struct.pack("<d", float(value)))[0]
    ftype, utype = _FLOAT_BITS[dtype]
    return int(np.array(value, dtype=np.float64).astype(ftype).view(utype))


def bits_float(bits: int, dtype) -> float:
    if dtype is dt.float64:
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    ftype, utype = _FLOAT_BITS[dtype]
    return float(np.array(bits, dtype=utype).view(ftype))


def _const_json(c: Const):
    if dt.is_float(c.dtype):
        return f"0x{float_bits(c.value, c.dtype):0{c.dtype.bits // 4}x}"
    return bool(c.value) if dt.is_bool(c.dtype) else int(c.value)


def _enc_expr(e) -> dict:
    if isinstance(e, Const):
        return {"k": "const", "t": e.dtype.short, "v": _const_json(e)}
    tag, fields = _EXPRS[type(e)]
    out = {"k": tag, "t": e.dtype.short}
    for key, name, how in fields:
        v = getattr(e, name)
        out[key] = _enc_expr(v) if how == "e" else [_enc_expr(x) for x in v] if how == "t" else v
    return out


def _enc_stmt(s) -> dict:
    tag, fields = _STMTS[type(s)]
    out = {"s": tag}
    for key, name, how in fields:
        v = getattr(s, name)
        out[key] = (_enc_expr(v) if how == "e" else [_enc_stmt(x) for x in v] if how == "b"
                    else [_enc_expr(x) for x in v] if how == "t" else v)
    return out


def to_dict(kernel: Kernel) -> dict:
    params = []
    for p in kernel.params:
        if isinstance(p, BufferParam):
            params.append({"kind": "buffer", "name": p.name, "dtype": p.dtype.short, "access": p.access.value})
        else:
            params.append({"kind": "scalar", "name": p.name, "dtype": p.dtype.short})
    return {
        "format": FORMAT, "version": VERSION, "name": kernel.name, "params": params,
        "locals": [{"name": v.name, "dtype": v.dtype.short} for v in kernel.locals],
        "shared": [{"name": s.name, "dtype": s.dtype.short, "size": s.size} for s in kernel.shared],
        "workgroup": [int(w) for w in kernel.workgroup], "checks": bool(kernel.checks),
        **({"cpu_vector_bits": int(kernel.cpu_vector_bits)} if kernel.cpu_vector_bits else {}),
        "traps": [{"code": t.code, "what": t.what, "where": t.where} for t in kernel.traps],
        "body": [_enc_stmt(s) for s in kernel.body],
    }


def to_json(kernel: Kernel) -> str:
    """The canonical JSON text of `kernel` (deterministic bytes; see the module docstring)."""
    return json.dumps(to_dict(kernel), sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)


# --- decoding ------------------------------------------------------------------------------------
def _bad(msg: str, name: str = "?"):
    raise KIRError("bad-json", msg, name)


def _dtype(name):
    try:
        return dt.by_short(name)
    except Exception:
        _bad(f"unknown dtype {name!r}")


def _dec_const(d: dict) -> Const:
    t = _dtype(d.get("t"))
    v = d.get("v")
    if dt.is_float(t):
        if not isinstance(v, str) or not v.startswith("0x") or len(v) != 2 + t.bits // 4:
            _bad(f"float constant {v!r} must be a 0x… bit pattern of {t.bits // 4} hex digits")
        return Const(bits_float(int(v, 16), t), t)
    if dt.is_bool(t):
        if not isinstance(v, bool):
            _bad(f"bool constant {v!r}")
        return Const(v, t)
    if not isinstance(v, int) or isinstance(v, bool):
        _bad(f"integer constant {v!r}")
    return Const(v, t)


def _dec_expr(d) -> object:
    if not isinstance(d, dict) or "k" not in d:
        _bad(f"expected an expression object, got {str(d)[:60]!r}")
    if d["k"] == "const":
        return _dec_const(d)
    if d["k"] not in _EXPR_BY_TAG:
        _bad(f"unknown expression kind {d['k']!r}")
    cls, fields = _EXPR_BY_TAG[d["k"]]
    kw = {name: (_dec_expr(d.get(key)) if how == "e" else _dec_exprs(d.get(key)) if how == "t" else d.get(key))
          for key, name, how in fields}
    return cls(**kw, dtype=_dtype(d.get("t")))


def _dec_exprs(items) -> tuple:
    if not isinstance(items, list):
        _bad(f"expected a list of expressions, got {str(items)[:60]!r}")
    return tuple(_dec_expr(x) for x in items)


def _dec_block(items) -> tuple:
    if not isinstance(items, list):
        _bad(f"expected a statement list, got {str(items)[:60]!r}")
    return tuple(_dec_stmt(x) for x in items)


def _dec_stmt(d) -> object:
    if not isinstance(d, dict) or d.get("s") not in _STMT_BY_TAG:
        _bad(f"unknown statement {str(d)[:60]!r}")
    cls, fields = _STMT_BY_TAG[d["s"]]
    kw = {}
    for key, name, how in fields:
        v = d.get(key)
        kw[name] = _dec_expr(v) if how == "e" else _dec_block(v) if how == "b" else _dec_exprs(v) if how == "t" else v
    return cls(**kw)


def from_dict(d: dict) -> Kernel:
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        _bad("not a poot KIR document (missing \"format\": \"poot-kir\")")
    if d.get("version") != VERSION:
        _bad(f"KIR version {d.get('version')!r}; this poot reads version {VERSION}")
    name = d.get("name", "?")
    try:
        params = []
        for p in d["params"]:
            if p["kind"] == "buffer":
                params.append(BufferParam(p["name"], _dtype(p["dtype"]), Access(p["access"])))
            elif p["kind"] == "scalar":
                params.append(ScalarParam(p["name"], _dtype(p["dtype"])))
            else:
                _bad(f"unknown param kind {p['kind']!r}", name)
        return Kernel(
            name=name, params=tuple(params), body=_dec_block(d["body"]),
            locals=tuple(Local(v["name"], _dtype(v["dtype"])) for v in d["locals"]),
            shared=tuple(SharedArray(s["name"], _dtype(s["dtype"]), s["size"]) for s in d["shared"]),
            workgroup=tuple(d["workgroup"]), checks=d["checks"], cpu_vector_bits=int(d.get("cpu_vector_bits", 0)),
            traps=tuple(TrapSite(t["code"], t["what"], t["where"]) for t in d["traps"]))
    except (KeyError, TypeError, ValueError) as e:
        _bad(f"malformed KIR document: {type(e).__name__}: {e}", name)


def from_json(text) -> Kernel:
    """Parse `.kir.json` text (str or bytes) back into a Kernel."""
    try:
        d = json.loads(text)
    except (ValueError, TypeError) as e:
        _bad(f"not JSON: {e}")
    return from_dict(d)


__all__ = ["to_json", "from_json", "to_dict", "from_dict", "float_bits", "bits_float"]
