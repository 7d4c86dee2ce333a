"""Atomic read-modify-write arithmetic on element arrays (tile.md 5.2, G9).

``apply(name, old, operand, bits)`` returns the new memory values for arrays of raw
unsigned element bits.  Integer ops wrap at the element width; MIN/MAX compare signed,
MINU/MAXU unsigned; INC/DEC wrap as PTX's ``atom.inc``/``atom.dec`` do
(``inc``: old >= operand ? 0 : old + 1; ``dec``: old == 0 or old > operand ? operand :
old - 1).  FADD/FMIN/FMAX treat the bits as IEEE fp16/fp32/fp64 by width: one
round-to-nearest-even addition, and RISC-V ``fmin``/``fmax`` NaN rules (a NaN operand
yields the other; two NaNs the canonical NaN).
"""

from __future__ import annotations

from typing import Any

import numpy as np

_UINT: dict[int, Any] = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_INT: dict[int, Any] = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_FLOAT: dict[int, Any] = {16: np.float16, 32: np.float32, 64: np.float64}
_CANONICAL_NAN = {16: 0x7E00, 32: 0x7FC0_0000, 64: 0x7FF8_0000_0000_0000}
FLOAT_OPS = frozenset({"fadd", "fmin", "fmax"})


def apply(name: str, old: np.ndarray, operand: np.ndarray, bits: int) -> np.ndarray:
    """New values for ``old`` combined with ``operand`` (both unsigned ``bits``-bit arrays)."""
    u = _UINT[bits]
    old = old.astype(u)
    operand = operand.astype(u)
    with np.errstate(over="ignore", invalid="ignore"):
        if name == "add":
            return (old + operand).astype(u)
        if name == "swap":
            return operand.copy()
        if name == "xor":
            return old ^ operand
        if name == "or":
            return old | operand
        if name == "and":
            return old & operand
        if name in ("min", "max"):
            so, sv = old.view(_INT[bits]), operand.view(_INT[bits])
            pick = np.minimum(so, sv) if name == "min" else np.maximum(so, sv)
            return pick.view(u)
        if name == "minu":
            return np.minimum(old, operand)
        if name == "maxu":
            return np.maximum(old, operand)
        if name == "inc":
            return np.where(old >= operand, u(0), old + u(1)).astype(u)
        if name == "dec":
            return np.where((old == 0) | (old > operand), operand, old - u(1)).astype(u)
        if name in FLOAT_OPS:
            return _float(name, old, operand, bits)
    raise ValueError(f"unknown atomic operation {name!r}")


def _float(name: str, old: np.ndarray, operand: np.ndarray, bits: int) -> np.ndarray:
    u, f = _UINT[bits], _FLOAT[bits]
    a, b = old.view(f), operand.view(f)
    if name == "fadd":
        return (a + b).astype(f).view(u)
    an, bn = np.isnan(a), np.isnan(b)
    pick = np.minimum(a, b) if name == "fmin" else np.maximum(a, b)
    # -0.0 orders below +0.0 (RISC-V fmin/fmax)
    zero = (a == 0) & (b == 0)
    if zero.any():
        neg_a, neg_b = np.signbit(a), np.signbit(b)
        either = neg_a | neg_b if name == "fmin" else neg_a & neg_b
        pick = np.where(zero, np.where(either, f(-0.0), f(0.0)), pick)
    out = np.where(an & ~bn, b, np.where(bn & ~an, a, pick)).astype(f).view(u)
    return np.where(an & bn, u(_CANONICAL_NAN[bits]), out).astype(u)
