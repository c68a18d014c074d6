"""The one error family. Every mistake a user can make surfaces as a `PootError` subclass whose message
says what was wrong, where (the user's file:line) and what to do; the message is part of the API."""
from __future__ import annotations

import functools
import os
import sys
import sysconfig

import numpy as np

from numpy.exceptions import AxisError as _NumpyAxisError

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


class PootError(Exception):
    """Base of every error poot raises on purpose."""


class ShapeError(PootError, ValueError):
    """Operand shapes that do not fit together (broadcasting, matmul, reshape, concatenate...)."""


class ShapeTypeError(ShapeError, TypeError):
    """A shape or size that is not an integer (zeros((2.0, 3)), x.reshape('34')): NumPy raises
    TypeError for it, so this is a TypeError as well as a ShapeError."""


class DTypeError(PootError, TypeError):
    """An unsupported dtype, or a dtype an operation does not accept."""


class ScalarOverflowError(DTypeError, OverflowError):
    """A Python number that does not fit the integer dtype it meets (int8_array + 300,
    pt.full(3, 300, dtype=pt.int8), int_array[0] = inf): NumPy 2's OverflowError, and a DTypeError."""


class ArgumentError(PootError, TypeError):
    """A call whose arguments do not fit the function (an unknown keyword, too many positional
    arguments): NumPy's and Python's TypeError, naming the function."""


class OutError(ArgumentError, ShapeError, DTypeError):
    """`out=` given to a function: poot arrays are immutable values, so a result is assigned, never
    written into a given array. One class for every function (ufuncs, reductions, matmul, clip...),
    and a ShapeError, a DTypeError and an ArgumentError, so code written for any of the three (or for
    NumPy's ValueError or TypeError) catches it. OutShapeError and OutDTypeError say more where the
    given array could not have held the result at all."""


class OutShapeError(OutError):
    """`out=` of a shape other than the result's (NumPy's ValueError); the message names the function
    and both shapes."""


class OutDTypeError(OutError):
    """`out=` of a dtype the result cannot be cast to under NumPy's casting='same_kind' rule (NumPy's
    UFuncTypeError, a TypeError); the message names the function and both dtypes."""


def _shape_dtype(x):
    """(shape, NumPy dtype) of an array-like result or out=, or None for anything else."""
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is None or dtype is None:
        return None
    try:
        return tuple(shape), np.dtype(getattr(dtype, "np", dtype))
    except TypeError:
        return None


def out_error(op: str, out, result=None, casting: str = "same_kind") -> OutError:
    """The error for `op(..., out=out)`, whose result (when known) is `result`: OutShapeError where
    out's shape is not the result's, OutDTypeError where NumPy's casting rule for op's out= refuses to
    cast the result's dtype to out's ('same_kind' for ufuncs, matmul, clip; reductions and scans cast
    to any out, 'unsafe'), OutError otherwise. Every message names op and ends in what to do."""
    outs = out if isinstance(out, tuple) else (out,)
    results = result if isinstance(result, tuple) else (result,)
    fix = f"poot arrays are immutable values; assign the result instead (y = {op}(...))"
    for o, r in zip(outs, results):
        got, want = _shape_dtype(o), _shape_dtype(r)
        if got is None or want is None:
            continue
        if got[0] != want[0]:
            return OutShapeError(f"{op}: out= has shape {got[0]}, but the result has shape {want[0]}; "
                                 f"out= is not supported ({fix})")
        if not np.can_cast(want[1], got[1], casting):
            return OutDTypeError(f"{op}: out= has dtype {got[1]}, but the result's dtype {want[1]} "
                                 f"cannot be cast to it under casting={casting!r}; out= is not "
                                 f"supported ({fix})")
    return OutError(f"{op}: out= is not supported ({fix})")


class DomainError(PootError, ValueError):
    """An argument outside what an operation is defined for (NumPy's ValueError: integers to negative
    integer powers)."""


class SamplingError(PootError, ValueError):
    """Sampling parameters out of range (a temperature, top-k, top-p or min-p no distribution has)."""


