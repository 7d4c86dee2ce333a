"""Element formats of the tile coprocessor and their bit-exact encode/decode.

Every numeric routine of the package works on two exact host representations: float formats
are decoded to float64 (every fp32, fp16, bf16, tf32 and fp8 value, including subnormals, is
exactly a float64) and integer formats to int64.  Rounding back into a format is done on the
bit patterns by :mod:`tessera_tile.numerics.rounding`, because numpy and ml-dtypes only cast
with round-to-nearest-even and know nothing of the RISC-V rounding modes or flags.

``TFMT`` is the code table of the ``tfmt`` CSR (tile.md 5.4); the other formats (fp64 for FPR
scalars, tf32 and the 4-bit and unsigned 8-bit integers of the MMA table) have ``code=None``.
"""

from __future__ import annotations

import attrs
import ml_dtypes
import numpy as np
import numpy.typing as npt

# RISC-V fflags bits (the tile CSR ``tfflags`` accrues them the same way).
NV = 0x10  #: invalid operation
DZ = 0x08  #: divide by zero
OF = 0x04  #: overflow
UF = 0x02  #: underflow
NX = 0x01  #: inexact


@attrs.frozen
class Format:
    """One element format.

    ``nbytes`` is the storage unit (1 for the 4-bit integers, which are packed two to a byte,
    low nibble first); ``bits`` is the element width in bits.  Float formats carry their
    exponent/mantissa widths; ``ieee`` is False for the OCP ``fn`` style (e4m3fn: no
    infinities, the only NaN is all ones in exponent and mantissa).
    """

    name: str
    code: int | None
    nbytes: int
    is_float: bool
    dtype: np.dtype = attrs.field(converter=np.dtype)
    ebits: int = 0
    mbits: int = 0
    ieee: bool = True
    signed: bool = True
    width: int = 0

    @property
    def bits(self) -> int:
        return self.width or 8 * self.nbytes

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def sign_code(self) -> int:
        return 1 << (self.bits - 1)

    @property
    def inf_code(self) -> int | None:
        """Positive infinity, or None for a format without infinities."""
        return ((1 << self.ebits) - 1) << self.mbits if self.ieee else None

    @property
    def nan_code(self) -> int:
        """The canonical NaN: positive, quiet, zero payload (RISC-V), all ones for fn formats."""
        if self.ieee:
            return (((1 << self.ebits) - 1) << self.mbits) | (1 << (self.mbits - 1))
        return (1 << (self.ebits + self.mbits)) - 1

    @property
    def max_code(self) -> int:
        """Largest finite magnitude."""
        if self.ieee:
            return (((1 << self.ebits) - 1) << self.mbits) - 1
        return (1 << (self.ebits + self.mbits)) - 2

    @property
    def int_min(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def int_max(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    @property
    def uint(self) -> np.dtype:
        """The unsigned storage dtype of one element (uint8 for the 4-bit integers)."""
        return np.dtype(f"<u{self.nbytes}")


def _float(name: str, code: int | None, nbytes: int, dtype: npt.DTypeLike, ebits: int, mbits: int,
           ieee: bool = True) -> Format:
    return Format(name, code, nbytes, True, dtype, ebits=ebits, mbits=mbits, ieee=ieee)


def _int(name: str, code: int | None, nbytes: int, dtype: npt.DTypeLike, signed: bool = True,
         width: int = 0) -> Format:
    return Format(name, code, nbytes, False, dtype, signed=signed, width=width)


FP64 = _float("fp64", None, 8, np.float64, 11, 52)
FP32 = _float("fp32", 0, 4, np.float32, 8, 23)
FP16 = _float("fp16", 1, 2, np.float16, 5, 10)
BF16 = _float("bf16", 2, 2, ml_dtypes.bfloat16, 8, 7)
E4M3 = _float("fp8e4m3", 3, 1, ml_dtypes.float8_e4m3fn, 4, 3, ieee=False)
E5M2 = _float("fp8e5m2", 4, 1, ml_dtypes.float8_e5m2, 5, 2)
INT32 = _int("int32", 5, 4, np.int32)
INT16 = _int("int16", 6, 2, np.int16)
INT8 = _int("int8", 7, 1, np.int8)
# MMA-only operand formats.  tf32 is stored as an fp32 word (see mma.py for the truncation).
TF32 = _float("tf32", None, 4, np.float32, 8, 10)
UINT8 = _int("uint8", None, 1, np.uint8, signed=False)
INT4 = _int("int4", None, 1, ml_dtypes.int4, width=4)
UINT4 = _int("uint4", None, 1, ml_dtypes.uint4, signed=False, width=4)

TFMT: dict[int, Format] = {f.code: f for f in (FP32, FP16, BF16, E4M3, E5M2, INT32, INT16, INT8)
                           if f.code is not None}
FORMATS: dict[str, Format] = {f.name: f for f in (FP64, FP32, FP16, BF16, E4M3, E5M2, INT32, INT16,
                                                  INT8, TF32, UINT8, INT4, UINT4)}


def lookup(fmt: Format | int | str) -> Format:
    """Accept a Format, a ``tfmt`` code or a format name; anything else is a ValueError."""
    if isinstance(fmt, Format):
        return fmt
    table: dict = TFMT if isinstance(fmt, int) else FORMATS
    try:
        return table[fmt]
    except KeyError:
        raise ValueError(f"unknown data format {fmt!r}") from None


def codes(data: bytes | npt.NDArray, fmt: Format) -> npt.NDArray[np.uint64]:
    """The raw element bit patterns (4-bit formats unpacked, low nibble first) as uint64."""
    raw = np.frombuffer(bytes(data), dtype=np.uint8) if isinstance(data, bytes | bytearray | memoryview) \
        else np.ascontiguousarray(data).view(np.uint8).ravel()
    if fmt.bits == 4:
        out = np.empty(2 * raw.size, dtype=np.uint64)
        out[0::2] = raw & 0xF
        out[1::2] = raw >> 4
        return out
    usable = raw[: raw.size - raw.size % fmt.nbytes]
    return usable.view(fmt.uint).astype(np.uint64)


def pack(bits: npt.NDArray, fmt: Format) -> bytes:
    """Inverse of :func:`codes`: element bit patterns (any integer dtype) to little-endian bytes."""
    b = np.asarray(bits).astype(np.uint64) & np.uint64((1 << fmt.bits) - 1)
    if fmt.bits == 4:
        return (b[0::2] | (b[1::2] << np.uint64(4))).astype(np.uint8).tobytes()
    return b.astype(fmt.uint).tobytes()


def to_float64(bits: npt.NDArray, fmt: Format) -> npt.NDArray[np.float64]:
    """Exact float64 values of float-format bit patterns (every NaN becomes the quiet float64 NaN,
    so that later numpy arithmetic never meets a signalling NaN)."""
    with np.errstate(invalid="ignore"):   # casting a signalling NaN "raises" invalid in numpy
        v = np.asarray(bits).astype(fmt.uint).view(fmt.dtype).astype(np.float64)
    return np.where(np.isnan(v), np.nan, v)


def to_int64(bits: npt.NDArray, fmt: Format) -> npt.NDArray[np.int64]:
    """Integer-format bit patterns to their (signed or unsigned) values."""
    v = np.asarray(bits).astype(np.int64) & ((1 << fmt.bits) - 1)
    if fmt.signed:
        v = np.where(v >= (1 << (fmt.bits - 1)), v - (1 << fmt.bits), v)
    return v


def decode(data: bytes | npt.NDArray, fmt: Format) -> npt.NDArray:
    """Bytes to values: float64 for float formats, int64 for integer formats."""
    bits = codes(data, fmt)
    return to_float64(bits, fmt) if fmt.is_float else to_int64(bits, fmt)


def is_nan_code(bits: npt.NDArray, fmt: Format) -> npt.NDArray[np.bool_]:
    mag = np.asarray(bits).astype(np.uint64) & np.uint64(fmt.sign_code - 1)
    if fmt.inf_code is not None:
        return mag > np.uint64(fmt.inf_code)
    return mag == np.uint64(fmt.nan_code)


def is_snan_code(bits: npt.NDArray, fmt: Format) -> npt.NDArray[np.bool_]:
    """Signalling NaNs: IEEE formats with the quiet bit (mantissa MSB) clear; fn formats have none."""
    if fmt.inf_code is None:
        return np.zeros(np.shape(bits), dtype=bool)
    quiet = np.uint64(1 << (fmt.mbits - 1))
    return is_nan_code(bits, fmt) & ((np.asarray(bits).astype(np.uint64) & quiet) == 0)


def one_code(fmt: Format) -> int:
    """The bit pattern of the value 1 (comparison results are 1/0 in the element type)."""
    return fmt.bias << fmt.mbits if fmt.is_float else 1


def int_code(value: int, fmt: Format) -> int:
    """Bit pattern of an integer value of an integer format (two's complement, no range check)."""
    return value & ((1 << fmt.bits) - 1)
