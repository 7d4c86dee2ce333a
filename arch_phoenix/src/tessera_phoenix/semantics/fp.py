"""Floating-point instructions: FADD..FNMS, sign ops, class/convert, estimates, FCMP, FBcc.

Spec 4.6, 4.2 (FCMP/FCMPI) and 4.7 (FBcc).  The arithmetic itself is in
:mod:`softfloat` (exact, one rounding); operand formats and scalar/vector mixing in
:mod:`fpregs`.  No instruction here raises an FP exception or sets a flag: the spec
defines causes 225..231 but no enable or status register, so there is nothing a
program could observe (spec 4.6 [UNDEF]).

Conversions: ITOF truncates (the HDL hard-wires rm = 1) unless the ``itof_use_rm``
setting asks it to honour RM like the arithmetic; FTOI rounds to nearest even, or
toward zero when RM = 1, and saturates (NaN → largest integer).
"""

from __future__ import annotations

from typing import Any

from tessera_phoenix import exceptions
from tessera_phoenix.semantics import op
from tessera_phoenix.semantics import softfloat as sf
from tessera_phoenix.semantics.fpregs import (
    apply,
    read_floats,
    rounding,
    scalar_format,
    vector_format,
)
from tessera_phoenix.semantics.lanes import MASK32, T_BIT, select_relation, to_signed, write_relations

# ---------------------------------------------------------------------------- arithmetic

@op("fadd")
def fadd(thread: Any, ins: Any) -> None:
    """FADD (R2 f36): Rt = Ra + Rb, rounded per RM."""
    rm = rounding(ins)
    apply(thread, ins, lambda f, iw, a, b: sf.add(f, a, b, rm), (ins.ra, ins.rb))


@op("fsub")
def fsub(thread: Any, ins: Any) -> None:
    """FSUB (R2 f37): Rt = Ra - Rb (Rb's sign flipped, so NaN handling matches FADD)."""
    rm = rounding(ins)
    apply(thread, ins, lambda f, iw, a, b: sf.add(f, a, sf.negate(f, b), rm), (ins.ra, ins.rb))


def _fma_family(neg_product: bool, neg_addend: bool) -> Any:
    def run(thread: Any, ins: Any) -> None:
        rm = rounding(ins)
        apply(thread, ins,
              lambda f, iw, a, b, c: sf.fma(f, a, b, c, rm, neg_product, neg_addend),
              (ins.ra, ins.rb, ins.rc))
    return run


fma = op("fma")(_fma_family(False, False))      # Rt = Ra*Rb + Rc   (FMUL = FMA Rt,Ra,Rb,r0)
fms = op("fms")(_fma_family(False, True))       # Rt = Ra*Rb - Rc
fnma = op("fnma")(_fma_family(True, False))     # Rt = -(Ra*Rb) + Rc
fnms = op("fnms")(_fma_family(True, True))      # Rt = -(Ra*Rb) - Rc


# ---------------------------------------------------------------------------- sign and class

def _unary(fn: Any, *, src_float: bool = True, dst_float: bool = True) -> Any:
    def run(thread: Any, ins: Any) -> None:
        apply(thread, ins, fn, (ins.ra,), src_float=src_float, dst_float=dst_float)
    return run


op("fneg")(_unary(lambda f, iw, a: (a ^ f.sign) & f.mask))
op("fabs")(_unary(lambda f, iw, a: a & ~f.sign & f.mask))
op("fnabs")(_unary(lambda f, iw, a: (a | f.sign) & f.mask))
op("fsign")(_unary(lambda f, iw, a: sf.fsign(f, a)))
op("ffinite")(_unary(lambda f, iw, a: sf.finite(f, a), dst_float=False))
op("fclass")(_unary(lambda f, iw, a: sf.classify(f, a, iw), dst_float=False))
op("ftrunc")(_unary(lambda f, iw, a: sf.trunc(f, a)))
op("fres")(_unary(lambda f, iw, a: sf.recip(f, a)))
op("frsqrte")(_unary(lambda f, iw, a: sf.rsqrt(f, a)))
op("fsigmoid")(_unary(lambda f, iw, a: sf.sigmoid(f, a)))


