"""MMA numerics against an exact integer reference, for every mmauop data type."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from test_tile_numerics_reference import fields, random_codes, round_scaled, scaled_ints

from tessera_tile.numerics.mma import MMA_TYPES, mma

# code: (A type, B type, accumulator) in the reference's own names
TYPES = {
    0x00: ("fp16", "fp16", "fp32"), 0x01: ("bf16", "bf16", "fp32"), 0x02: ("fp16", "fp16", "fp16"),
    0x03: ("tf32", "tf32", "fp32"), 0x04: ("fp32", "fp32", "fp32"), 0x05: ("fp8e4m3", "fp8e4m3", "fp32"),
    0x06: ("fp8e4m3", "fp8e5m2", "fp32"), 0x07: ("fp8e5m2", "fp8e4m3", "fp32"),
    0x08: ("fp8e5m2", "fp8e5m2", "fp32"), 0x09: ("s8", "s8", "s32"), 0x0A: ("u8", "u8", "s32"),
    0x0B: ("s8", "u8", "s32"), 0x0C: ("u8", "s8", "s32"), 0x0D: ("s4", "s4", "s32"),
    0x0E: ("u4", "u4", "s32"),
}
INT_BITS = {"s8": 8, "u8": 8, "s4": 4, "u4": 4}
TILE = 1024
ROW = 64


def _elements(data: bytes, name: str) -> list[int]:
    """Element codes in storage order (nibbles low first)."""
    if name in ("s4", "u4"):
        out = []
        for byte in data:
            out += [byte & 0xF, byte >> 4]
        return out
    width = 4 if name == "tf32" else fields(name)[3] if name in ("fp32", "fp16", "bf16", "fp8e4m3", "fp8e5m2") \
        else 1
    return [int.from_bytes(data[i:i + width], "little") for i in range(0, len(data), width)]


def _int_value(code: int, name: str) -> int:
    bits = INT_BITS[name]
    if name.startswith("s") and code >= 1 << (bits - 1):
        return code - (1 << bits)
    return code


def _operand(data: bytes, name: str) -> tuple[list[int], int, list[int]]:
    """(scaled integer values, scale, sign bits) of every element."""
    codes = _elements(data, name)
    if name in INT_BITS:
        vals = [_int_value(c, name) for c in codes]
        return vals, 0, [v < 0 for v in vals]
    fmt = "fp32" if name == "tf32" else name
    if name == "tf32":
        codes = [c & 0xFFFFE000 for c in codes]
    vals, scale = scaled_ints(codes, fmt)
    eb, mb = fields(fmt)[:2]
    return vals, scale, [bool((c >> (eb + mb)) & 1) for c in codes]


def ref_mma(d: bytes, a: bytes, b: bytes, code: int, trans_a=False, trans_b=False, neg_a=False,
            neg_d=False, row_bytes=ROW) -> bytes:
    """Exact reference for finite operands: scaled Python integers, one RNE rounding."""
    an, bn, acc = TYPES[code]
    tile = len(d)
    m = n = tile // row_bytes
    k = row_bytes * 8 // (INT_BITS.get(an) or (32 if an == "tf32" else fields(an)[3] * 8))
    av, sa, asg = _operand(a, an)
    bv, sb, bsg = _operand(b, bn)
    ai = (lambda i, kk: kk * m + i) if trans_a else (lambda i, kk: i * k + kk)
    bi = (lambda kk, j: kk * n + j) if trans_b else (lambda kk, j: j * k + kk)
    if acc == "s32":
        dv = [int.from_bytes(d[4 * i:4 * i + 4], "little", signed=True) for i in range(m * n)]
        out = bytearray()
        for i in range(m):
            for j in range(n):
                s = sum(av[ai(i, kk)] * bv[bi(kk, j)] for kk in range(k))
                s = (-s if neg_a else s) + (-dv[i * n + j] if neg_d else dv[i * n + j])
                out += (s & 0xFFFFFFFF).to_bytes(4, "little")
        return bytes(out)
    ab = fields(acc)[3]
    dcodes = [int.from_bytes(d[ab * i:ab * i + ab], "little") for i in range(m * n)]
    dv, sd = scaled_ints(dcodes, acc)
    eb, mb = fields(acc)[:2]
    dsg = [bool((c >> (eb + mb)) & 1) != neg_d for c in dcodes]
    scale = max(sa + sb, sd)
    out = bytearray()
    for i in range(m):
        for j in range(n):
            total = 0
            all_neg_zero = True
            for kk in range(k):
                p = av[ai(i, kk)] * bv[bi(kk, j)]
                sign = asg[ai(i, kk)] != neg_a != bsg[bi(kk, j)]
                all_neg_zero &= p == 0 and sign
                total += (-p if neg_a else p) << (scale - sa - sb)
            dd = dv[i * n + j]
            all_neg_zero &= dd == 0 and dsg[i * n + j]
            total += (-dd if neg_d else dd) << (scale - sd)
            if total == 0:
                c = (1 << (eb + mb)) if all_neg_zero else 0
            else:
                c = round_scaled(total, scale, acc, "rne")
            out += c.to_bytes(ab, "little")
    return bytes(out) + d[m * n * ab:]


def _random_operand(rng, name: str, nbytes: int, narrow: bool) -> bytes:
    if name in INT_BITS:
        return rng.integers(0, 256, nbytes, dtype=np.uint8).tobytes()
    fmt = "fp32" if name == "tf32" else name
    eb, mb, _, es, bias = fields(fmt)
    count = nbytes // es
    if narrow:
        codes = random_codes(rng, fmt, count, min_exp_field=max(bias - 6, 0), max_exp_field=bias + 6)
    else:
        codes = random_codes(rng, fmt, count)
    if name == "tf32":
        codes = codes | rng.integers(0, 1 << 13, count).astype(np.uint64)   # junk in the ignored bits
    return codes.astype(f"<u{es}").tobytes()


def _random_acc(rng, acc: str, narrow: bool) -> bytes:
    if acc == "s32":
        return rng.integers(0, 256, TILE, dtype=np.uint8).tobytes()
    eb, mb, _, es, bias = fields(acc)
    count = 256
    codes = random_codes(rng, acc, count, min_exp_field=max(bias - 6, 0), max_exp_field=bias + 6) if narrow \
        else random_codes(rng, acc, count)
    return codes.astype(f"<u{es}").tobytes() + rng.integers(0, 256, TILE - count * es, dtype=np.uint8).tobytes()


@pytest.mark.parametrize("code", sorted(TYPES))
@pytest.mark.parametrize("narrow", [True, False], ids=["narrow-range", "full-range"])
def test_mma_matches_exact_reference(code, narrow):
    rng = np.random.default_rng(code * 2 + narrow)
    an, bn, acc = TYPES[code]
    a = _random_operand(rng, an, TILE, narrow)
    b = _random_operand(rng, bn, TILE, narrow)
    d = _random_acc(rng, acc, narrow)
    assert mma(d, a, b, code) == ref_mma(d, a, b, code)


@pytest.mark.parametrize("code", [0x00, 0x02, 0x04, 0x06, 0x09, 0x0B, 0x0D, 0x0E])
@pytest.mark.parametrize("flags", [(True, False, False, False), (False, True, False, False),
                                   (False, False, True, True), (True, True, True, False)])
def test_mma_transposes_and_negations(code, flags):
    trans_a, trans_b, neg_a, neg_d = flags
    rng = np.random.default_rng(100 + code)
    an, bn, acc = TYPES[code]
    a = _random_operand(rng, an, TILE, True)
    b = _random_operand(rng, bn, TILE, True)
    d = _random_acc(rng, acc, True)
    got = mma(d, a, b, code, trans_a=trans_a, trans_b=trans_b, neg_a=neg_a, neg_d=neg_d)
    assert got == ref_mma(d, a, b, code, trans_a, trans_b, neg_a, neg_d)


def test_mma_layouts_by_hand_fp32():
    """A row-major, B stored as B^T; transposed storage gives the same product."""
    rng = np.random.default_rng(7)
    am = rng.integers(-4, 5, (16, 16)).astype(np.float32)
    bm = rng.integers(-4, 5, (16, 16)).astype(np.float32)        # B as K x N
    d = np.zeros((16, 16), np.float32)
    want = (am @ bm).astype(np.float32).tobytes()
    assert mma(d.tobytes(), am.tobytes(), bm.T.copy().tobytes(), 0x04) == want
    assert mma(d.tobytes(), am.T.copy().tobytes(), bm.tobytes(), 0x04, trans_a=True, trans_b=True) == want


def test_mma_byte_granular_transpose():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((16, 32)).astype(np.float16)              # native A, 16 rows of 64 B
    b = rng.standard_normal((16, 32)).astype(np.float16)              # native B^T
    d = bytes(TILE)
    native = mma(d, a.tobytes(), b.tobytes(), 0x00)
    a_t = np.frombuffer(a.tobytes(), np.uint8).reshape(16, 64).T.tobytes()
    b_t = np.frombuffer(b.tobytes(), np.uint8).reshape(16, 64).T.tobytes()
    assert mma(d, a_t, b_t, 0x00, trans_a=True, trans_b=True, transpose_granule=8) == native
    assert mma(d, a_t, b.tobytes(), 0x00, trans_a=True, transpose_granule=8) == native
    assert mma(d, a_t, b_t, 0x00, trans_a=True, trans_b=True) != native      # element-granular differs
    with pytest.raises(ValueError, match="transpose_granule"):
        mma(d, d, d, 0x00, transpose_granule=16)


def test_mma_int8_by_hand_and_wrap():
    a = np.full((16, 64), -128, np.int8)
    b = np.full((16, 64), -128, np.int8)
    d = np.full((16, 16), 2**31 - 2**20, np.int32)                 # + 64 * 2^14 = 2^20 -> wraps
    out = np.frombuffer(mma(d.tobytes(), a.tobytes(), b.tobytes(), 0x09), np.int32)
    assert (out == -(2**31)).all()
    dmin = np.full((16, 16), -(2**31), np.int32)
    zero = np.zeros((16, 64), np.int8)
    out = np.frombuffer(mma(dmin.tobytes(), zero.tobytes(), zero.tobytes(), 0x09, neg_d=True), np.int32)
    assert (out == -(2**31)).all()                                 # -(-2^31) wraps to itself
    u = np.full((16, 64), 255, np.uint8)
    s = np.full((16, 64), -1, np.int8)
    zd = np.zeros((16, 16), np.int32).tobytes()
    # s8 x u8: A's 0xFF is -1, B's 0xFF is 255; u8 x s8 the other way round
    out = np.frombuffer(mma(zd, s.tobytes(), u.tobytes(), 0x0B), np.int32)
    assert (out == 64 * -1 * 255).all()
    out = np.frombuffer(mma(zd, u.tobytes(), s.tobytes(), 0x0C), np.int32)
    assert (out == 64 * 255 * -1).all()
    out = np.frombuffer(mma(zd, u.tobytes(), u.tobytes(), 0x0A), np.int32)
    assert (out == 64 * 255 * 255).all()


def test_mma_int4_nibble_order():
    """Element k of a row is nibble k: low nibble of byte k//2 first; s4 sign-extends."""
    a = bytearray(TILE)
    a[0] = 0x21                       # A[0][0] = 1, A[0][1] = 2
    b = bytearray(TILE)
    b[0] = 0xF3                       # B^T row 0: B[0][0] = 3, B[1][0] = 0xF (-1 as s4, 15 as u4)
    zd = bytes(TILE)
    s4 = np.frombuffer(mma(zd, bytes(a), bytes(b), 0x0D), np.int32)
    u4 = np.frombuffer(mma(zd, bytes(a), bytes(b), 0x0E), np.int32)
    assert s4[0] == 1 * 3 + 2 * -1 and u4[0] == 1 * 3 + 2 * 15
    assert (s4[1:] == 0).all() and (u4[1:] == 0).all()
    a2 = bytearray(TILE)
    a2[0] = 0x21                      # transposed A: nibble k*16 + m -> A[0][0] = 1, A[1][0] = 2
    s4t = np.frombuffer(mma(zd, bytes(a2), bytes(b), 0x0D, trans_a=True), np.int32).reshape(16, 16)
    assert s4t[0, 0] == 3 and s4t[1, 0] == 6 and s4t[2:, :].sum() == 0


