"""Exact sums of float64 terms, returned as their round-to-odd float64 image.

Why: the MMA accumulates up to 129 products per element and the fused TALU ops (fma, lerp,
dequantize, row-sum) add two to 64 terms, each with a single final rounding.  The products of
every supported input format are exact float64 numbers (fp32 x fp32 has 48 significant bits),
but their sum is not: the terms can span 550 bits (2^-298 .. 2^256).  Float64 addition would
round many times; this module adds the terms exactly in integer arithmetic instead.

Method (vectorised over the output elements): every term is ``sig * 2^e`` with a 53-bit
integer ``sig``; the smallest ``e`` of the call fixes a common binary point.  Each term is
split into three 32-bit "limbs" at its place in a fixed-point super-accumulator; the limbs of
all terms are added with ``np.bincount`` (float64 weights below 2^33, at most a few hundred per
bin: the bin sums are integers below 2^53, hence exact), carries are propagated in int64, and
the top 53 bits plus a sticky bit are read back as one float64 whose last bit is ORed with the
sticky bit.  That round-to-odd value rounds to every narrower format exactly like the true sum
(see :mod:`.rounding`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

_MASK = np.int64(0xFFFFFFFF)


def _normalise(acc: npt.NDArray[np.int64]) -> None:
    """Propagate carries so that every limb but the top one is in [0, 2^32)."""
    for j in range(acc.shape[1] - 1):
        carry = acc[:, j] >> 32
        acc[:, j] &= _MASK
        acc[:, j + 1] += carry


def _bitlen(v: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Bit length of non-negative integers below 2^53 (exact through float64)."""
    return np.frexp(v.astype(np.float64))[1].astype(np.int64)


def exact_sum_ro(terms: npt.ArrayLike, *, rdn: bool = False) -> npt.NDArray[np.float64]:
    """Round-to-odd float64 of the exact sum of each row of ``terms`` (shape (E, n), finite).

    Zero sums follow IEEE 754: an exact zero from cancelling terms is +0 (-0 when the rounding
    mode is RDN, ``rdn=True``), and a sum of zeros is -0 only if every term is -0 (or, under RDN,
    if any is).

    Two-part fast path: with ``G`` a power of two just above ``sum|t| / 2^50``, each term splits
    exactly into a multiple of ``2^G`` and a remainder of at most ``2^(G-1)``.  When the last
    significant bit of every term is at ``2^L`` or above and ``n * 2^(G-1) < 2^(53+L)``, both the
    high parts and the remainders add up exactly in float64 (any order), and one TwoSum of the
    two sums gives the round-to-odd result.  That covers terms spanning up to ~95 bits; rows
    beyond it go to the integer super-accumulator (:func:`limb_sum_ro`).
    """
    t = np.asarray(terms, dtype=np.float64)
    if t.ndim != 2:
        raise ValueError("terms must be a 2-D array (elements, terms)")
    n_el, n = t.shape
    m, ex = np.frexp(t)
    sig = (np.abs(m) * 2.0 ** 53).astype(np.int64)
    nz = sig != 0
    lsb = ex.astype(np.int64) - 54 + np.frexp((sig & -sig).astype(np.float64))[1]
    low = np.where(nz, lsb, 1 << 20).min(axis=1)
    total = np.abs(t).sum(axis=1)
    g = np.frexp(total)[1].astype(np.int64) - 50
    ok = nz.any(axis=1) & np.isfinite(total) & (g + int(n).bit_length() <= 53 + low)
    with np.errstate(all="ignore"):
        gcol = g[:, None].astype(np.int32)
        hi = np.ldexp(np.rint(np.ldexp(t, -gcol)), gcol)
        lo = t - hi
        out = ro_two_sum(hi.sum(axis=1), lo.sum(axis=1))
    out = np.where(ok & (out == 0), -0.0 if rdn else 0.0, out)
    rest = ~ok
    if rest.any():
        out[rest] = limb_sum_ro(t[rest], rdn=rdn)
    return out