@op("itof")
def itof(thread: Any, ins: Any) -> None:
    """ITOF (R1 40): signed integer (32-bit scalar, W-bit element) -> float."""
    rm = rounding(ins) if thread.shared.config.itof_use_rm else sf.RTZ
    apply(thread, ins, lambda f, iw, a: sf.from_int(f, to_signed(a, iw), rm), (ins.ra,),
          src_float=False)


@op("ftoi")
def ftoi(thread: Any, ins: Any) -> None:
    """FTOI (R1 41): float -> signed integer of the operation width, saturating."""
    rm = rounding(ins)
    apply(thread, ins, lambda f, iw, a: sf.to_int(f, a, iw, rm), (ins.ra,), dst_float=False)


@op("fman")
def fman(thread: Any, ins: Any) -> None:
    """FMAN (R1 45): named in the opcode table only, no semantics anywhere -> UNIMP."""
    raise exceptions.undefined(ins)


# ---------------------------------------------------------------------------- compare

def _fcompare(thread: Any, ins: Any, n: int, b_spec: int | None, imm: int) -> None:
    """FCMP / FCMPI; ``b_spec`` None = compare with the immediate bit pattern ``imm``.

    Result layout as integer CMP (:func:`~.lanes.write_relations`).  The immediate is
    the low W bits of the full immediate (a binary32 pattern normally needs a
    postfix; binary64 elements take the 64-bit immediate one postfix gives).
    """
    pc = ins.address
    b_vec = b_spec is not None and b_spec & T_BIT
    if not (ins.rt & T_BIT or ins.ra & T_BIT or b_vec):
        f = scalar_format(ins)
        a = thread.rd(ins.ra & 63, pc) & f.mask
        b = thread.rd(b_spec & 63, pc) & f.mask if b_spec is not None else imm & f.mask
        thread.wr(ins.rt & 63, select_relation(sf.compare(f, a, b), n))
        return
    f = vector_format(ins)
    col_a = read_floats(thread, ins.ra, pc, f)
    col_b = (read_floats(thread, b_spec, pc, f) if b_spec is not None
             else [imm & f.mask] * len(col_a))
    write_relations(thread, ins, [sf.compare(f, x, y) for x, y in zip(col_a, col_b)], n, f.width, pc)


@op("fcmp")
def fcmp(thread: Any, ins: Any) -> None:
    """FCMP (op 31): N in bits 30:27."""
    _fcompare(thread, ins, (ins.word >> 27) & 15, ins.rb, 0)


@op("fcmpi")
def fcmpi(thread: Any, ins: Any) -> None:
    """FCMPI (op 30): N in bits 36:33; ``ins.value`` is the float bit pattern."""
    _fcompare(thread, ins, (ins.word >> 33) & 15, None, ins.value)


# ---------------------------------------------------------------------------- branch

#: FBcc condition (bits 47:45) -> relation bit; 4 and 5 are reserved
FBCC_RELATION = {0: sf.LT, 1: sf.GE, 2: sf.LE, 3: sf.GT, 6: sf.EQ, 7: sf.NE_UN}
#: Ta (bit 19) and Tb (bit 12) of the branch format must be 0
_VECTOR_BITS = (1 << 19) | (1 << 12)


@op("fbcc")
def fbcc(thread: Any, ins: Any) -> int | None:
    """FBcc (op 29): compare scalar Ra, Rb as binary32 (Sz 1: binary16); NaN: only FBNE taken."""
    word = ins.word
    relation = FBCC_RELATION.get((word >> 45) & 7)
    if relation is None or word & _VECTOR_BITS:
        raise exceptions.undefined(ins)
    pc = ins.address
    f = scalar_format(ins)
    a = thread.rd(ins.bra & 63, pc) & f.mask
    b = thread.rd(ins.brb & 63, pc) & f.mask
    if (sf.compare(f, a, b) >> relation) & 1:
        return (pc + ins.value) & MASK32
    return None