def test_mma_fp16_accumulator_uses_first_half_only():
    rng = np.random.default_rng(11)
    a = rng.standard_normal((16, 32)).astype(np.float16)
    b = rng.standard_normal((16, 32)).astype(np.float16)
    tail = rng.integers(0, 256, 512, dtype=np.uint8).tobytes()
    d = rng.standard_normal((16, 16)).astype(np.float16).tobytes() + tail
    out = mma(d, a.tobytes(), b.tobytes(), 0x02)
    assert len(out) == TILE and out[512:] == tail
    assert out == ref_mma(d, a.tobytes(), b.tobytes(), 0x02)


def test_mma_single_rounding_beats_float64_summation():
    """2^60 + 1 - 2^60 + 2^-24*(1+2^-56): float64 loses the 1, the exact sum keeps every bit."""
    a = np.zeros((16, 16), np.float32)
    b = np.zeros((16, 16), np.float32)                              # stored as B^T: b[n, k] = B[k][n]
    a[0, :4] = [2.0**30, 1.0, -(2.0**30), 2.0**-40]
    b[0, :4] = [2.0**30, 1.0, 2.0**30, 2.0**16 * (1 + 2.0**-20)]
    d = np.zeros((16, 16), np.float32)
    d[0, 0] = 2.0**-100
    out = np.frombuffer(mma(d.tobytes(), a.tobytes(), b.tobytes(), 0x04), np.float32)
    # exact: 1 + 2^-24 + 2^-44 + 2^-100 -> just above the tie -> rounds up to 1 + 2^-23
    assert out[0] == np.float32(1 + 2.0**-23)
    naive = float(np.sum(a[0, :4].astype(np.float64) * b[0, :4].astype(np.float64))) + 2.0**-100
    assert np.float32(naive) != out[0]


