"""Exact IEEE-754 binary floating point on bit patterns (binary16/32/64/128).

Why our own arithmetic instead of numpy: rfPhoenix needs a single-rounding FMA, a
round-toward-zero mode (RM = 1) and binary128 elements (Sz = 4); numpy offers none
of these.  Every operation here computes the exact result with Python integers
(a value is ``mant * 2**exp``) and rounds once in :func:`pack`, so results are
correctly rounded in every format and mode, subnormals included.

Choices the spec leaves open (documented in ``docs/phoenix-decisions.md``):

* every arithmetic NaN result is the format's canonical quiet NaN (binary32
  0x7FC00000); payloads are not propagated.  Sign operations (FNEG/FABS/FNABS) are
  pure bit operations and keep the payload.
* no flags and no traps (the spec defines no FP status or enable register).
* FRES / FRSQRTE are correctly rounded (exact 1/x, 1/sqrt(x)); FSIGMOID is within
  1 ulp of the logistic function for binary16/32 (computed in binary64).
"""

from __future__ import annotations

import math

ZERO, NUM, INF, NAN = range(4)
RNE, RTZ = 0, 1


class Format:
    """Constants of one IEEE binary interchange format."""

    __slots__ = ("width", "ebits", "fbits", "bias", "emin", "sign", "mask", "exp_all",
                 "frac_mask", "hidden", "inf", "qnan", "max_finite", "lsb_min", "one")

    def __init__(self, width: int, ebits: int) -> None:
        self.width = width
        self.ebits = ebits
        self.fbits = width - ebits - 1
        self.bias = (1 << (ebits - 1)) - 1
        self.emin = 1 - self.bias                 # unbiased exponent of the smallest normal
        self.sign = 1 << (width - 1)
        self.mask = (1 << width) - 1
        self.exp_all = (1 << ebits) - 1
        self.frac_mask = (1 << self.fbits) - 1
        self.hidden = 1 << self.fbits
        self.inf = self.exp_all << self.fbits
        self.qnan = self.inf | (1 << (self.fbits - 1))
        self.max_finite = self.inf - 1
        self.lsb_min = self.emin - self.fbits     # weight of the smallest subnormal
        self.one = self.bias << self.fbits

    def __repr__(self) -> str:
        return f"binary{self.width}"


F16 = Format(16, 5)
F32 = Format(32, 8)
F64 = Format(64, 11)
F128 = Format(128, 15)
FORMATS = {16: F16, 32: F32, 64: F64, 128: F128}


# ---------------------------------------------------------------------------- pack/unpack

def unpack(f: Format, bits: int) -> tuple[int, int, int, int]:
    """``(kind, sign, mant, exp)``; for NUM the value is ``(-1)**sign * mant * 2**exp``."""
    sign = (bits >> (f.width - 1)) & 1
    e = (bits >> f.fbits) & f.exp_all
    frac = bits & f.frac_mask
    if e == f.exp_all:
        return (NAN if frac else INF), sign, frac, 0
    if e == 0:
        if frac == 0:
            return ZERO, sign, 0, 0
        return NUM, sign, frac, f.lsb_min
    return NUM, sign, frac | f.hidden, e - f.bias - f.fbits


def pack(f: Format, sign: int, mant: int, exp: int, rm: int = RNE, sticky: bool = False) -> int:
    """Round ``(-1)**sign * (mant + d) * 2**exp`` (0 <= d < 1, d > 0 iff sticky) to ``f``.

    With ``sticky`` the caller must supply at least two bits beyond the target
    precision, so the discarded part is never empty.  Overflow gives infinity (RNE)
    or the largest finite number (RTZ), as IEEE prescribes for those modes.
    """
    s = sign << (f.width - 1)
    if mant == 0:
        return s
    top = exp + mant.bit_length() - 1
    lsb = max(top - f.fbits, f.lsb_min)
    shift = lsb - exp
    if shift <= 0:
        q = mant << -shift
    else:
        q = mant >> shift
        if rm == RNE:
            rem = mant & ((1 << shift) - 1)
            half = 1 << (shift - 1)
            if rem > half or (rem == half and (sticky or q & 1)):
                q += 1
    if q >> (f.fbits + 1):           # rounding carried out of the significand
        q >>= 1
        lsb += 1
    if q < f.hidden:                 # subnormal (or rounded to zero)
        return s | q
    biased = lsb + f.fbits + f.bias
    if biased >= f.exp_all:
        return s | (f.inf if rm == RNE else f.max_finite)
    return s | (biased << f.fbits) | (q & f.frac_mask)


def signed_zero(f: Format, sign: int) -> int:
    return sign << (f.width - 1)


def signed_inf(f: Format, sign: int) -> int:
    return (sign << (f.width - 1)) | f.inf


def is_nan(f: Format, bits: int) -> bool:
    return (bits & ~f.sign & f.mask) > f.inf


# ---------------------------------------------------------------------------- arithmetic

