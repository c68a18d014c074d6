"""The one lock around LLVM's global context, which is not thread-safe.

The compiler (poot/jit/llvm: lowerings built, modules parsed, optimized and emitted) and the CPU device
(engines created and disposed, which adds and deletes modules in that context) both take it. It lives
here, below both, so that the device layer need not import the compiler's."""
from __future__ import annotations

import threading

LLVM_LOCK = threading.RLock()

__all__ = ["LLVM_LOCK"]