def test_mma_huge_exponent_span_uses_exact_accumulator():
    a = np.zeros((16, 16), np.float32)
    b = np.zeros((16, 16), np.float32)
    a[0, :3] = [2.0**100, 3.0, -(2.0**100)]
    b[0, :3] = [2.0**27, 2.0**-149, 2.0**27]
    d = np.zeros((16, 16), np.float32)
    d[0, 0] = -(2.0**-149)
    out = np.frombuffer(mma(d.tobytes(), a.tobytes(), b.tobytes(), 0x04), np.float32)
    assert out[0] == np.float32(2.0**-148)                     # 3*2^-149 - 2^-149, nothing lost
    assert mma(d.tobytes(), a.tobytes(), b.tobytes(), 0x04) == ref_mma(d.tobytes(), a.tobytes(), b.tobytes(), 4)


def test_mma_nan_and_inf_rules():
    a = np.ones((16, 16), np.float32)
    b = np.ones((16, 16), np.float32)
    d = np.zeros((16, 16), np.float32)
    a[0, 0] = np.nan                                   # row 0 of D -> canonical NaN
    a[1, 0] = np.inf                                   # row 1: +Inf ...
    b[3, 0] = 0.0                                      # ... except column 3: Inf * 0 -> NaN
    d[1, 5] = -np.inf                                  # and Inf + -Inf -> NaN
    d[2, 2] = np.inf
    out = np.frombuffer(mma(d.tobytes(), a.tobytes(), b.tobytes(), 0x04), np.uint32).reshape(16, 16)
    assert (out[0] == 0x7FC00000).all()
    assert out[1, 0] == 0x7F800000 and out[1, 3] == 0x7FC00000 and out[1, 5] == 0x7FC00000
    assert out[2, 2] == 0x7F800000 and out[2, 1] == struct.unpack("<I", struct.pack("<f", 16.0))[0]