def _sum(f: Format, sa: int, ma: int, ea: int, sb: int, mb: int, eb: int, rm: int) -> int:
    """Exact sum of two non-zero finite values, rounded once."""
    e = min(ea, eb)
    va = ma << (ea - e)
    vb = mb << (eb - e)
    total = (vb if not sb else -vb) + (va if not sa else -va)
    if total == 0:
        return 0  # exact zero of opposite-signed operands is +0 in RNE and RTZ
    return pack(f, int(total < 0), abs(total), e, rm)


def add(f: Format, a: int, b: int, rm: int = RNE) -> int:
    """``a + b`` correctly rounded (FADD; FSUB passes ``b`` with its sign flipped)."""
    ka, sa, ma, ea = unpack(f, a)
    kb, sb, mb, eb = unpack(f, b)
    if ka == NAN or kb == NAN:
        return f.qnan
    if ka == INF:
        if kb == INF and sa != sb:
            return f.qnan
        return signed_inf(f, sa)
    if kb == INF:
        return signed_inf(f, sb)
    if ka == ZERO:
        return signed_zero(f, sa & sb) if kb == ZERO else b & f.mask
    if kb == ZERO:
        return a & f.mask
    return _sum(f, sa, ma, ea, sb, mb, eb, rm)


def fma(f: Format, a: int, b: int, c: int, rm: int = RNE, neg_product: bool = False,
        neg_addend: bool = False) -> int:
    """``(+-a*b) + (+-c)`` with a single rounding (FMA/FMS/FNMA/FNMS)."""
    ka, sa, ma, ea = unpack(f, a)
    kb, sb, mb, eb = unpack(f, b)
    kc, sc, mc, ec = unpack(f, c)
    if ka == NAN or kb == NAN or kc == NAN:
        return f.qnan
    sp = sa ^ sb ^ int(neg_product)
    sc ^= int(neg_addend)
    if ka == INF or kb == INF:
        if ka == ZERO or kb == ZERO:
            return f.qnan                       # inf * 0
        if kc == INF and sc != sp:
            return f.qnan                       # inf - inf
        return signed_inf(f, sp)
    if kc == INF:
        return signed_inf(f, sc)
    if ka == ZERO or kb == ZERO:
        if kc == ZERO:
            return signed_zero(f, sp & sc)
        return (c & ~f.sign & f.mask) | (sc << (f.width - 1))
    if kc == ZERO:
        return pack(f, sp, ma * mb, ea + eb, rm)
    return _sum(f, sp, ma * mb, ea + eb, sc, mc, ec, rm)


def negate(f: Format, a: int) -> int:
    return (a ^ f.sign) & f.mask


# ---------------------------------------------------------------------------- compare

EQ, LT, LE, MAG_LT, UNORD, NE_UN, GE, GT, MAG_GE, ORD = 0, 1, 2, 3, 4, 5, 9, 10, 11, 12


def _key(f: Format, bits: int) -> int:
    """An integer that orders non-NaN values like the reals (+0 and -0 equal)."""
    mag = bits & ~f.sign & f.mask
    return -mag if bits & f.sign else mag


def compare(f: Format, a: int, b: int) -> int:
    """The FCMP relation vector (spec 3.4): bit n = relation n holds.

    The magnitude relations (bits 3 and 11) compare the magnitude bit patterns as
    the HDL's comparator does, so exactly one of them is set even with NaNs.
    """
    mag_lt = (a & ~f.sign & f.mask) < (b & ~f.sign & f.mask)
    out = (1 << MAG_LT) if mag_lt else (1 << MAG_GE)
    if is_nan(f, a) or is_nan(f, b):
        return out | (1 << UNORD) | (1 << NE_UN)
    ka, kb = _key(f, a), _key(f, b)
    eq, lt = ka == kb, ka < kb
    out |= 1 << ORD
    if eq:
        out |= (1 << EQ) | (1 << LE) | (1 << GE)
    elif lt:
        out |= (1 << LT) | (1 << LE) | (1 << NE_UN)
    else:
        out |= (1 << GT) | (1 << GE) | (1 << NE_UN)
    return out


# ---------------------------------------------------------------------------- classification

def classify(f: Format, a: int, out_width: int = 32) -> int:
    """FCLASS bits (spec 4.6, HDL layout): bits 1 and 6 are the plain sign tests.

    The sign copy goes to bit 31, or to the element's top bit when the result is
    narrower (binary16 vectors), so the class word is negative iff the input is.
    """
    kind, sign, mant, _ = unpack(f, a)
    top_bit = min(31, out_width - 1)
    out = (1 << 1) if sign else (1 << 6)
    if kind == INF:
        out |= 1 << (0 if sign else 7)
    elif kind == ZERO:
        out |= 1 << (3 if sign else 4)
    elif kind == NUM and mant < f.hidden:
        out |= 1 << (2 if sign else 5)
    elif kind == NAN:
        out |= 1 << (9 if mant >> (f.fbits - 1) else 8)
    return out | (sign << top_bit)


def fsign(f: Format, a: int) -> int:
    """+1.0 / -1.0 by sign, +0.0 for either zero (NaN: +-1.0 by its sign, as the HDL)."""
    kind, sign, _, _ = unpack(f, a)
    if kind == ZERO:
        return 0
    return (sign << (f.width - 1)) | f.one


