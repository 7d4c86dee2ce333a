"""Integer ALU semantics: arithmetic, logic, compare, shifts, counts, mask ops (spec 4.1–4.4).

Every operation is written once as a pure function over unsigned W-bit ints
``fn(a, b, w)`` (results may be unmasked; the writer truncates them) and turned into
a semantic function by :func:`_binary`, :func:`_immediate` or :func:`_unary`.  Those
wrappers take a scalar fast path when no specifier has the T bit, because scalar
code is the common case and the emulator's inner loop pays for every call; vector
forms go through :mod:`.lanes` (broadcast, element width from Sz, merge masking).

Integer operations never trap (spec 4.0: no overflow/carry flags, no arithmetic
exceptions), so there is no precise-exception ordering to respect here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tessera_phoenix.semantics import op
from tessera_phoenix.semantics.lanes import (
    T_BIT,
    elementwise,
    elementwise_imm,
    imm_elements,
    read_elements,
    select_relation,
    sz_of,
    to_signed,
    width,
    write_relations,
)

MASK32 = 0xFFFF_FFFF
Fn = Callable[..., int]


# ---------------------------------------------------------------------------- wrappers


def _binary(fn: Fn) -> Callable[[Any, Any], None]:
    """``Rt = fn(Ra, Rb)``: R2 register/register form."""

    def run(thread: Any, ins: Any) -> None:
        if (ins.rt | ins.ra | ins.rb) & T_BIT:
            elementwise(thread, ins, fn, (ins.ra, ins.rb))
            return
        pc = ins.address
        thread.wr(ins.rt, fn(thread.rd(ins.ra, pc), thread.rd(ins.rb, pc), 32))

    run.__doc__ = fn.__doc__
    return run


def _immediate(fn: Fn) -> Callable[[Any, Any], None]:
    """``Rt = fn(Ra, imm)``: RI form; the immediate (with postfixes) is ``ins.value``."""

    def run(thread: Any, ins: Any) -> None:
        if (ins.rt | ins.ra) & T_BIT:
            elementwise_imm(thread, ins, fn, ins.ra, ins.value)
            return
        thread.wr(ins.rt, fn(thread.rd(ins.ra, ins.address), ins.value & MASK32, 32))

    run.__doc__ = fn.__doc__
    return run


def _unary(fn: Fn) -> Callable[[Any, Any], None]:
    """``Rt = fn(Ra)``: R1 form (bits 26:20 hold the function, not a register)."""

    def run(thread: Any, ins: Any) -> None:
        if (ins.rt | ins.ra) & T_BIT:
            elementwise(thread, ins, fn, (ins.ra,))
            return
        thread.wr(ins.rt, fn(thread.rd(ins.ra, ins.address), 32))

    run.__doc__ = fn.__doc__
    return run


def _register(name: str, run: Callable[[Any, Any], None]) -> None:
    """Register a generated semantic function under ``name`` (and name it for tracebacks)."""
    run.__name__ = run.__qualname__ = name
    op(name)(run)


# ---------------------------------------------------------------------------- 4.1 arithmetic, logic

def _add(a: int, b: int, w: int) -> int:
    return a + b


def _sub(a: int, b: int, w: int) -> int:
    return a - b


def _subf(a: int, b: int, w: int) -> int:
    """SUBFI: the immediate minus the register (subtract *from*)."""
    return b - a


def _mul(a: int, b: int, w: int) -> int:
    """Low W bits of the product: identical for signed and unsigned operands."""
    return a * b


def _and(a: int, b: int, w: int) -> int:
    return a & b


def _or(a: int, b: int, w: int) -> int:
    return a | b


def _xor(a: int, b: int, w: int) -> int:
    return a ^ b


def _andc(a: int, b: int, w: int) -> int:
    return a & ~b


def _nand(a: int, b: int, w: int) -> int:
    return ~(a & b)


def _nor(a: int, b: int, w: int) -> int:
    return ~(a | b)


def _xnor(a: int, b: int, w: int) -> int:
    return ~(a ^ b)


def _orc(a: int, b: int, w: int) -> int:
    return a | ~b


_fn: Fn  # each loop below binds a different shape of operation
for _name, _fn in (("add", _add), ("sub", _sub), ("mul", _mul), ("and", _and), ("or", _or),
                   ("xor", _xor), ("andc", _andc), ("nand", _nand), ("nor", _nor),
                   ("xnor", _xnor), ("orc", _orc)):
    _register(_name, _binary(_fn))

for _name, _fn in (("addi", _add), ("subfi", _subf), ("muli", _mul), ("andi", _and),
                   ("ori", _or), ("xori", _xor)):
    _register(_name, _immediate(_fn))


@op("nop")
def nop(thread: Any, ins: Any) -> None:
    """NOP (opcode 11): any bits 47:6; also what a 0x0B alignment fill decodes to."""
    return None


# ---------------------------------------------------------------------------- 4.2 compare

#: bit numbers of the integer relation vector (spec 3.4); 3, 4, 7, 11, 12 stay 0
EQ, LT, LE, LTU, LEU, NE, GE, GT, GEU, GTU = 0, 1, 2, 5, 6, 8, 9, 10, 13, 14


def relations(a: int, b: int, w: int) -> int:
    """The relation bit vector of two unsigned W-bit values (signed relations use 2's complement)."""
    eq = a == b
    lt = to_signed(a, w) < to_signed(b, w)
    ltu = a < b
    return (eq << EQ | lt << LT | (lt or eq) << LE | ltu << LTU | (ltu or eq) << LEU
            | (not eq) << NE | (not lt) << GE | (not lt and not eq) << GT
            | (not ltu) << GEU | (not ltu and not eq) << GTU)


def _compare(thread: Any, ins: Any, n: int, a_spec: int, b_spec: int | None, imm: int) -> None:
    """CMP / CMPI: ``b_spec`` None means the second operand is the immediate ``imm``.

    Vector sources or destination: relations at the element width from Sz, written
    by :func:`~.lanes.write_relations` (per element, or packed into a scalar Rt).
    """
    pc = ins.address
    b_vec = b_spec is not None and b_spec & T_BIT
    if not (ins.rt & T_BIT or a_spec & T_BIT or b_vec):
        b = thread.rd(b_spec, pc) if b_spec is not None else imm & MASK32
        thread.wr(ins.rt, select_relation(relations(thread.rd(a_spec, pc), b, 32), n))
        return
    w = width(sz_of(ins))
    col_a = read_elements(thread, a_spec, pc, w)
    col_b = (read_elements(thread, b_spec, pc, w) if b_spec is not None
             else imm_elements(thread, imm, w))
    write_relations(thread, ins, [relations(x, y, w) for x, y in zip(col_a, col_b)], n, w, pc)


@op("cmp")
def cmp(thread: Any, ins: Any) -> None:
    """CMP (op 15): N in bits 30:27."""
    _compare(thread, ins, (ins.word >> 27) & 15, ins.ra, ins.rb, 0)


@op("cmpi")
def cmpi(thread: Any, ins: Any) -> None:
    """CMPI (op 14): N in bits 36:33, Imm13 (+ postfix) in ``ins.value``."""
    _compare(thread, ins, (ins.word >> 33) & 15, ins.ra, None, ins.value)


# ---------------------------------------------------------------------------- 4.3 shifts


def shift_left(a: int, n: int, w: int, fill: int) -> int:
    """``a << n`` at W bits, vacated low bits = ``fill``; n >= W gives all fill bits."""
    mask = (1 << w) - 1
    if n >= w:
        return mask if fill else 0
    r = (a << n) & mask
    return r | ((1 << n) - 1) if fill else r


def shift_right(a: int, n: int, w: int, fill: int) -> int:
    """Logical ``a >> n`` at W bits, vacated high bits = ``fill``; n >= W gives all fill bits."""
    mask = (1 << w) - 1
    if n >= w:
        return mask if fill else 0
    r = a >> n
    return r | (mask ^ (mask >> n)) if fill else r


def shift_arith(a: int, n: int, w: int) -> int:
    """Arithmetic right shift at W bits; n >= W gives all sign bits (Python's >> saturates)."""
    return to_signed(a, w) >> n


def _fill(ins: Any) -> int:
    """The F bit (bit 33) of SLL/SRL/SLLI/SRLI."""
    return (ins.word >> 33) & 1


def _shift_reg(thread: Any, ins: Any, fn: Fn) -> None:
    """Shift by register: n = Rb & 63 (per element for a vector Rb)."""
    if (ins.rt | ins.ra | ins.rb) & T_BIT:
        elementwise(thread, ins, lambda a, b, w: fn(a, b & 63, w), (ins.ra, ins.rb))
        return
    pc = ins.address
    thread.wr(ins.rt, fn(thread.rd(ins.ra, pc), thread.rd(ins.rb, pc) & 63, 32))


def _shift_imm(thread: Any, ins: Any, fn: Fn) -> None:
    """Shift by the 6-bit count in bits 25:20 (the Rb slot, Tb = 0)."""
    n = (ins.word >> 20) & 63
    if (ins.rt | ins.ra) & T_BIT:
        elementwise(thread, ins, lambda a, w: fn(a, n, w), (ins.ra,))
        return
    thread.wr(ins.rt, fn(thread.rd(ins.ra, ins.address), n, 32))


def _shift(count: Callable[[Any, Any, Fn], None], fn: Fn, has_fill: bool) -> Callable[[Any, Any], None]:
    """A shift instruction: ``count`` picks where n comes from; F (bit 33) for SLL/SRL forms."""

    def run(thread: Any, ins: Any) -> None:
        if has_fill:
            f = _fill(ins)
            count(thread, ins, lambda a, n, w: fn(a, n, w, f))
        else:
            count(thread, ins, fn)

    run.__doc__ = fn.__doc__
    return run


for _name, _count, _fn, _has_fill in (
        ("sll", _shift_reg, shift_left, True), ("srl", _shift_reg, shift_right, True),
        ("sra", _shift_reg, shift_arith, False), ("slli", _shift_imm, shift_left, True),
        ("srli", _shift_imm, shift_right, True), ("srai", _shift_imm, shift_arith, False)):
    _register(_name, _shift(_count, _fn, _has_fill))


# ---------------------------------------------------------------------------- 4.4 counts, mask ops


def _cntlz(a: int, w: int) -> int:
    """Leading zeros at W bits (W for a zero input)."""
    return w - a.bit_length()


def _cntpop(a: int, w: int) -> int:
    return a.bit_count()


def _sextb(a: int, w: int) -> int:
    return to_signed(a & 0xFF, 8)


def _sextw(a: int, w: int) -> int:
    return to_signed(a & 0xFFFF, 16)


def _mcmprss(a: int, w: int) -> int:
    """Every set bit moved to the low end: 2^popcount - 1 (0x130 → 0x7)."""
    return (1 << a.bit_count()) - 1


for _name, _fn in (("cntlz", _cntlz), ("cntpop", _cntpop), ("sextb", _sextb),
                   ("sextw", _sextw), ("mcmprss", _mcmprss)):
    _register(_name, _unary(_fn))
del _name, _fn, _count, _has_fill


def remask_value(a: int, w: int, expand: bool, amt: int) -> int:
    """REMASK at width W: widen (E = 1) or narrow (E = 0) a mask by ``amt`` bits per bit.

    Expand copies bit i of ``a`` to bits [i*amt, i*amt + amt); contract takes bit
    i*amt as bit i.  Only amt 1, 2, 4 are defined; any other amount copies ``a``.
    """
    if amt not in (1, 2, 4):
        return a
    out = 0
    if expand:
        ones = (1 << amt) - 1
        for i in range(min(w, a.bit_length())):
            if (a >> i) & 1:
                out |= ones << (i * amt)
        return out & ((1 << w) - 1)
    for i in range(w // amt):
        out |= ((a >> (i * amt)) & 1) << i
    return out


@op("remask")
def remask(thread: Any, ins: Any) -> None:
    """REMASK: E = bit 25, Amt = bits 24:20 (the Rb slot, Tb = 0)."""
    expand = bool((ins.word >> 25) & 1)
    amt = (ins.word >> 20) & 31
    if (ins.rt | ins.ra) & T_BIT:
        elementwise(thread, ins, lambda a, w: remask_value(a, w, expand, amt), (ins.ra,))
        return
    thread.wr(ins.rt, remask_value(thread.rd(ins.ra, ins.address), 32, expand, amt))
