"""Scalar/vector operand handling shared by every element-wise instruction (spec 1.3).

An instruction is a vector instruction when any of its register specifiers has the
T bit (bit 6 of the 7-bit specifier) set.  Element width W comes from Sz (1 → 16,
2 → 32, 3 → 64, 4 → 128; 0 and 5..7 → 32); a vector holds E = NLANES·32/W elements,
element 0 in the least significant bits.  A scalar source in a vector operation is
broadcast (truncated to W, or sign-extended when W > 32); a scalar destination of a
vector operation receives element 0.  Vector destinations are written with merge
masking per 32-bit lane: lane i takes the new bits only if bit i of the mask
register is set (r0 as mask = every lane).

Elements are Python ints (unsigned, W bits) so every width is exact; operations are
written once over ints and applied per element.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

T_BIT = 0x40
WIDTHS = {1: 16, 2: 32, 3: 64, 4: 128}
MASK32 = 0xFFFF_FFFF


def sz_of(ins: Any) -> int:
    """The Sz field (bits 41:39) of any form, straight from the word."""
    return (ins.word >> 39) & 7


def mask_of(ins: Any) -> int:
    """The Mask field (bits 47:42): the GPR holding the lane mask, 0 = unmasked."""
    return (ins.word >> 42) & 63


def width(sz: int) -> int:
    """Element width in bits for an Sz code (8-bit and reserved sizes act as 32)."""
    return WIDTHS.get(sz, 32)


def count(thread: Any, w: int) -> int:
    """Elements per vector register at width ``w``."""
    return max(1, thread.lanes * 32 // w)


def to_signed(value: int, w: int) -> int:
    value &= (1 << w) - 1
    return value - (1 << w) if value >> (w - 1) else value


def vector_bits(thread: Any, index: int) -> int:
    """The whole vector register ``index`` (0..63) as one integer, lane 0 lowest."""
    out = 0
    for i, lane in enumerate(thread.vr[index].tolist()):
        out |= int(lane) << (32 * i)
    return out


def read_elements(thread: Any, spec: int, pc: int, w: int) -> list[int]:
    """Source operand ``spec`` (7-bit) as E unsigned W-bit elements (scalars broadcast)."""
    e = count(thread, w)
    mask = (1 << w) - 1
    if spec & T_BIT:
        bits = vector_bits(thread, spec & 63)
        return [(bits >> (w * i)) & mask for i in range(e)]
    value = thread.rd(spec & 63, pc)
    if w > 32 and value >> 31:
        value |= mask ^ MASK32  # sign-extend the 32-bit register to the element width
    return [value & mask] * e


def read_scalar(thread: Any, spec: int, pc: int) -> int:
    """A source as a 32-bit scalar: the register, or element 0 (low 32 bits) of a vector."""
    if spec & T_BIT:
        return int(thread.vr[spec & 63][0])
    return thread.rd(spec & 63, pc)


def write_elements(thread: Any, spec: int, values: Sequence[int], w: int, mask_reg: int,
                   pc: int) -> None:
    """Write E elements to destination ``spec``: masked lanes of a vector, or element 0."""
    if not spec & T_BIT:
        thread.wr(spec & 63, values[0] & MASK32)
        return
    bits = 0
    elem_mask = (1 << w) - 1
    for i, v in enumerate(values):
        bits |= (int(v) & elem_mask) << (w * i)
    # lanes no element covers (NLANES not a multiple of W/32) keep their contents
    covered = (1 << -(-len(values) * w // 32)) - 1
    write_vector_bits(thread, spec & 63, bits, thread.lane_mask(mask_reg, pc) & covered)


def write_vector_bits(thread: Any, index: int, bits: int, lane_mask: int) -> None:
    """Merge ``bits`` into vector register ``index`` in the lanes ``lane_mask`` enables."""
    reg = thread.vr[index]
    for lane in range(thread.lanes):
        if lane_mask >> lane & 1:
            reg[lane] = (bits >> (32 * lane)) & MASK32


def elementwise(thread: Any, ins: Any, fn: Callable[..., int], sources: Sequence[int],
                w: int | None = None) -> None:
    """Apply ``fn(*element_values, w)`` per element and write ``ins.rt`` (masked).

    ``sources`` are 7-bit specifiers.  A scalar-only instruction computes once at
    32 bits (registers are 32 bits; Sz is ignored for scalar integer results).
    """
    pc = ins.address
    specs = (ins.rt, *sources)
    if not any(s & T_BIT for s in specs):
        args = [thread.rd(s & 63, pc) for s in sources]
        thread.wr(ins.rt & 63, fn(*args, 32))
        return
    w = w or width(sz_of(ins))
    cols = [read_elements(thread, s, pc, w) for s in sources]
    results = [fn(*vals, w) for vals in zip(*cols)]
    write_elements(thread, ins.rt, results, w, mask_of(ins), pc)


# ---------------------------------------------------------------------------- immediates
# (added by the integer semantics; generic, so FP/vector code may use them too)


def any_vector(*specs: int) -> bool:
    """Is any of the 7-bit specifiers a vector register (the instruction is a vector op)?"""
    return any(s & T_BIT for s in specs)


def imm_elements(thread: Any, value: int, w: int) -> list[int]:
    """An immediate broadcast to E elements of width ``w``.

    ``value`` is the complete sign-extended immediate (instruction field plus
    postfixes), so truncating it to W also sign-extends it when W > 32.
    """
    return [value & ((1 << w) - 1)] * count(thread, w)


def elementwise_imm(thread: Any, ins: Any, fn: Callable[..., int], source: int, imm: int,
                    w: int | None = None) -> None:
    """Like :func:`elementwise` for ``fn(a, imm, w)`` with one register and an immediate.

    Scalar-only: computed once at 32 bits with the immediate's low 32 bits.  Vector:
    the immediate is broadcast at the element width from Sz.
    """
    pc = ins.address
    if not (ins.rt | source) & T_BIT:
        thread.wr(ins.rt & 63, fn(thread.rd(source & 63, pc), imm & MASK32, 32))
        return
    w = w or width(sz_of(ins))
    col = read_elements(thread, source, pc, w)
    results = [fn(a, b, w) for a, b in zip(col, imm_elements(thread, imm, w))]
    write_elements(thread, ins.rt, results, w, mask_of(ins), pc)


# ---------------------------------------------------------------------------- compare results
# (CMP/CMPI and FCMP/FCMPI share the result layout, spec 4.2)

#: compare selector N = 15: the whole relation vector instead of one relation
FULL_RELATIONS = 15


def select_relation(rel: int, n: int) -> int:
    """N = 15: the whole relation vector; otherwise 1/0 for relation bit N (undefined bits read 0)."""
    return rel if n == FULL_RELATIONS else (rel >> n) & 1


def write_relations(thread: Any, ins: Any, rels: Sequence[int], n: int, w: int, pc: int) -> None:
    """Write per-element relation vectors ``rels`` of a compare with selector ``n``.

    Vector destination: every element gets its own result (merge-masked).  Scalar
    destination with vector sources: bit e of Rt = relation N of element e, so the
    result can serve as a lane mask directly (W = 32) or after REMASK.  With N = 15
    there is no single bit to pack; like the HDL we pack bit 0 (EQ).  The packed
    value is a scalar result, so the lane mask does not apply to it (spec 1.3), and
    elements beyond bit 31 (W = 16 with more than 16 lanes) are lost.
    """
    if ins.rt & T_BIT:
        write_elements(thread, ins.rt, [select_relation(r, n) for r in rels], w, mask_of(ins), pc)
        return
    bit = 0 if n == FULL_RELATIONS else n  # bit 0 is EQ for integers and floats
    packed = 0
    for e, r in enumerate(rels):
        packed |= ((r >> bit) & 1) << e
    thread.wr(ins.rt & 63, packed & MASK32)