def finite(f: Format, a: int) -> int:
    return int(((a >> f.fbits) & f.exp_all) != f.exp_all)


# ---------------------------------------------------------------------------- conversions

def trunc(f: Format, a: int) -> int:
    """Round toward zero to an integral value (sign of zero results kept)."""
    kind, sign, mant, exp = unpack(f, a)
    if kind == NAN:
        return f.qnan
    if kind != NUM or exp >= 0:
        return a & f.mask
    mant >>= -exp
    return pack(f, sign, mant, 0, RTZ)


def to_int(f: Format, a: int, iw: int, rm: int = RNE) -> int:
    """Float -> signed ``iw``-bit integer (as an unsigned pattern), saturating.

    Out-of-range values give the largest or smallest integer by sign; NaN gives
    the largest (spec 4.6 PROPOSAL).
    """
    hi, lo = (1 << (iw - 1)) - 1, -(1 << (iw - 1))
    kind, sign, mant, exp = unpack(f, a)
    if kind == NAN:
        value = hi
    elif kind == INF:
        value = lo if sign else hi
    elif kind == ZERO:
        value = 0
    else:
        if exp >= 0:
            n = hi + 1 if mant.bit_length() + exp > iw else mant << exp
        else:
            n = mant >> -exp
            if rm == RNE:
                rem = mant & ((1 << -exp) - 1)
                half = 1 << (-exp - 1)
                if rem > half or (rem == half and n & 1):
                    n += 1
        value = max(lo, min(hi, -n if sign else n))
    return value & ((1 << iw) - 1)


def from_int(f: Format, value: int, rm: int = RNE) -> int:
    """Signed integer -> float, rounded with ``rm``."""
    if value == 0:
        return 0
    return pack(f, int(value < 0), abs(value), 0, rm)


def convert(src: Format, dst: Format, a: int, rm: int = RNE) -> int:
    """Re-encode a value of format ``src`` in format ``dst`` (NaN -> canonical NaN)."""
    kind, sign, mant, exp = unpack(src, a)
    if kind == NAN:
        return dst.qnan
    if kind == INF:
        return signed_inf(dst, sign)
    if kind == ZERO:
        return signed_zero(dst, sign)
    return pack(dst, sign, mant, exp, rm)


def from_pyfloat(f: Format, x: float, rm: int = RNE) -> int:
    """A Python float rounded into ``f`` (used for FSIGMOID and by tests)."""
    if math.isnan(x):
        return f.qnan
    sign = int(math.copysign(1.0, x) < 0)
    if math.isinf(x):
        return signed_inf(f, sign)
    if x == 0:
        return signed_zero(f, sign)
    num, den = abs(x).as_integer_ratio()
    return pack(f, sign, num, -(den.bit_length() - 1), rm)


def to_pyfloat(f: Format, a: int) -> float:
    """The value of ``a`` as a Python float (rounded for binary128; for tests/estimates)."""
    kind, sign, mant, exp = unpack(f, a)
    if kind == NAN:
        return math.nan
    value = math.inf if kind == INF else math.ldexp(mant, exp) if kind == NUM else 0.0
    return -value if sign else value


# ---------------------------------------------------------------------------- estimates

def recip(f: Format, a: int) -> int:
    """FRES: 1/a correctly rounded to nearest even (the spec allows exact results)."""
    kind, sign, mant, exp = unpack(f, a)
    if kind == NAN:
        return f.qnan
    if kind == INF:
        return signed_zero(f, sign)
    if kind == ZERO:
        return signed_inf(f, sign)
    k = mant.bit_length() + f.fbits + 3
    q, r = divmod(1 << k, mant)
    return pack(f, sign, q, -k - exp, RNE, sticky=r != 0)


def rsqrt(f: Format, a: int) -> int:
    """FRSQRTE: 1/sqrt(a) correctly rounded; negative -> NaN, +-0 -> +-inf, +inf -> +0."""
    kind, sign, mant, exp = unpack(f, a)
    if kind == NAN or (sign and kind != ZERO):
        return f.qnan
    if kind == ZERO:
        return signed_inf(f, sign)
    if kind == INF:
        return 0
    if exp & 1:
        mant <<= 1
        exp -= 1
    k = f.fbits + 4 + (mant.bit_length() + 1) // 2
    n = 1 << (2 * k)
    q = math.isqrt(n // mant)
    return pack(f, 0, q, -k - exp // 2, RNE, sticky=q * q * mant != n)


SIGMOID_LIMIT = 8


def sigmoid(f: Format, a: int) -> int:
    """FSIGMOID: 1/(1+e**-a) on [-8, 8]; 0.0 below -8 and 1.0 above 8 (as the HDL table)."""
    kind, sign, mant, exp = unpack(f, a)
    if kind == NAN:
        return f.qnan
    if kind == INF or (kind == NUM and
                       (mant << max(exp, 0)) > (SIGMOID_LIMIT << max(-exp, 0))):
        return f.one if not sign else 0
    x = to_pyfloat(f, a)
    return from_pyfloat(f, 1.0 / (1.0 + math.exp(-x)), RNE)
