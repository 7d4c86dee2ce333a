"""Vector data movement: VEX, VEINS, VSHUF, VSLLV(I), VSRLV(I), VCMPRSS (spec 4.5).

Elements move in units of the element width W from Sz (so VSLLVI by 2 at W = 32
moves 64 bits, as in the doc's example).  Vector destinations are merge-masked per
32-bit lane like every other instruction, except VCMPRSS, whose mask selects the
*sources* and which writes every lane of Vt.  A scalar destination receives element
0 (VEX: the selected element).  Scalar sources are broadcast, so e.g. VSHUF with a
scalar index register fills Vt with one element of Va.

Indices (VEX/VEINS Rb, VSHUF Vb elements) are unsigned and taken modulo E; shift
counts are unsigned, and a count >= E clears the vector.
"""

from __future__ import annotations

from typing import Any

from tessera_phoenix import exceptions
from tessera_phoenix.semantics import op
from tessera_phoenix.semantics.lanes import (
    MASK32,
    T_BIT,
    count,
    mask_of,
    read_elements,
    read_scalar,
    sz_of,
    width,
    write_elements,
)


def _geometry(thread: Any, ins: Any) -> tuple[int, int]:
    """(W, E) of this instruction."""
    w = width(sz_of(ins))
    return w, count(thread, w)


def _write(thread: Any, ins: Any, values: list[int], w: int) -> None:
    write_elements(thread, ins.rt, values, w, mask_of(ins), ins.address)


@op("vex")
def vex(thread: Any, ins: Any) -> None:
    """VEX / VMOVS (R2 f3): k = Rb mod E; scalar Rt = low 32 bits of Va[k], vector Vt = Va[k] everywhere."""
    pc = ins.address
    w, e = _geometry(thread, ins)
    k = read_scalar(thread, ins.rb, pc) % e
    value = read_elements(thread, ins.ra, pc, w)[k]
    if ins.rt & T_BIT:
        _write(thread, ins, [value] * e, w)
    else:
        thread.wr(ins.rt & 63, value & MASK32)


@op("veins")
def veins(thread: Any, ins: Any) -> None:
    """VEINS (R2 f0, PROPOSAL): Vt[Rb mod E] = Ra; the other elements keep their value.

    Only a vector destination makes sense; a scalar Rt is treated as an undefined
    encoding (UNIMP, or skipped when ``lenient``).
    """
    if not ins.rt & T_BIT:
        raise exceptions.undefined(ins)
    pc = ins.address
    w, e = _geometry(thread, ins)
    k = read_scalar(thread, ins.rb, pc) % e
    values = read_elements(thread, ins.rt, pc, w)
    values[k] = read_elements(thread, ins.ra, pc, w)[0]
    _write(thread, ins, values, w)


@op("vshuf")
def vshuf(thread: Any, ins: Any) -> None:
    """VSHUF (R2 f2): Vt[e] = Va[Vb[e] mod E]."""
    pc = ins.address
    w, e = _geometry(thread, ins)
    src = read_elements(thread, ins.ra, pc, w)
    idx = read_elements(thread, ins.rb, pc, w)
    _write(thread, ins, [src[i % e] for i in idx], w)


def _shift_up(thread: Any, ins: Any, n: int) -> None:
    """Vt[e] = Va[e - n] for e >= n, else 0 (toward higher-numbered elements)."""
    w, e = _geometry(thread, ins)
    src = read_elements(thread, ins.ra, ins.address, w)
    _write(thread, ins, [src[i - n] if i >= n else 0 for i in range(e)], w)


def _shift_down(thread: Any, ins: Any, n: int) -> None:
    """Vt[e] = Va[e + n] while e + n < E, else 0 (toward element 0)."""
    w, e = _geometry(thread, ins)
    src = read_elements(thread, ins.ra, ins.address, w)
    _write(thread, ins, [src[i + n] if i + n < e else 0 for i in range(e)], w)


def _imm_count(ins: Any) -> int:
    """VSLLVI/VSRLVI count: bits 25:20 (the Rb slot)."""
    return (ins.word >> 20) & 63


@op("vsllvi")
def vsllvi(thread: Any, ins: Any) -> None:
    """VSLLVI (R2 f32): move elements up by n = bits 25:20."""
    _shift_up(thread, ins, _imm_count(ins))


@op("vsrlvi")
def vsrlvi(thread: Any, ins: Any) -> None:
    """VSRLVI (R2 f33): move elements down by n = bits 25:20."""
    _shift_down(thread, ins, _imm_count(ins))


@op("vsllv")
def vsllv(thread: Any, ins: Any) -> None:
    """VSLLV (R2 f34): n = Rb (scalar, or element 0 of a vector Rb), unsigned 32-bit."""
    _shift_up(thread, ins, read_scalar(thread, ins.rb, ins.address))


@op("vsrlv")
def vsrlv(thread: Any, ins: Any) -> None:
    """VSRLV (R2 f35): n = Rb (scalar, or element 0 of a vector Rb), unsigned 32-bit."""
    _shift_down(thread, ins, read_scalar(thread, ins.rb, ins.address))


@op("vcmprss")
def vcmprss(thread: Any, ins: Any) -> None:
    """VCMPRSS (R1 20, PROPOSAL): pack the elements of Va selected by the lane mask.

    Element e is selected when the mask bit of its lowest 32-bit lane is set (bit
    e*W/32), the same lane REMASK's contraction reads, so an element mask widened
    with REMASK selects exactly those elements.  Vt[0..k-1] = selected elements in
    order, Vt[k..E-1] = 0, and every lane of Vt is written (the mask chose the
    sources, not the destination lanes).  Mask r0 selects everything (a copy).
    """
    pc = ins.address
    w, e = _geometry(thread, ins)
    src = read_elements(thread, ins.ra, pc, w)
    lane_mask = thread.lane_mask(mask_of(ins), pc)
    picked = [v for i, v in enumerate(src) if (lane_mask >> (i * w // 32)) & 1]
    values = picked + [0] * (e - len(picked))
    write_elements(thread, ins.rt, values, w, 0, pc)
