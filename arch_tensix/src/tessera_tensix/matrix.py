"""The matrix unit's (FPU's) arithmetic: Src operands as numbers, fidelity phases, Dst formats.

Numbers on whole blocks — no threads, no banks: :mod:`tessera_tensix.semantics.matrix_ops`
picks the rows, bank and formats, and calls one compiled kernel per instruction
(:func:`matmul_kernel` for MVMUL/DOTPV/GAPOOL, :func:`elementwise_kernel` for ELW*; numba,
as the vector unit's hot paths are) or the numpy :func:`gmpool`.  Sources: WormholeB0
``MVMUL.md``, ``ELWMUL.md`` (the supporting definitions the arithmetic pages share),
``ELWADD.md``, ``GMPOOL.md``, ``SrcASrcB.md`` (cell layouts, fidelity phases), ``Dst.md``
and ``FloatBitPatterns.md`` (how the matrix unit reads and writes each bit pattern).
Blackhole has no pages of its own for these and shares them (spec tensix.md §1.1).

Reading Src cells (19 bits: [18] sign, [17:8] mantissa or magnitude, [7:0] exponent;
FP16 and integer "8" use exponent bits [4:0]):

* a multiplication keeps the bits of the fidelity phase (``slot_mask``): SrcA takes the
  implicit one and mantissa bits 9..6 when phase bit 0 is clear, bits 5..1 when it is
  set (bit 0 is never consumed); SrcB the implicit one and bits 9..4 when phase bit 1 is
  clear, bits 3..0 when set — what ``SrcAFidelityBits`` / ``SrcBFidelityBits`` isolate;
* an exponent field of 0 reads as zero (denormals flush); the largest exponent (255, or
  31 for FP16) is an ordinary finite number — FloatBitPatterns.md's Matrix Unit column:
  there is no Inf and no NaN, so float64 holds every value exactly;
* BF16 ignores the low three mantissa bits of the cell (BF16 is TF32 with those bits
  zero; GMPOOL's ``ReadAndScaleSrc`` masks them the same way);
* integer "8": ``ReadSrcInt8`` of the cell ANDed with the phase's mask — sign and
  10-bit magnitude, the exponent ignored.

Writing Dst:

* every value the pages' models hold in a ``float`` is rounded to FP32 (round to
  nearest, ties to even) where the model stores it; a 16-bit Dst then rounds that FP32
  value to BF16 / FP16 (nearest even) — the double rounding ``RoundToBF16(float)`` implies;
* too large to represent → the pattern FloatBitPatterns.md (‡) says the matrix unit
  writes: exponent 255 and mantissa 0 for FP32/BF16, exponent 31 and mantissa 1023 for
  FP16 (its exponent 31 is finite);
* results with a zero exponent field (denormals, and −0: "arithmetic instructions will
  never produce this bit pattern") are written as +0;
* integer "32" is sign-magnitude (Dst32b's high half shuffled like BF16); sums
  saturate at ±(2³¹−1) (``SaturateAddInt32``); zero is written with sign 0.

Choices where the pages are silent (also in docs/tensix.md, "Matrix unit"):

* MVMUL's 16 products are summed in float64 in k order (the products are exact; the
  sum's error is far below FP32's) and rounded once to FP32 — the model's sixteen
  per-step FP32 roundings are not reproduced (MVMUL.md: "precision could be either
  lower or higher");
* intermediate FP32 values are not flushed: only what is written to Dst is;
* FP16 cells use exponent bits [4:0] and ignore cell bits [7:5].
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: SrcAStyle values of the pages (how Src cells are read)
BF16, FP16, TF32, INT8 = "BF16", "FP16", "TF32", "INT8"
#: Dst formats the matrix unit accumulates in (FP32 / INT32 use Dst32b, the others Dst16b)
DST_FP32, DST_BF16, DST_FP16, DST_INT32 = "FP32", "BF16", "FP16", "INT32"
DST32 = frozenset({DST_FP32, DST_INT32})
#: codes of the styles and formats inside the compiled kernels
STYLE_CODE = {BF16: 0, FP16: 1, TF32: 2, INT8: 3}
FMT_CODE = {DST_FP32: 0, DST_BF16: 1, DST_FP16: 2, DST_INT32: 3}

#: significand bits (implicit one = 0x400) each slot keeps: SrcASrcB.md's fidelity tables
_SLOT_MASK = {"value": 0x7FF, "A0": 0x7C0, "A1": 0x03E, "B0": 0x7F0, "B1": 0x00F}
#: integer "8" cell masks of each slot (MVMUL.md / ELWMUL.md: ``SrcAVal & (… ? 0x41fff : 0x4e0ff)``)
_INT8_MASK = {"value": 0x7FFFF, "A0": 0x4E0FF, "A1": 0x41FFF, "B0": 0x7F0FF, "B1": 0x40FFF}
INT32_MAX = (1 << 31) - 1

#: POW2[e + _OFF] = 2**e for -160 <= e < 160: every scale a Src or Dst exponent needs
_OFF = 160
POW2 = np.ldexp(1.0, np.arange(-_OFF, _OFF))
POW2.setflags(write=False)


def srca_slot(phase: int) -> str:
    """The SrcA slot fidelity phase ``phase`` (0..3) multiplies with: bit 0 of the phase."""
    return "A1" if phase & 1 else "A0"


def srcb_slot(phase: int) -> str:
    """The SrcB slot of fidelity phase ``phase``: bit 1 of the phase."""
    return "B1" if phase & 2 else "B0"


def slot_mask(style: str, slot: str) -> int:
    """The mask of ``slot`` in ``style``: significand bits for floating point, the cell mask
    ``ReadSrcInt8`` is applied after for integer "8"."""
    return _INT8_MASK[slot] if style == INT8 else _SLOT_MASK[slot]


# ------------------------------------------------------------------ compiled cell work
@njit(cache=True, inline="always")
def _src(cell: int, style: int, mask: int, pow2: np.ndarray) -> float:
    """The number the matrix unit reads from Src ``cell`` in ``style`` (codes of
    STYLE_CODE), keeping the ``mask`` bits (module docstring)."""
    c = np.int64(cell)
    if style == 3:
        v = float(((c & mask) >> 8) & 0x3FF)
    else:
        exp = (c & 0x1F) if style == 1 else (c & 0xFF)
        if exp == 0:
            return 0.0
        man = (c >> 8) & (0x3F8 if style == 0 else 0x3FF)
        v = float((0x400 | man) & mask) * pow2[exp - (25 if style == 1 else 137) + _OFF]
    return -v if (c >> 18) & 1 else v


@njit(cache=True, inline="always")
def _read_cell(bits: np.ndarray, p: int, j: int, fmt: int, dhi: bool, dlo: bool, pow2: np.ndarray) -> float:
    """The number in Dest cell (physical row ``p``, column ``j``) in format ``fmt``; a half
    whose row is undefined (``dhi`` / ``dlo`` false) reads as zero bits."""
    hi = np.int64(bits[p, j]) if dhi else np.int64(0)
    if fmt == 1 or fmt == 2:
        if fmt == 1:
            exp, sig, scale = hi & 0xFF, 0x80 | ((hi >> 8) & 0x7F), (hi & 0xFF) - 134
        else:
            exp, sig, scale = hi & 0x1F, 0x400 | ((hi >> 5) & 0x3FF), (hi & 0x1F) - 25
        if exp == 0:
            return 0.0
        v = float(sig) * pow2[scale + _OFF]
        return -v if hi >> 15 else v
    lo = np.int64(bits[p + 8, j]) if dlo else np.int64(0)
    ieee = ((hi & 0x8000) | ((hi & 0xFF) << 7) | ((hi >> 8) & 0x7F)) << 16 | lo
    neg = ieee >> 31
    if fmt == 3:
        mag = ieee & 0x7FFFFFFF
        return float(-mag if neg else mag)
    exp = (ieee >> 23) & 0xFF
    if exp == 0:
        return 0.0
    v = float((ieee & 0x7FFFFF) | 0x800000) * pow2[exp - 150 + _OFF]
    return -v if neg else v


@njit(cache=True, inline="always")
def _shuffle(x: int) -> int:
    """IEEE bits [31:16] (or BF16 bits) → the Dst cell (sign, mantissa 7, exponent 8)."""
    return (x & 0x8000) | ((x & 0x7F) << 8) | ((x >> 7) & 0xFF)


@njit(cache=True, inline="always")
def _store_rows(bits: np.ndarray, phys: np.ndarray, fmt: int, x: np.ndarray, out32: np.ndarray) -> None:
    """Write the numbers ``x`` (rows, 16) to Dest rows ``phys`` in format ``fmt`` (module
    docstring: FP32 nearest even, overflow saturated, zero exponents +0; BF16/FP16 rounded
    from that FP32 value; integers saturated).  ``out32`` is (8, 16) uint32 scratch."""
    m = phys.shape[0]
    if fmt == 3:
        for r in range(m):
            p = phys[r]
            for j in range(16):
                v = np.int64(x[r, j])
                if v > 2147483647:
                    v = np.int64(2147483647)
                elif v < -2147483647:
                    v = np.int64(-2147483647)
                sm = ((np.int64(1) << 31) | -v) if v < 0 else v
                bits[p, j] = _shuffle(sm >> 16)  # type: ignore[arg-type]  # numba: int64 is int
                bits[p + 8, j] = sm & 0xFFFF
        return
    f32 = out32.view(np.float32)
    for r in range(m):
        for j in range(16):
            f32[r, j] = x[r, j]                    # to FP32: nearest even, overflow -> Inf bits
    for r in range(m):
        p = phys[r]
        for j in range(16):
            b = np.int64(out32[r, j])
            if (b & 0x7F800000) == 0:
                b = np.int64(0)
            if fmt == 0:
                bits[p, j] = _shuffle(b >> 16)  # type: ignore[arg-type]  # numba: int64 is int
                bits[p + 8, j] = b & 0xFFFF
            elif fmt == 1:
                bits[p, j] = _shuffle(((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF)  # type: ignore[arg-type]
            else:
                mag = b & 0x7FFFFFFF
                q = (mag + 0xFFF + ((mag >> 13) & 1)) >> 13
                exp = (q >> 10) - 112
                man = q & 0x3FF
                if exp > 31:
                    exp, man = np.int64(31), np.int64(0x3FF)
                bits[p, j] = ((b >> 31) << 15 | man << 5 | exp) if exp > 0 else 0


@njit(cache=True, inline="always")
def _round_rows(x: np.ndarray, out32: np.ndarray) -> None:
    """A ``float`` store of the pages' models: every value of ``x`` (≤ 8 rows) rounded to
    FP32 in place (nearest even; overflow becomes Inf, which later writes saturate)."""
    f32 = out32.view(np.float32)
    for r in range(x.shape[0]):
        for j in range(16):
            f32[r, j] = x[r, j]
    for r in range(x.shape[0]):
        for j in range(16):
            x[r, j] = f32[r, j]


def pack(style: str, fmt: str, a_bank: int, b_bank: int, a_mask: int, b_mask: int, *, op: int = 0,
         col0: bool = False, add: bool = False, phase: int = 0, a_row: int = 0) -> int:
    """The kernels' scalar operands packed into one int (fewer arguments to unbox per call):
    [1:0] style, [3:2] Dst format, [4] SrcA bank, [5] SrcB bank, [7:6] element-wise op
    (0 mul, 1 add, 2 sub), [8] broadcast column 0, [9] add Dest, [11:10] fidelity phase,
    [17:12] SrcA row, [36:18] SrcA mask, [55:37] SrcB mask (:func:`matmul_kernel` adds
    [61:56] and [62])."""
    return (STYLE_CODE[style] | FMT_CODE[fmt] << 2 | a_bank << 4 | b_bank << 5 | op << 6
            | int(col0) << 8 | int(add) << 9 | phase << 10 | a_row << 12 | a_mask << 18 | b_mask << 37)


@njit(cache=True, inline="always")
def dest_row(row: int, wide: bool, remap: int, swizzle: int) -> int:
    """The physical DstBits row of Dest row ``row`` (Dst.md's Adj16 / Adj32: the high half
    for Dst32b), as :data:`tessera_tensix.dest.ADJ16` / ``ADJ32`` tabulate it."""
    if remap:
        row = (row & 0x3C7) ^ ((row & 0x030) >> 1) ^ ((row & 0x008) << 2)
    if not wide:
        return row
    if swizzle:
        row = (row & 0x3F3) ^ ((row & 0x018) >> 1) ^ ((row & 0x004) << 1)
    return ((row & 0x1F8) << 1) | (row & 0x207)


def dest_span(row0: int, count: int, step: int, remap: int, swizzle: int, all_valid: bool = True) -> int:
    """:func:`matmul_kernel`'s ``rows``: Dest rows ``row0 + step * r`` (r < count) in the
    view ``DEST_ACCESS_CFG_remap_addrs`` / ``…swizzle_32b`` (0 or 1) select; bit 18: Dest
    has undefined rows (not ``all_valid``: :func:`matmul_kernel_undefined` must look)."""
    return row0 | count << 10 | step << 14 | remap << 16 | swizzle << 17 | (not all_valid) << 18


@njit(cache=True, inline="always")
def _identity_rows(bits: np.ndarray, phys: np.ndarray, wide: bool, valid: np.ndarray, written: np.ndarray) -> None:
    """Cells of undefined physical rows ``phys`` (and ``phys + 8`` for Dst32b) that SFPSTORE
    did not write become zero, the identity element the matrix unit reads there."""
    for r in range(phys.shape[0]):
        for half in range(2 if wide else 1):
            p = phys[r] + 8 * half
            if not valid[p]:
                for j in range(16):
                    if not written[p, j]:
                        bits[p, j] = 0


@njit(cache=True, inline="always")
def _define_rows(phys: np.ndarray, wide: bool, valid: np.ndarray) -> bool:
    """The rows were written whole: they are defined now.  Is every row of Dest defined?"""
    for r in range(phys.shape[0]):
        valid[phys[r]] = True
        if wide:
            valid[phys[r] + 8] = True
    for p in range(valid.shape[0]):
        if not valid[p]:
            return False
    return True


@njit(cache=True, inline="always")
def _srca_operand(srca: np.ndarray, a_bank: int, a_row: int, style: int, a_mask: int,
                  work: np.ndarray) -> np.ndarray:
    """The 16x16 SrcA operand (rows ``a_row`` .. ``+ 15`` modulo 64 of bank ``a_bank``) as
    numbers, in ``work[37:53]``.  It is decoded again only when its cells (kept in
    ``work[53:61]``), style or mask (``work[61]``) differ from the last call's: a matmul
    runs consecutive MVMULs over the same SrcA face (SrcB's rows walk it), and comparing
    256 cells costs far less than decoding them.  What is returned depends only on those
    cells, the style and the mask, so a stale entry can never be used."""
    a = work[37:53]
    cells = work[53:61].view(np.uint32).reshape(16, 16)
    key = work[61].view(np.int64)
    tag = style | a_mask << 2 | 1 << 40                # bit 40: an entry (the scratch starts at 0)
    same = key[0] == tag
    k = 0
    while same and k < 16:
        row = (a_row + k) & 0x3F
        for j in range(16):
            if cells[k, j] != srca[a_bank, row, j]:
                same = False
                break
        k += 1
    if not same:
        for k in range(16):
            row = (a_row + k) & 0x3F
            for j in range(16):
                cell = srca[a_bank, row, j]
                cells[k, j] = cell
                a[k, j] = _src(cell, style, a_mask, POW2)
        key[0] = tag
    return a


@njit(cache=True)
def matmul_kernel(srca: np.ndarray, srcb: np.ndarray, code: int, rows: int, bits: np.ndarray,
                  work: np.ndarray) -> bool:
    """:func:`matmul_kernel_undefined` for a Dest without undefined rows (bit 18 of ``rows``
    clear): two arrays fewer to unbox on every call.  The stand-ins for ``valid`` and
    ``written`` (views of ``work``) are never touched."""
    return _matmul(srca, srcb, code, rows, bits, work[36].view(np.bool_), work[32:36].view(np.bool_), work)


@njit(cache=True)
def matmul_kernel_undefined(srca: np.ndarray, srcb: np.ndarray, code: int, rows: int, bits: np.ndarray,
                            valid: np.ndarray, written: np.ndarray, work: np.ndarray) -> bool:
    """:func:`_matmul` when Dest may have undefined rows."""
    return _matmul(srca, srcb, code, rows, bits, valid, written, work)


@njit(cache=True, inline="always")
def _matmul(srca: np.ndarray, srcb: np.ndarray, code: int, rows: int, bits: np.ndarray,
            valid: np.ndarray, written: np.ndarray, work: np.ndarray) -> bool:
    """MVMUL / DOTPV / GAPOOL on Dest (``srca`` / ``srcb``: the registers, (2, 64, 16);
    ``code``: :func:`pack`, plus [61:56] the first SrcB row and [62] BroadcastSrcBRow;
    ``rows``: :func:`dest_span`).  Product row i is ``sum_k SrcB[b_row + i][k] *
    SrcA[a_row + k][j]`` (rows modulo 64) of the operands' masked bits (float64, k in
    order), rounded to FP32 unless integer; Dest row r of ``rows`` += product row r — or,
    broadcast, += product row 0 of SrcB row ``b_row`` alone.

    Undefined Dest rows (when ``rows`` says Dest has some): ``valid`` / ``written`` are
    :class:`~tessera_tensix.dest.Dest`'s ``row_valid`` / ``written``; a cell of an undefined
    row that SFPSTORE did not write reads as zero, the identity element, and every row
    written (both halves for Dst32b) is defined afterwards.  Returns whether Dest then has
    no undefined row (True when it had none).  ``work`` (62, 16) float64 is scratch; rows
    37..61 keep the last SrcA operand (:func:`_srca_operand`) from call to call.

    Few arguments (each array costs its unboxing on every call; the Dest rows are computed
    here, not passed), SrcA decoded only when it changed, and eight running sums at a time
    (independent chains the CPU overlaps, rather than one ``+=`` through memory): less
    than half the time of the straightforward loop, with every sum added in the same order."""
    style, fmt = code & 3, (code >> 2) & 3
    a_bank, b_bank = (code >> 4) & 1, (code >> 5) & 1
    a_row, b_row, bcast = (code >> 12) & 0x3F, (code >> 56) & 0x3F, (code >> 62) & 1
    a_mask, b_mask = (code >> 18) & 0x7FFFF, (code >> 37) & 0x7FFFF
    out32 = work[32:36].view(np.uint32).reshape(8, 16)
    m, step, wide = (rows >> 10) & 0xF, (rows >> 14) & 3, fmt == 0 or fmt == 3
    phys = work[36].view(np.int64)[:m]
    for r in range(m):
        phys[r] = dest_row(((rows & 0x3FF) + step * r) & 0x3FF, wide, (rows >> 16) & 1, (rows >> 17) & 1)
    undefined = (rows >> 18) & 1
    if undefined:
        _identity_rows(bits, phys, wide, valid, written)
    a = _srca_operand(srca, a_bank, a_row, style, a_mask, work)
    n = 1 if bcast else m
    product = work[16:16 + n]
    b = work[24]
    for i in range(n):
        row = (b_row + i) & 0x3F
        for k in range(16):
            b[k] = _src(srcb[b_bank, row, k], style, b_mask, POW2)
        for j in range(0, 16, 8):
            s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
            for k in range(16):
                bk = b[k]
                s0 += bk * a[k, j]
                s1 += bk * a[k, j + 1]
                s2 += bk * a[k, j + 2]
                s3 += bk * a[k, j + 3]
                s4 += bk * a[k, j + 4]
                s5 += bk * a[k, j + 5]
                s6 += bk * a[k, j + 6]
                s7 += bk * a[k, j + 7]
            product[i, j], product[i, j + 1], product[i, j + 2], product[i, j + 3] = s0, s1, s2, s3
            product[i, j + 4], product[i, j + 5], product[i, j + 6], product[i, j + 7] = s4, s5, s6, s7
    if fmt != 3:
        _round_rows(product, out32)
    x = work[24:24 + m]
    for r in range(m):
        p = phys[r]
        w = 0 if bcast else r
        for j in range(16):
            x[r, j] = product[w, j] + _read_cell(bits, p, j, fmt, True, True, POW2)
    _store_rows(bits, phys, fmt, x, out32)
    return _define_rows(phys, wide, valid) if undefined else True


@njit(cache=True)
def elementwise_kernel(srca: np.ndarray, srcb: np.ndarray, b_rows: np.ndarray, code: int,
                       bits: np.ndarray, phys: np.ndarray, defined: np.ndarray, work: np.ndarray) -> None:
    """ELWMUL (op 0), ELWADD (1), ELWSUB (2) on 8 rows (``code``: :func:`pack`): SrcA row
    ``a_row + i`` with SrcB row ``b_rows[i]`` (its column 0 only, when broadcast);
    floating-point results are rounded to FP32, and sums divided by 32 for phase bit 0 and
    by 128 for phase bit 1; Dest row ``phys[i]`` gets the result, plus its old value when
    adding.  ``defined[0|1, i, j]``: the high / low half of the cell is defined (undefined
    halves read as zero); ``work`` as for :func:`matmul_kernel`."""
    style, fmt = code & 3, (code >> 2) & 3
    a_bank, b_bank = (code >> 4) & 1, (code >> 5) & 1
    op, col0, add, phase = (code >> 6) & 3, (code >> 8) & 1, (code >> 9) & 1, (code >> 10) & 3
    a_row = (code >> 12) & 0x3F
    a_mask, b_mask = (code >> 18) & 0x7FFFF, (code >> 37) & 0x7FFFF
    out32 = work[32:36].view(np.uint32).reshape(8, 16)
    x = work[:8]
    for i in range(8):
        brow = b_rows[i]
        for j in range(16):
            a = _src(srca[a_bank, a_row + i, j], style, a_mask, POW2)
            b = _src(srcb[b_bank, brow, 0 if col0 else j], style, b_mask, POW2)
            x[i, j] = a * b if op == 0 else (a + b if op == 1 else a - b)
    if fmt != 3:
        _round_rows(x, out32)
        if op != 0 and phase != 0:
            scale = (1.0 / 32 if phase & 1 else 1.0) * (1.0 / 128 if phase & 2 else 1.0)
            for i in range(8):
                for j in range(16):
                    x[i, j] *= scale
    if add:
        for i in range(8):
            p = phys[i]
            for j in range(16):
                x[i, j] += _read_cell(bits, p, j, fmt, defined[0, i, j], defined[1, i, j], POW2)
    _store_rows(bits, phys, fmt, x, out32)


# ------------------------------------------------------------------ GMPOOL
#: GMPOOL's visiting order of the 16 SrcA rows (rows 0..7 with bit 2 flipped, then 8..15)
GMPOOL_ORDER = np.array([4, 5, 6, 7, 0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15])
#: ``NONLINEAR_I_TRANSFORM`` of the argmax index, applied to the SrcA row (0..7)
NONLINEAR_I = np.array([0, 3, 6, 1, 4, 7, 2, 5])


def gmpool_read_dst(dst_val: np.ndarray, dst_style: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ReadDst``: raw 32-bit Dst values → datums (sign, 9-bit exponent, 10-bit mag/man)."""
    v = dst_val.astype(np.int64)
    sign = (v >> 31) & 1
    if dst_style == DST_INT32:
        mag = v & 0x3FF
        exp = ((v >> 10) & 0x3F) + (((v >> 24) & 7) << 6)
    elif dst_style == FP16:
        exp = ((v >> 16) & 0x1F) + 15
        mag = (v >> 21) & 0x3FF
    else:
        exp = ((v >> 16) & 0xFF) + 127
        mag = ((v >> 24) & 0x7F) << 3
        if dst_style == TF32:
            mag = mag + ((v >> 13) & 7)
    return sign, exp & 0x1FF, mag & 0x3FF


