"""Floating-point operands: which IEEE format an instruction uses and how scalars mix in.

Why a module of its own: the integer lane helpers (:mod:`lanes`) move bit patterns,
which is right for integers but wrong for floats whenever a 32-bit scalar register
meets a 64/128-bit element.  The rules here (spec 1.3 and 4.6, our PROPOSALs):

* scalar-only instruction: binary16 for Sz = 1 (the low 16 bits of the register,
  result zero-extended), otherwise binary32 — registers are 32 bits, so Sz 3/4 on a
  scalar operation is binary32 too;
* vector instruction: element width W from Sz (16/32/64/128 → binary16/32/64/128;
  Sz 0 and 5..7 act as 32);
* a scalar float source of a W = 64/128 vector operation holds a binary32 value and
  is converted exactly to the element format (sign-extending the bit pattern, the
  integer rule, would turn 1.0 into a subnormal); for W = 16 its low 16 bits are
  the binary16 operand, as for scalar Sz = 1;
* a scalar float destination of a W = 64/128 operation receives element 0 rounded
  to binary32 with the instruction's rounding mode;
* integer operands (ITOF source, FTOI/FCLASS/FFINITE results) follow the integer
  lane rules unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tessera_phoenix.semantics import lanes
from tessera_phoenix.semantics.lanes import MASK32, T_BIT
from tessera_phoenix.semantics.softfloat import F16, F32, FORMATS, RNE, RTZ, Format, convert


def rounding(ins: Any) -> int:
    """RM (bits 36:34): 1 = toward zero; 0 and the reserved codes 2..7 = nearest even."""
    return RTZ if (ins.word >> 34) & 7 == 1 else RNE


def scalar_format(ins: Any) -> Format:
    return F16 if lanes.sz_of(ins) == 1 else F32


def vector_format(ins: Any) -> Format:
    return FORMATS[lanes.width(lanes.sz_of(ins))]


def read_floats(thread: Any, spec: int, pc: int, f: Format) -> list[int]:
    """Source ``spec`` as E elements of format ``f`` (a scalar is broadcast)."""
    if spec & T_BIT or f.width <= 32:
        return lanes.read_elements(thread, spec, pc, f.width)
    value = convert(F32, f, thread.rd(spec & 63, pc), RNE)  # exact widening
    return [value] * lanes.count(thread, f.width)


def write_result(thread: Any, ins: Any, results: Sequence[int], f: Format, is_float: bool) -> None:
    """Write a vector op's E results: masked vector, or element 0 to a scalar."""
    if ins.rt & T_BIT:
        lanes.write_elements(thread, ins.rt, results, f.width, lanes.mask_of(ins), ins.address)
        return
    value = results[0]
    if is_float and f.width > 32:
        value = convert(f, F32, value, rounding(ins))
    thread.wr(ins.rt & 63, value & MASK32)


def apply(thread: Any, ins: Any, fn: Callable[..., int], sources: Sequence[int], *,
          src_float: bool = True, dst_float: bool = True) -> None:
    """Run ``fn(f, iw, *operands)`` per element and write Rt.

    ``f`` is the float format and ``iw`` the integer width of the operation (32 for
    scalar instructions, W for vector ones); operands are unsigned bit patterns.
    """
    pc = ins.address
    if not lanes.any_vector(ins.rt, *sources):
        f = scalar_format(ins)
        keep = f.mask if src_float else MASK32
        args = [thread.rd(s & 63, pc) & keep for s in sources]
        thread.wr(ins.rt & 63, fn(f, 32, *args) & MASK32)
        return
    f = vector_format(ins)
    if src_float:
        cols = [read_floats(thread, s, pc, f) for s in sources]
    else:
        cols = [lanes.read_elements(thread, s, pc, f.width) for s in sources]
    results = [fn(f, f.width, *vals) for vals in zip(*cols)]
    write_result(thread, ins, results, f, dst_float)
