"""The special-function unit's functions (TALU unary 0x08-0x15), evaluated in float64.

tile.md 5.7: "SFU ops are computed in fp32 and then rounded to the format".  The model: the
input is first converted to fp32 (exact for every float format but fp32 itself; int32 inputs
round to nearest even), the function is evaluated with numpy in float64, the float64 result is
rounded to fp32 (round-to-nearest-even, the SFU's own rounding) and that fp32 value is rounded to
the format with the ``trm`` mode.  numpy's float64 functions are within an ulp or two of the
true value, so the fp32 result is the correctly rounded one except in rare near-tie cases.

This module only evaluates and reports the IEEE exceptions of the function itself: NV for a
domain error (log/sqrt/rsqrt of a negative number, sin/cos of an infinity), DZ for a pole
(log/log2 of +-0, rcp and rsqrt of +-0), OF+NX when a finite input overflows float64 already
(exp, exp2 of large inputs).  NaN in gives NaN out without a flag here (the caller adds NV for
signalling NaNs).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from .formats import DZ, NV, NX, OF

F64 = npt.NDArray[np.float64]
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_erf = np.frompyfunc(math.erf, 1, 1)


def _sigmoid(x: F64) -> F64:
    return 1.0 / (1.0 + np.exp(-x))


def _gelu(x: F64) -> F64:
    y = 0.5 * x * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
    return np.where(np.isinf(x), np.where(x > 0, x, -0.0), y)


def _silu(x: F64) -> F64:
    return np.where(np.isinf(x), np.where(x > 0, x, -0.0), x * _sigmoid(x))


def _rsqrt(x: F64) -> F64:
    return np.where(x == 0, np.copysign(np.inf, x), 1.0 / np.sqrt(x))


def _erf_vec(x: F64) -> F64:
    return np.asarray(_erf(x), dtype=np.float64)


FUNCTIONS: dict[str, Callable[[F64], F64]] = {
    "exp": np.exp,
    "exp2": np.exp2,
    "log": np.log,
    "log2": np.log2,
    "rcp": lambda x: 1.0 / x,
    "sqrt": np.sqrt,
    "rsqrt": _rsqrt,
    "tanh": np.tanh,
    "sigmoid": _sigmoid,
    "gelu": _gelu,
    "silu": _silu,
    "sin": np.sin,
    "cos": np.cos,
    "erf": _erf_vec,
}


def evaluate(name: str, x: F64) -> tuple[F64, npt.NDArray[np.uint8]]:
    """``(f(x), per-element NV/DZ flags)`` for one SFU function name of :data:`FUNCTIONS`."""
    with np.errstate(all="ignore"):
        y = FUNCTIONS[name](x)
    flags = np.zeros(x.shape, np.uint8)
    if name in ("log", "log2"):
        flags |= np.where(x < 0, NV, np.where(x == 0, DZ, 0)).astype(np.uint8)
    elif name == "sqrt":
        flags |= np.where(x < 0, NV, 0).astype(np.uint8)
    elif name == "rsqrt":
        flags |= np.where(x < 0, NV, np.where(x == 0, DZ, 0)).astype(np.uint8)
    elif name == "rcp":
        flags |= np.where(x == 0, DZ, 0).astype(np.uint8)
    elif name in ("sin", "cos"):
        flags |= np.where(np.isinf(x), NV, 0).astype(np.uint8)
    y = np.asarray(y, dtype=np.float64)
    # a finite input whose result overflowed float64 itself (exp, exp2 of large x) overflows fp32
    flags |= np.where(np.isfinite(x) & np.isinf(y) & (flags & DZ == 0), OF | NX, 0).astype(np.uint8)
    return y, flags