class AxisError(PootError, _NumpyAxisError):
    """An axis outside the array's dimensions: a NumPy AxisError (so an IndexError and a ValueError),
    which `except np.exceptions.AxisError` catches. Its message is its first argument, as for every
    PootError (NumPy's class keeps it apart, where the boundary could not add the user's line)."""

    def __init__(self, *args):
        Exception.__init__(self, *args)
        self._msg, self.axis, self.ndim = (args[0] if args else ""), None, None

    __str__ = Exception.__str__


class AxisTypeError(AxisError, TypeError):
    """An axis that is not an integer (axis=1.0, axis='1'): NumPy raises TypeError for it, so this is
    a TypeError as well as an AxisError, and `except TypeError:` written for NumPy catches it."""


class AxisNameError(PootError, NameError):
    """A collective (`pt.lax.psum`, `pmean`, `axis_index`...) names an axis that no enclosing
    `pt.vmap(..., axis_name=...)` binds: a NameError, as JAX raises for an unbound axis name."""


class PootIndexError(PootError, IndexError):
    """An index out of range: known at trace time, or (KernelIndexError) found by the kernel that
    used an index held in an array."""


class DeviceError(PootError, RuntimeError):
    """A device failed, or arrays on different devices were mixed."""


class DeviceUnavailableError(DeviceError):
    """The requested device cannot be used on this machine; the message says why."""


class OutOfMemoryError(DeviceError, MemoryError):
    """A device allocation failed."""


class CopyError(PootError, ValueError, BufferError):
    """`copy=False` was asked for, but the result needs a copy (host data always moves into device
    memory). A ValueError and a BufferError: the array API standard names each in one place."""


class APIVersionError(PootError, ValueError):
    """An array API standard version poot does not implement (`x.__array_namespace__(api_version=)`)."""


class TracerError(PootError):
    """A traced (abstract) value was used where a concrete one is needed, inside @poot.jit."""


class LeakedTracerError(TracerError):
    """A value of a finished trace (stored outside a jitted or vmapped function, a loop or branch
    body) used later: it has no value outside that trace (JAX's UnexpectedTracerError)."""


class RetraceWarning(UserWarning):
    """A jitted function keeps being traced again (its arguments' shapes, dtypes or static values
    keep changing); the message names the argument."""


class KernelImportError(PootError):
    """A @poot.kernel function uses Python outside the accepted subset. Carries a stable `.code`
    (e.g. 'kernel-import::unsupported-call') and the location `file:line:col`."""

    def __init__(self, code: str, message: str, file: str = "<unknown>", line: int = 0, col: int = 0,
                 source_line: str | None = None):
        self.code, self.file, self.line, self.col = code, file, line, col
        self.source_line = source_line
        text = f"{file}:{line}:{col}: error[{code}]: {message}"
        if source_line is not None:
            text += f"\n    {source_line.rstrip()}\n    {' ' * col}^"
        super().__init__(text)
        self.message = message


class KernelTrap(PootError, RuntimeError):
    """A kernel hit a trap (failed bounds check or assert); raised by the call on the CPU (and by any
    call with NumPy arguments), at the next synchronize or host read on a GPU device."""

    def __init__(self, kernel: str, code: int, where: str | None = None, what: str | None = None):
        self.kernel, self.code, self.where, self.what = kernel, code, where, what
        msg = f"kernel '{kernel}' trapped with code {code}"
        if what:
            msg += f" ({what})"
        if where:
            msg += f" at {where}"
        super().__init__(msg)


# Trap codes TRAP_INDEX .. TRAP_INDEX + 0xFFFF: an index held in an array was out of range for the
# axis it indexes (one code per check site of a kernel, so the trap names the site's line).
TRAP_INDEX = 0x7FFE0000


def is_index_trap(code: int) -> bool:
    return TRAP_INDEX <= code <= TRAP_INDEX + 0xFFFF


class KernelIndexError(KernelTrap, PootIndexError):
    """An index held in an array was out of range for the axis it indexes, as a kernel found: NumPy's
    IndexError, raised at the next host read of the result (a realize, `.numpy()`, a synchronize)."""

    def __init__(self, kernel: str, code: int, where: str | None = None, what: str | None = None):
        super().__init__(kernel, code, where, what)
        msg = what or "an index held in an array is out of bounds"
        if where:
            msg += f" at {where}"
        self.args = (msg + f" (found by kernel '{kernel}'; use mode='clip' or 'wrap' with take to "
                           f"clip or wrap indices instead)",)


