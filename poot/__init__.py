"""poot: a Python tracing JIT with a lazy, NumPy-like array frontend."""
import sys as _sys

from poot._version import __version__
from poot import env as _env

_env.check()   # a POOT_* variable poot cannot use is reported now, not at the first realize or compile
from poot.dtypes import (DType, bfloat16, bool_, complex64, complex128, float16, float32, float64, int8,
                     int16, int32, int64, uint8, uint16, uint32, uint64)
from poot.errors import (APIVersionError, ArgumentAttributeError, ArgumentError, ArgumentKeyError,
                         ArgumentOverflowError, ArgumentValueError, ArgumentZeroDivisionError, AxisError, AxisNameError,
                         AxisTypeError,
                         CacheError, CompileLimitError, ConfigError, CopyError, DeviceError, DomainError,
                         DeviceUnavailableError, DTypeError, InternalError, KernelImportError, KernelIndexError,
                         KernelTrap, KIRError, LaunchError, LeakedTracerError, LoweringError, NotBuiltError, OutDTypeError,
                         OutError, OutOfMemoryError, OutShapeError, PootError, PootIndexError, RetraceWarning,
                         SamplingError, ScalarOverflowError, ShapeError, ShapeTypeError, TracerError)
from poot.errors import api_boundary as _api_boundary

# short names, the same objects (used in kernel annotations: pt.In[pt.f32])
f16, bf16, f32, f64 = float16, bfloat16, float32, float64
c64, c128 = complex64, complex128
i8, i16, i32, i64 = int8, int16, int32, int64
u8, u16, u32, u64 = uint8, uint16, uint32, uint64


def _cast_hook(value, dtype):
    """`pt.f32(x)` outside a kernel: a cast to a poot array."""
    return _trace_cast_to(value, dtype)


# the lazy Array and the NumPy-like API (poot/trace)
from poot.trace import *  # noqa: E402,F401,F403
from poot.trace import __all__ as _trace_all  # noqa: E402
from poot.trace import cast_to as _trace_cast_to  # noqa: E402
from poot.trace import jit as _trace_jit  # noqa: E402
from poot.trace.ufunc import Ufunc as ufunc  # noqa: E402  (the type of pt.add, pt.maximum...)
from poot.trace.gc_policy import raise_young_threshold as _raise_young_threshold  # noqa: E402

_raise_young_threshold()   # a lazy graph's nodes die young instead of feeding full collections

# the array API standard's linear algebra extension, and its name for the boolean dtype
from poot import linalg  # noqa: E402
from poot import lib, testing  # noqa: E402  (np.lib.stride_tricks, np.testing for poot arrays)
from poot import polynomial  # noqa: E402  (numpy.polynomial for poot arrays: poot/polynomial)
from poot.transforms.batching import vmap  # noqa: E402  (pt.vmap: poot/transforms)
from poot.transforms import (checkpoint, custom_jvp, custom_vjp, grad, hessian, jacfwd,  # noqa: E402
                             jacrev, jvp, linearize, remat, scan, stop_gradient, value_and_grad,
                             vjp)  # (poot/transforms)
jacobian = jacrev  # JAX's alias  # noqa: E305
from poot import tree_util  # noqa: E402  (JAX's pytree helpers, over poot's one pytree flattening)
from poot.tree_util import tree_map  # noqa: E402
from poot import tree  # noqa: E402  (jax.tree's short names: pt.tree.map, pt.tree.leaves...)
from poot import lax  # noqa: E402  (jax.lax's names over poot's functions)
from poot import scipy  # noqa: E402  (jax.scipy's special and stats over poot's functions: poot/scipy)
from poot.transforms.tracing import ArgumentWriteError  # noqa: E402  (a TracerError the docs name)
from poot.trace.kernel_call import kernel_call  # noqa: E402  (a @pt.kernel as a traced function)
bool = bool_  # noqa: A001

# @poot.kernel: Python kernels imported to KIR (poot/kernel); the array math functions above mean
# the KIR math ops inside a kernel body (recognised by identity)
from poot import kernel as _jit_kernel  # noqa: E402

globals().update({_n: getattr(_jit_kernel, _n) for _n in _jit_kernel.PUBLIC})
_jit_kernel.intrinsics.register_kernel_math(globals())


class _JitEntry:
    """`pt.jit` is the decorator (`poot.trace.jit.jit`); as the name shadows the `poot.jit`
    subpackage, its attributes are that package's (`pt.jit.kir`), and its `__name__` lets
    `import poot.jit.kir.builder as B` resolve through sys.modules."""

    __name__ = __qualname__ = "poot.jit"
    __doc__ = _trace_jit.__doc__

    def __call__(self, fn=None, **options):
        return _trace_jit(fn, **options)

    def __getattr__(self, name):
        return getattr(_sys.modules["poot.jit"], name)

    def __repr__(self) -> str:
        return "<poot.jit: the @pt.jit decorator (and the poot.jit subpackage's attributes)>"


jit = _JitEntry()


def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    from poot.trace.linalg import trace as fn

    if out is not None:
        from poot.errors import out_error

        raise out_error("trace", out, fn(a, offset, axis1, axis2, dtype))
    return fn(a, offset, axis1, axis2, dtype)


_trace.__name__ = "trace"
_trace_call = _api_boundary(_trace)      # a call that does not fit np.trace's signature names pt.trace


class _TraceEntry:
    """`pt.trace` is NumPy's `np.trace(a, offset, axis1, axis2, dtype)` (`poot.trace.linalg.trace`);
    as the name shadows the `poot.trace` subpackage (the tracing layer), its other attributes are that
    package's, so `import poot.trace.lazy as L` and `from poot.trace import lazy` keep working (Python
    binds `poot.trace` only when the subpackage is first imported, which happened above)."""

    __name__ = __qualname__ = "trace"
    __module__ = "poot"

    def __init__(self):
        from poot.trace.linalg import trace as _fn

        self._fn = self.__wrapped__ = _fn
        self.__doc__ = ("Sum along diagonals, as np.trace(a, offset=0, axis1=0, axis2=1, dtype=None) "
                        "(lazy). The tracing subpackage is still importable as `poot.trace`.")

    def __call__(self, *args, **kwargs):
        return _trace_call(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(_sys.modules["poot.trace"], name)

    def __dir__(self):
        return dir(_sys.modules["poot.trace"])

    def __repr__(self) -> str:
        return "<poot.trace: np.trace's sum along diagonals (and the poot.trace subpackage's attributes)>"


trace = _TraceEntry()