def test_mma_overflow_and_fp16_nan():
    a = np.full((16, 32), 60000, np.float16)
    b = np.full((16, 32), 2, np.float16)
    d = np.zeros(512, np.uint8).tobytes() + bytes(512)
    out = np.frombuffer(mma(d, a.tobytes(), b.tobytes(), 0x02)[:512], np.uint16)
    assert (out == 0x7C00).all()                               # overflow -> +Inf
    a[0, 0] = np.nan
    out = np.frombuffer(mma(d, a.tobytes(), b.tobytes(), 0x02)[:512], np.uint16)
    assert (out[:16] == 0x7E00).all()


def test_mma_e4m3_nan_code_and_tf32_truncation():
    a = np.zeros(TILE, np.uint8)
    b = np.zeros(TILE, np.uint8)
    a[0] = 0x7F                                                # e4m3 NaN
    a[64] = 0x38                                               # A[1][0] = 1.0
    b[0] = 0x38
    out = np.frombuffer(mma(bytes(TILE), a.tobytes(), b.tobytes(), 0x05), np.uint32).reshape(16, 16)
    assert out[0, 0] == 0x7FC00000 and out[1, 0] == 0x3F800000
    ta = np.zeros((16, 16), np.uint32)
    tb = np.zeros((16, 16), np.uint32)
    ta[0, 0] = 0x3F801FFF                                      # 1 + 2^-23*0x1FFF -> truncated to 1.0
    tb[0, 0] = 0x3F800000
    ta[1, 0] = 0x7F800001                                      # NaN whose payload is all in bits 12:0
    out = np.frombuffer(mma(bytes(TILE), ta.tobytes(), tb.tobytes(), 0x03), np.uint32).reshape(16, 16)
    assert out[0, 0] == 0x3F800000 and out[1, 0] == 0x7FC00000