def kernel_trap(kernel: str, code: int, where: str | None = None, what: str | None = None) -> KernelTrap:
    """The error a trap code raises: KernelIndexError for index checks, KernelTrap otherwise."""
    cls = KernelIndexError if is_index_trap(code) else KernelTrap
    return cls(kernel, code, where, what)


class KIRError(PootError):
    """A kernel IR body failed verification. `.kind` is a stable name such as 'undeclared-value'."""

    def __init__(self, kind: str, message: str, kernel: str = "?"):
        self.kind, self.kernel = kind, kernel
        super().__init__(f"KIR verification failed for kernel '{kernel}' [{kind}]: {message}")


class LoweringError(PootError):
    """A verified kernel could not be lowered for a target ('backend-lowering' diagnostics)."""


class LaunchError(PootError, ValueError):
    """Launch arguments that do not fit a compiled kernel's ABI (count, dtype, size, grid)."""


class CompileLimitError(PootError):
    """A compile would exceed one of poot's compile limits (equations, kernel size, artifact bytes)."""


class CacheError(PootError):
    """The artifact cache could not be used ('cache-publication' diagnostics)."""


class InternalError(PootError, RuntimeError):
    """poot itself failed on a valid program (a bug in poot, not in the user's code). The message
    carries what failed and the graph being compiled, to paste into a bug report."""

    def __init__(self, what: str, cause: BaseException, dump: str = ""):
        self.what, self.cause, self.dump = what, cause, dump
        text = (f"{what} failed: {type(cause).__name__}: {cause}\n"
                "this is a bug in poot; please report it with the graph below")
        if dump:
            text += "\n" + dump
        super().__init__(text)


class ConfigError(PootError, ValueError):
    """A setting poot cannot use: an environment variable's value (the message names the variable and
    the value) or a command-line option such as a target architecture."""


class NotBuiltError(PootError, NotImplementedError):
    """A part of poot that is not built yet; the message names it."""


# --- arguments poot's code met before checking them by name ------------------------------------
# A public function that hands an argument it cannot use to Python or NumPy (float('abc'), a string
# where a sequence was meant, 2**70 where an int64 was) raised that library's bare exception. At the
# API boundary such an exception, raised in poot's code (not in a function of the user's that poot
# called), becomes one of these: a PootError naming the function and the user's line, and still the
# original's type, so `except ValueError:` written for NumPy catches it as before.
class ArgumentValueError(PootError, ValueError):
    """An argument value a public function could not use (Python's or NumPy's ValueError inside)."""


class ArgumentKeyError(PootError, KeyError):
    """An argument naming a key a public function does not know (a KeyError inside)."""


class ArgumentOverflowError(PootError, OverflowError):
    """An integer argument too large for the machine type it becomes (an OverflowError inside)."""


class ArgumentAttributeError(PootError, AttributeError):
    """An argument of a type a public function does not take (an AttributeError inside)."""


class ArgumentZeroDivisionError(PootError, ZeroDivisionError):
    """An argument of zero a public function divides by (a ZeroDivisionError inside)."""


# --- locating the user's line -----------------------------------------------------------------
def user_frame(skip_dirs: tuple[str, ...] = ()):
    """The innermost stack frame outside poot (and outside `skip_dirs`): the user's line."""
    f = sys._getframe(1)
    while f is not None:
        fn = os.path.abspath(f.f_code.co_filename)
        if not fn.startswith(_PKG_DIR + os.sep) and not any(fn.startswith(d) for d in skip_dirs):
            return f
        f = f.f_back
    return None


def line_at(code, lasti: int):
    """The source line of the instruction at byte offset `lasti` of `code`: what a frame's f_lineno said
    while it ran there (CPython's PyCode_Addr2Line; None for an instruction of no line). Where a line
    is kept for later (a recorded node, an emulated access), keeping (code, f_lasti) and asking this
    when the line is wanted spares the line-table scan f_lineno makes on every read."""
    if lasti < 0:
        return code.co_firstlineno
    for start, end, line in code.co_lines():
        if start <= lasti < end:
            return line
    return None


def user_location() -> str:
    """'file:line' of the user's code that called into poot, or '<unknown>'."""
    f = user_frame()
    return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "<unknown>"


