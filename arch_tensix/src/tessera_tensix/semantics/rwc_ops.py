"""SETRWC and INCRWC: set or advance the issuing thread's register-window counters.

Functional models of the Wormhole B0 pages ``SETRWC.md`` and ``INCRWC.md`` (Blackhole
shares them: spec tensix.md §1.1, §5.2 — the same fields at the same bits on both chips).
The counters are ``thread.rwc`` (see :mod:`tessera_tensix.addressing`): Dst and Dst_Cr are
10 bits, SrcA/SrcB and their _Cr 6 bits, the fidelity phase 2 bits; every update wraps.

SETRWC's FlipSrcA / FlipSrcB bits (``clear_ab_vld``, the LLK's CLR_A / CLR_B) hand the
matrix unit's SrcA / SrcB bank back to the unpackers, unless
``ThreadConfig.CLR_DVALID_Src?_Disable``, and move the matrix unit to the other bank
(:func:`tessera_tensix.matrixbanks.flip_matrix_banks`, shared with MVMUL and ELW*);
threads parked on the bank are woken.

Blackhole's assembly.yaml describes SETRWC bit 4 as setting the vector unit's Sp counter
from the three value fields; no ISA page documents it and ttsim's table leaves bits 5:4
reserved, so a word setting it breaks "reserved bits must be zero" (lenient: the bit is
ignored).  SETIBRWC has no page and stays unsupported.
"""

from __future__ import annotations

from typing import Any

from tessera_tensix import matrixbanks as mb
from tessera_tensix.addressing import DST_MASK, SRC_MASK
from tessera_tensix.semantics import op


@op("SETRWC")
def setrwc(thread: Any, ins: Any) -> None:
    """BitMask [3:0] = Fidelity, Dst, SrcB, SrcA; rwc_cr [21:18] = DstCtoCr, DstCr, SrcBCr,
    SrcACr; values [17:14] Dst, [13:10] SrcB, [9:6] SrcA; flips [23:22] = SrcB, SrcA."""
    rwc = thread.rwc
    mask, cr = ins.bit_mask, ins.rwc_cr_21_18
    if mask & 1:
        value = ins.rwc_a + (rwc["srca_cr"] if cr & 1 else 0)
        rwc["srca"] = rwc["srca_cr"] = value & SRC_MASK
    if mask & 2:
        value = ins.rwc_b + (rwc["srcb_cr"] if cr & 2 else 0)
        rwc["srcb"] = rwc["srcb_cr"] = value & SRC_MASK
    if mask & 4 or cr & 8:
        value = ins.rwc_d
        if cr & 8:
            value += rwc["dst"]
        elif cr & 4:
            value += rwc["dst_cr"]
        rwc["dst"] = rwc["dst_cr"] = value & DST_MASK
    if mask & 8:
        rwc["fidelity"] = 0
    flips = ins.clear_ab_vld
    if flips:
        mb.flip_matrix_banks(thread, bool(flips & 1), bool(flips & 2))


@op("INCRWC")
def incrwc(thread: Any, ins: Any) -> None:
    """Add [9:6] to SrcA, [13:10] to SrcB, [17:14] to Dst; rwc_cr [20:18] (DstCr, SrcBCr,
    SrcACr) adds to the _Cr counter instead and copies it to the counter."""
    rwc = thread.rwc
    cr = ins.rwc_cr_20_18
    for key, inc, bit, mask in (("srca", ins.rwc_a, 1, SRC_MASK), ("srcb", ins.rwc_b, 2, SRC_MASK),
                                ("dst", ins.rwc_d, 4, DST_MASK)):
        if cr & bit:
            rwc[key + "_cr"] = rwc[key] = (rwc[key + "_cr"] + inc) & mask
        else:
            rwc[key] = (rwc[key] + inc) & mask