def limb_sum_ro(terms: npt.ArrayLike, *, rdn: bool = False) -> npt.NDArray[np.float64]:
    """:func:`exact_sum_ro` by the integer super-accumulator alone, for any span of exponents."""
    t = np.asarray(terms, dtype=np.float64)
    n_el = t.shape[0]
    m, ex = np.frexp(t)
    sig = (np.abs(m) * 2.0 ** 53).astype(np.int64)
    e = ex.astype(np.int64) - 53
    nz = sig != 0
    result = np.zeros(n_el, dtype=np.float64)
    any_nz = nz.any(axis=1)
    if nz.any():
        base = int(e[nz].min())
        s = np.where(nz, e - base, 0)
        limb = s >> 5
        off = s & 31
        lo = (sig & _MASK) << off                     # < 2^63
        hi = (sig >> 32) << off                       # < 2^52
        c0 = lo & _MASK
        c1 = (lo >> 32) + (hi & _MASK)
        c2 = hi >> 32
        sgn = np.where(m < 0, -1.0, 1.0)
        n_limbs = int(limb.max()) + 5
        row = (np.arange(n_el, dtype=np.int64) * n_limbs)[:, None]
        idx = np.concatenate([(row + limb).ravel(), (row + limb + 1).ravel(), (row + limb + 2).ravel()])
        w = np.concatenate([(c0 * sgn).ravel(), (c1 * sgn).ravel(), (c2 * sgn).ravel()])
        acc = np.bincount(idx, weights=w, minlength=n_el * n_limbs).astype(np.int64).reshape(n_el, n_limbs)
        _normalise(acc)
        negative = acc[:, -1] < 0
        acc[negative] = -acc[negative]
        _normalise(acc)
        nzl = acc != 0
        top = n_limbs - 1 - np.argmax(nzl[:, ::-1], axis=1)          # highest non-zero limb
        padded = np.concatenate([np.zeros((n_el, 2), np.int64), acc], axis=1)
        rows = np.arange(n_el)
        l2 = padded[rows, top + 2]
        l1 = padded[rows, top + 1]
        l0 = padded[rows, top]
        below = np.cumsum(nzl, axis=1)
        sticky = (top >= 3) & (below[rows, np.maximum(top - 3, 0)] > 0)
        head = (l2 << 32) | l1                         # l2 < 2^32, so head < 2^64 as a bit pattern
        nb = 32 + _bitlen(l2)                          # bit length of head, 33..64
        uhead = head.view(np.uint64)
        sh_r = np.clip(nb - 53, 0, 11).astype(np.uint64)
        sh_l = np.clip(53 - nb, 0, 20).astype(np.uint64)
        wide = nb >= 53
        mant_r = uhead >> sh_r
        st_r = (uhead & ((np.uint64(1) << sh_r) - np.uint64(1))) != 0
        ul0 = l0.astype(np.uint64)
        keep = np.uint64(32) - sh_l
        mant_l = (uhead << sh_l) | (ul0 >> keep)
        st_l = (ul0 & ((np.uint64(1) << keep) - np.uint64(1))) != 0
        mant = np.where(wide, mant_r, mant_l)
        st = sticky | np.where(wide, st_r | (l0 != 0), st_l)
        mant = mant | st.astype(np.uint64)
        lsb_exp = base + 32 * (top - 1) + (nb - 53)
        mag = np.ldexp(mant.astype(np.float64), lsb_exp.astype(np.int32))
        result = np.where(negative, -mag, mag)
        zero_sum = any_nz & (mant == 0)
        result = np.where(zero_sum, -0.0 if rdn else 0.0, result)
    all_zero = ~any_nz
    if all_zero.any():
        negz = np.signbit(t)
        neg_zero = negz.all(axis=1) | (rdn & negz.any(axis=1))
        result = np.where(all_zero, np.where(neg_zero, -0.0, 0.0), result)
    return result


def ro_two_sum(a: npt.ArrayLike, b: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Round-to-odd float64 of ``a + b`` for finite float64 ``a`` and ``b``.

    Knuth's TwoSum gives ``s = fl(a+b)`` and the exact error ``err`` (a + b == s + err); the
    round-to-odd value is ``s`` when exact or already odd, otherwise ``s``'s neighbour on the
    side of ``err``.  Zero signs follow IEEE RNE addition (the caller fixes them for RDN).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    s = a + b
    bp = s - a
    err = (a - (s - bp)) + (b - bp)
    odd = (s.view(np.uint64) & np.uint64(1)) == 1
    fix = (err != 0) & ~odd
    return np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