def test_mma_zero_signs():
    a = np.zeros((16, 16), np.float32)
    b = np.zeros((16, 16), np.float32)
    a[0, 0] = -0.0
    d = np.zeros((16, 16), np.float32)
    d[0, 0] = -0.0
    d[1, 0] = -0.0
    out = np.frombuffer(mma(d.tobytes(), a.tobytes(), b.tobytes(), 0x04), np.uint32).reshape(16, 16)
    assert out[0, 0] == 0x00000000          # -0*0 products are -0 only for k=0: mixed -> +0
    a[0, :] = -0.0
    out = np.frombuffer(mma(d.tobytes(), a.tobytes(), b.tobytes(), 0x04), np.uint32).reshape(16, 16)
    assert out[0, 0] == 0x80000000 and out[1, 0] == 0x00000000
    a[0, :2] = [1.0, 1.0]
    b[0, :2] = [1.0, -1.0]                  # B^T row 0: B[0][0] = 1, B[1][0] = -1 -> cancels to +0
    out = np.frombuffer(mma(d.tobytes(), a.tobytes(), b.tobytes(), 0x04), np.uint32).reshape(16, 16)
    assert out[0, 0] == 0x00000000


def test_mma_other_geometry():
    rng = np.random.default_rng(21)
    tile, row = 256, 32                                        # 8 x 8 tiles, K = 8 for fp32
    a = rng.standard_normal(64).astype(np.float32).tobytes()
    b = rng.standard_normal(64).astype(np.float32).tobytes()
    d = rng.standard_normal(64).astype(np.float32).tobytes()
    assert mma(d, a, b, 0x04, row_bytes=row) == ref_mma(d, a, b, 0x04, row_bytes=row)
    assert len(mma(d, a, b, 0x09, row_bytes=row)) == tile


def test_mma_errors():
    t = bytes(TILE)
    with pytest.raises(ValueError, match=r"unknown mmauop 0x0f"):
        mma(t, t, t, 0x0F)
    with pytest.raises(ValueError, match="same size"):
        mma(t, t[:512], t, 0x04)
    with pytest.raises(ValueError, match="does not fit"):
        mma(bytes(512), bytes(512), bytes(512), 0x04, row_bytes=32)
    with pytest.raises(ValueError, match="whole number"):
        mma(t, t, t, 0x04, row_bytes=48)


def test_mma_table_matches_tile_md():
    assert sorted(MMA_TYPES) == list(range(0x0F))
    assert [MMA_TYPES[c].k() for c in (0x00, 0x03, 0x05, 0x09, 0x0D)] == [32, 16, 64, 64, 128]
    assert MMA_TYPES[0x02].acc.name == "fp16" and MMA_TYPES[0x06].b.name == "fp8e5m2"