def api_boundary(fn):
    """Decorate a public function so a PootError it raises shows the user's call, not poot's insides:
    the traceback is cut at this frame and the message carries the user's file:line. A call that does
    not fit fn's signature is an ArgumentError; a bare Python exception raised in poot's code on the
    way (an argument it could not use) becomes its PootError twin (`bare_as_poot`).

    `wrapper.keyword_form`, None or (names, handler): a call passing any of `names` as keywords that
    fn's signature refuses is answered by `handler(args, kwargs)` instead (a ufunc's NumPy call
    keywords, poot/trace/ufunc.py). Looked up only once the call has failed, so the calls that fit
    pay nothing for it."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except PootError as e:
            raise located_error(e) from None
        except _BARE as e:
            if type(e) is not TypeError or e.__traceback__.tb_next is not None:
                converted = bare_as_poot(fn, e)
                if converted is None:
                    raise
                raise converted from None
            form = wrapper.keyword_form          # the call did not fit fn
            if form is None or form[0].isdisjoint(kwargs):
                if kwargs.get("out") is not None and "'out'" in str(e):
                    raise located_error(_out_refused(fn, args, kwargs)) from None
                raise _argument_error(fn, e) from None
        return form[1](args, kwargs)      # outside the except: its errors carry no TypeError context

    wrapper.keyword_form = None
    return wrapper


def api_boundary_via(fn, impl):
    """An API boundary for `fn` (as api_boundary(fn)) whose call runs `impl(boundary, args, kwargs)`,
    `boundary` being the wrapper itself, in place of `fn(*args, **kwargs)`: `impl` may answer without
    running `fn` (recipes.memoize replays what `fn` recorded before). `impl` takes the argument tuple
    and dict as they came, not spread again with `*args` (a call from C into a fresh interpreter loop),
    and the boundary's own frame lives here, outside the layer that raised (a PootError's traceback
    starts at it). A call that does not fit `fn`'s signature is `fn`'s own boundary's to report."""

    @functools.wraps(fn)
    def boundary(*args, **kwargs):
        try:
            return impl(boundary, args, kwargs)
        except PootError as e:
            raise located_error(e) from None
        except _BARE as e:
            converted = bare_as_poot(fn, e)
            if converted is None:
                raise
            raise converted from None

    return boundary


# the bare exceptions a boundary converts, each to its twin (exact types only: a subclass such as
# NumPy's LinAlgError or an exception class of the user's means something of its own)
_TWINS = {TypeError: ArgumentError, ValueError: ArgumentValueError, IndexError: PootIndexError,
          KeyError: ArgumentKeyError, OverflowError: ArgumentOverflowError,
          AttributeError: ArgumentAttributeError, ZeroDivisionError: ArgumentZeroDivisionError}
_BARE = tuple(_TWINS)
_LIBRARY_DIRS = tuple(sorted({os.path.abspath(sysconfig.get_paths()[k]) + os.sep
                              for k in ("stdlib", "platstdlib", "purelib", "platlib")}))


def _twin_type(e: BaseException):
    t = type(e)
    if t in _TWINS:
        return _TWINS[t]
    if t.__module__.startswith("numpy") and isinstance(e, IndexError) and isinstance(e, ValueError):
        return AxisError                             # NumPy's AxisError
    if t.__module__.startswith("numpy") and t.__name__ == "UFuncTypeError":
        return ArgumentError
    return None


def raised_in_poot(e: BaseException) -> bool:
    """Whether the innermost frame of e's traceback that is poot's or the user's is poot's (frames of
    the standard library and installed packages between them are skipped): an argument poot's code
    could not use, not an exception of the user's own function that poot was running.

    A poot frame reached from the user's code inside the boundary (`pt.vmap(f)` running f, which
    calls a poot function without a boundary of its own, such as a module's `__getattr__` for a
    name poot lacks) is not the boundary's argument at fault: that exception is f's own, the one f
    raises when called eagerly, so it propagates as it is (as JAX's transforms let it)."""
    files = []
    tb = e.__traceback__
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    kinds = []                      # True: poot's frame, False: the user's (library frames left out)
    for name in files:
        path = os.path.abspath(name)
        if path.startswith(_PKG_DIR + os.sep):
            kinds.append(True)
        elif not name.startswith("<") and not path.startswith(_LIBRARY_DIRS):
            kinds.append(False)
    if not kinds or not kinds[-1]:
        return False
    return all(kinds)