def gmpool_read_src(a: np.ndarray, b_exp_cells: np.ndarray, style: str) -> tuple[np.ndarray, ...]:
    """``ReadAndScaleSrc`` of SrcA cells ``a`` (rows, 16) scaled by the SrcB cells
    ``b_exp_cells`` (rows, 1) — datums (sign, exponent, mag/man)."""
    a = a.astype(np.int64)
    b = np.broadcast_to(b_exp_cells.astype(np.int64), a.shape)
    a_exp, b_exp = a & 0xFF, b & 0xFF
    man = (a >> 8) & 0x3FF
    sign = (a >> 18) & 1
    if style == INT8:
        exp = np.zeros_like(a)
    elif style == FP16:
        exp = (a_exp & 0x1F) + (b_exp & 0x1F)
    else:
        exp = a_exp + b_exp
        if style == BF16:
            man = man & 0x3F8
    zero = a_exp == 0                                      # denormals flush to +0
    sign, exp, man = (np.where(zero, 0, sign), np.where(zero, 0, exp), np.where(zero, 0, man))
    ninf = b_exp == 0                                      # scaling by a zero exponent: -inf
    return (np.where(ninf, 1, sign), np.where(ninf, 0x1FF, exp), np.where(ninf, 0x3FF, man))


def gmpool_write_dst(sign: np.ndarray, exp: np.ndarray, man: np.ndarray, dst_style: str) -> np.ndarray:
    """``WriteDst``: datums → raw 32-bit Dst values (int64 holding 32 bits)."""
    if dst_style == DST_INT32:
        return (sign << 31) | ((exp & 7) << 10) | man
    if dst_style == FP16:
        e = (exp - 15) & 0x1FF
        out = (sign << 31) | (man << 21) | ((e & 0x1F) << 16)
        return np.where((exp & 0x3F) == 0, 0, out)
    e = (exp - 127) & 0x1FF
    out = (sign << 31) | ((man & 0x3F8) << 21) | ((e & 0xFF) << 16)
    if dst_style == TF32:
        out = out + ((man & 7) << 13)
    return np.where(exp == 0, 0, out)