def bare_as_poot(fn, e: BaseException) -> PootError | None:
    """The PootError twin of bare exception `e` that public function `fn` let escape (its message
    names fn, the original exception and the user's line), or None where `e` is to propagate as it is:
    not one of the converted types, or raised by the user's code."""
    twin = _twin_type(e)
    if twin is None or not raised_in_poot(e):
        return None
    name = getattr(fn, "__name__", "function").lstrip("_")
    detail = e.args[0] if type(e) is KeyError and e.args else e
    err = twin(f"{name}: an argument it could not use ({type(e).__name__}: {detail})")
    return located_error(err)


def located_error(e: PootError) -> PootError:
    """`e` as a public function's boundary raises it (api_boundary, and wrappers that are their own
    boundary, such as recipes.memoize's): its message names the user's line (once, at the innermost
    boundary it crosses) and its traceback starts at the boundary."""
    if not getattr(e, "_poot_located", False):
        e._poot_located = True
        if e.args and isinstance(e.args[0], str) and not isinstance(e, KernelImportError):
            e.args = (f"{e.args[0]}\n  (at {user_location()})",) + e.args[1:]
    return e.with_traceback(None)


def _out_refused(fn, args, kwargs) -> OutError:
    """`f(..., out=o)` of a function without an out parameter (pt.add, pt.exp, pt.round...): the
    error out_error gives against the result f gives without out= (recorded lazily, never run), so a
    wrong shape or dtype is named as it is for the functions that take out=."""
    name = getattr(fn, "__name__", "function").lstrip("_")
    try:
        result = fn(*args, **{k: v for k, v in kwargs.items() if k != "out"})
    except Exception:       # the call is wrong without out= too: out= is still what to report
        result = None
    return out_error(name, kwargs["out"], result)


def _argument_error(fn, e: TypeError) -> ArgumentError:
    """The TypeError of a call that did not fit `fn`'s signature, as an ArgumentError naming the public
    function and the user's line."""
    name = getattr(fn, "__name__", "function").lstrip("_")
    detail = str(e).split(") ", 1)[-1] if ") " in str(e) else str(e)
    hint = ""
    if "'out'" in detail:
        hint = "; poot's functions return a new array: write y = f(...), or x[...] = f(...) to fill x"
    err = ArgumentError(f"{name}: {detail}{hint}\n  (at {user_location()})")
    err._poot_located = True
    return err


def fast_boundary(fast, slow):
    """`slow` (a function wrapped by api_boundary) with `fast` tried first: `fast` returns None where
    it does not apply. A PootError from either shows the user's call, not poot's insides. The wrapper
    takes `fast`'s positional parameters one by one (an operator's one, two or three), not as *args:
    Python runs `fast(*args)` as a call from C into a fresh interpreter loop, `fast(x, y)` inline, and
    an element loop calls the wrapper a few times a step."""
    wrapper = _FAST_BOUNDARIES[fast.__code__.co_argcount](fast, slow)
    functools.update_wrapper(wrapper, slow)
    return wrapper


def _fast_boundary1(fast, slow):
    def wrapper(x):
        try:
            r = fast(x)
            return slow(x) if r is None else r
        except PootError as e:
            raise located_error(e) from None

    return wrapper


def _fast_boundary2(fast, slow):
    def wrapper(x, y):
        try:
            r = fast(x, y)
            return slow(x, y) if r is None else r
        except PootError as e:
            raise located_error(e) from None

    return wrapper


def _fast_boundary3(fast, slow):
    def wrapper(x, y, z):
        try:
            r = fast(x, y, z)
            return slow(x, y, z) if r is None else r
        except PootError as e:
            raise located_error(e) from None

    return wrapper


_FAST_BOUNDARIES = {1: _fast_boundary1, 2: _fast_boundary2, 3: _fast_boundary3}


def exporter(namespace: dict, names: list):
    """`export(name, fn, doc)` for a module of public functions: names `fn`, gives it `doc`, wraps it at the
    API boundary and puts it in the module's `namespace` and `names` (its __all__)."""
    def export(name, fn, doc):
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = doc
        fn = api_boundary(fn)
        namespace[name] = fn
        names.append(name)
        return fn

    return export