def gmpool(a_cells: np.ndarray, b_row: np.ndarray, dst_val: np.ndarray, style: str,
           dst_style: str, argmax: bool) -> np.ndarray:
    """GMPOOL on one block: SrcA ``a_cells`` (16, 16), the SrcB row ``b_row`` (16,) whose
    datum i scales SrcA row i, and the raw 32-bit Dst values of the target row
    ``dst_val`` (16,) → the new raw values (uint32, 16).

    The pages' sequential loop (replace the running maximum when ``x >= Max``, in
    ``GMPOOL_ORDER``) is evaluated for all columns at once: the final maximum is the last
    visited datum equal to the largest comparable value (the Dst value only if no SrcA
    datum reaches it), and the index is that of the last replacement among the first
    eight visits (rows 0..7), found from the running prefix maximum.
    """
    order = GMPOOL_ORDER
    d_sign, d_exp, d_man = gmpool_read_dst(dst_val, dst_style)
    s_sign, s_exp, s_man = gmpool_read_src(a_cells[order], b_row[order][:, None], style)
    sign = np.vstack([d_sign[None], s_sign])              # (17, 16): Dst first, then visits
    exp = np.vstack([d_exp[None], s_exp])
    man = np.vstack([d_man[None], s_man])
    comp = np.where(sign == 1, -1, 1) * ((exp << 10) + man)
    best = comp.max(axis=0)
    last = comp.shape[0] - 1 - np.argmax((comp == best)[::-1], axis=0)
    cols = np.arange(comp.shape[1])
    out_sign, out_exp, out_man = sign[last, cols], exp[last, cols], man[last, cols]
    if not argmax:
        return (gmpool_write_dst(out_sign, out_exp, out_man, dst_style) & 0xFFFFFFFF).astype(np.uint32)
    raw = dst_val.astype(np.int64)
    phase = (raw + 0x100) & 0xF00
    running = np.maximum.accumulate(comp, axis=0)          # max over Dst and visits 0..k-1
    replaced = comp[1:9] >= running[0:8]                   # visits 0..7 are SrcA rows 0..7
    anyrep = replaced.any(axis=0)
    k = 7 - np.argmax(replaced[::-1], axis=0)
    index = np.where(anyrep, (phase >> 4) + NONLINEAR_I[order[k]], raw & 0xFF) & 0xFF
    result = phase | index
    if dst_style != DST_INT32:
        result = gmpool_write_dst(out_sign, out_exp, out_man, dst_style) | result
    return (result & 0xFFFFFFFF).astype(np.uint32)
