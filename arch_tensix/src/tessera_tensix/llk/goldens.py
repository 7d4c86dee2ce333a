"""Inputs and numpy goldens for tt-llk's test kernels: what ``tessera tensix check`` compares a run with.

The vendor's harness (``tests/python_tests``) writes each kernel's operands to L1, runs
the kernel and compares its result with a torch golden under a per-format tolerance.
This module does the same job with numpy, from each kernel's definition, in three parts:

* **L1 encodings** (:data:`ENCODINGS`): how a format's values are stored (Float16_b is
  the upper half of an fp32, Int32 and Int8 are sign-magnitude, Bfp8_b is one shared
  exponent byte per 16 datums followed by the 1024 sign-magnitude mantissa bytes of the
  tile), which values a format can hold (``quantize``), and the vendor's tolerance.
* **Layouts**: ``tiles`` (32x32 tiles row by row, each four 16x16 faces, face rows in
  order) or ``row_major`` (what the tilize/untilize kernels read or write).
* **Kernels** (:data:`KERNELS`): each operand's shape, two ways to make inputs —
  *integer* (small integers chosen so every intermediate and the result are exact in
  every format of the pipeline, so the comparison is exact) and *random* (uniform, as the
  harness's stimuli, compared under the vendor's tolerance) — and the golden, computed in
  float64 from the values the inputs hold in their L1 format and rounded to the output
  format.  A kernel not listed has no golden; adding one is one :class:`KernelSpec`.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tessera.errors import ConfigError
from tessera_tensix.l1io import from_bf16_bits, to_bf16_bits

TILE, FACE = 32, 16
#: the harness's Pearson-correlation floor for random inputs (helpers/utils.py passed_test)
PCC_FLOOR = 0.99

# ------------------------------------------------------------------ L1 encodings


def _round_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _sign_magnitude(bits: int) -> tuple[Callable, Callable, Callable]:
    """Quantize, encode and decode of a ``bits``-wide sign-magnitude integer (the hardware's Int32/Int8)."""
    top = (1 << (bits - 1)) - 1
    dtype = np.dtype(f"<u{bits // 8}")

    def quantize(v: np.ndarray) -> np.ndarray:
        return np.clip(_round_away(np.asarray(v, dtype=np.float64)), -top, top)

    def encode(v: np.ndarray) -> bytes:
        q = quantize(v)
        mag = np.abs(q).astype(np.uint64)
        sign = (q < 0).astype(np.uint64) << np.uint64(bits - 1)
        return (sign | mag).astype(dtype).tobytes()

    def decode(raw: bytes) -> np.ndarray:
        word = np.frombuffer(raw, dtype=dtype).astype(np.int64)
        mag = (word & top).astype(np.float64)
        return np.where(word >> (bits - 1) & 1, -mag, mag)

    return quantize, encode, decode


def _bfp8_blocks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shared exponents (one per 16 datums) and sign-magnitude mantissa bytes of Bfp8_b.

    The shared exponent is the largest BF16 exponent of the block; each datum keeps a 7-bit
    magnitude in units of 2**(exponent - 127 - 6), rounded to nearest (ties away from zero)
    and saturated at 127; a zero magnitude is written with sign 0.
    """
    x = np.asarray(values, dtype=np.float64).reshape(-1, 16)
    exps = (to_bf16_bits(x.astype(np.float32)).astype(np.int64) >> 7) & 0xFF
    shared = exps.max(axis=1, keepdims=True)
    unit = np.ldexp(1.0, (shared - 127 - 6).astype(np.int64))
    mag = np.minimum(np.floor(np.abs(x) / unit + 0.5), 127).astype(np.int64)
    sign = ((x < 0) & (mag > 0)).astype(np.int64)
    return shared.reshape(-1).astype(np.uint8), ((sign << 7) | mag).astype(np.uint8).reshape(-1)


def _bfp8_encode(values: np.ndarray) -> bytes:
    tiles = np.asarray(values, dtype=np.float64).reshape(-1, 1024)
    out = bytearray()
    for tile in tiles:
        exps, mants = _bfp8_blocks(tile)
        out += exps.tobytes() + mants.tobytes()
    return bytes(out)


def _bfp8_decode(raw: bytes) -> np.ndarray:
    data = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 1088)
    exps = data[:, :64].astype(np.int64).reshape(-1, 64, 1)
    mants = data[:, 64:].astype(np.int64).reshape(-1, 64, 16)
    mag = (mants & 0x7F).astype(np.float64) * np.ldexp(1.0, exps - 127 - 6)
    return np.where(mants & 0x80, -mag, mag).reshape(-1)


@dataclass(frozen=True)
class Encoding:
    """One L1 format: what values it holds, its bytes, and the vendor's tolerance for it."""

    name: str
    integer: bool
    encode: Callable[[np.ndarray], bytes]          # values in L1 order (whole tiles for Bfp8_b) -> bytes
    decode: Callable[[bytes], np.ndarray]
    atol: float
    rtol: float
    #: how a run manifest declares this format's output so the loader saves its raw bits
    #: (``None``: the loader's own format of the same name reads the values)
    raw_format: str | None = None
    #: largest integer magnitude the format holds exactly
    exact_limit: float = math.inf
    #: bytes per 32x32 tile
    tile_bytes: int = 2048

    def quantize(self, values: np.ndarray) -> np.ndarray:
        """The values the format holds nearest to ``values`` (L1 order)."""
        return self.decode(self.encode(values))

    def saved(self, array: np.ndarray) -> np.ndarray:
        """The values of an output the loader saved (raw bits when ``raw_format`` is set)."""
        if self.raw_format is None:
            return np.asarray(array, dtype=np.float64).reshape(-1)
        return self.decode(np.ascontiguousarray(array).tobytes())


_I32 = _sign_magnitude(32)
_I8 = _sign_magnitude(8)
ENCODINGS: dict[str, Encoding] = {e.name: e for e in [
    Encoding("Float16_b", False, lambda v: to_bf16_bits(np.asarray(v, np.float32)).astype("<u2").tobytes(),
             lambda b: from_bf16_bits(np.frombuffer(b, "<u2")).astype(np.float64), 0.05, 0.05, exact_limit=256),
    Encoding("Float16", False, lambda v: np.asarray(v, np.float64).astype("<f2").tobytes(),
             lambda b: np.frombuffer(b, "<f2").astype(np.float64), 0.05, 0.05, exact_limit=2048),
    Encoding("Float32", False, lambda v: np.asarray(v, np.float64).astype("<f4").tobytes(),
             lambda b: np.frombuffer(b, "<f4").astype(np.float64), 0.05, 0.05, exact_limit=2 ** 24, tile_bytes=4096),
    Encoding("Int32", True, _I32[1], _I32[2], 0.0, 0.0, raw_format="UInt32", exact_limit=2 ** 31 - 1,
             tile_bytes=4096),
    Encoding("Int8", True, _I8[1], _I8[2], 0.0, 0.0, raw_format="UInt8", exact_limit=127, tile_bytes=1024),
    Encoding("Bfp8_b", False, _bfp8_encode, _bfp8_decode, 0.1, 0.2, raw_format="UInt8", exact_limit=127,
             tile_bytes=1088),
]}


def encoding(name: str) -> Encoding:
    try:
        return ENCODINGS[name]
    except KeyError:
        raise ConfigError(f"format {name!r}: tessera tensix check has no L1 encoding for it "
                          f"(use {', '.join(ENCODINGS)})") from None


# ------------------------------------------------------------------ layouts


def tilize(matrix: np.ndarray) -> np.ndarray:
    """A matrix of 32x32 tiles as L1 holds it: tiles row by row, each four 16x16 faces."""
    rows, cols = matrix.shape[0] // TILE, matrix.shape[1] // TILE
    return (np.asarray(matrix).reshape(rows, 2, FACE, cols, 2, FACE)
            .transpose(0, 3, 1, 4, 2, 5).reshape(-1))


def untilize(flat: np.ndarray, dims: tuple[int, int]) -> np.ndarray:
    """The matrix whose :func:`tilize` is ``flat``."""
    rows, cols = dims[0] // TILE, dims[1] // TILE
    return (np.asarray(flat).reshape(rows, cols, 2, 2, FACE, FACE)
            .transpose(0, 2, 4, 1, 3, 5).reshape(dims))


def l1_order(matrix: np.ndarray, layout: str) -> np.ndarray:
    return tilize(matrix) if layout == "tiles" else np.asarray(matrix).reshape(-1)


def per_tile(matrix: np.ndarray, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``fn`` applied to every 32x32 tile of ``matrix`` (same shape out)."""
    out = np.empty_like(matrix, dtype=np.float64)
    for r in range(0, matrix.shape[0], TILE):
        for c in range(0, matrix.shape[1], TILE):
            out[r:r + TILE, c:c + TILE] = fn(matrix[r:r + TILE, c:c + TILE])
    return out


def transpose_tile(tile: np.ndarray, *, faces: bool, within: bool) -> np.ndarray:
    """A tile with its faces swapped across the diagonal and/or each face transposed."""
    f = tile.reshape(2, FACE, 2, FACE)          # (face row, row, face column, column)
    if within:
        f = f.transpose(0, 3, 2, 1)
    if faces:
        f = f.transpose(2, 1, 0, 3)
    return f.reshape(TILE, TILE)


# ------------------------------------------------------------------ what a build is


@dataclass(frozen=True)
class Buffer:
    name: str
    address: int
    format: str
    tiles: int
    tile_bytes: int
    layout: str
    fill: float | None = None


@dataclass(frozen=True)
class Built:
    """What ``kernel.toml`` says about a build, as the goldens need it."""

    path: Path
    kernel: str
    chip: str
    dims: tuple[int, int]
    op: str | None
    params: dict[str, Any]         # the build header's constants and runtime fields
    formats: dict[str, str]
    inputs: tuple[Buffer, ...]
    outputs: tuple[Buffer, ...]

    def param(self, name: str, default: Any = None) -> Any:
        return self.params.get(name, default)

    def flag(self, name: str) -> bool:
        value = self.params.get(name, False)
        return value is True or str(value).lower() == "true"


def read_built(path: Path) -> Built:
    """The build described by ``path`` (a ``kernel.toml`` that ``tessera tensix build`` wrote)."""
    raw = tomllib.loads(path.read_text())
    config = raw.get("config", {})

    def buffers(table: str) -> tuple[Buffer, ...]:
        return tuple(Buffer(name=b["name"], address=b["address"], format=b["format"], tiles=b["tiles"],
                            tile_bytes=b["tile_bytes"], layout=b.get("layout", "tiles"), fill=b.get("fill"))
                     for b in raw.get(table, []))
    dims = config.get("dims", [TILE, TILE])
    return Built(path=path, kernel=raw["kernel"], chip=raw["chip"], dims=(int(dims[0]), int(dims[1])),
                 op=config.get("op"), params={**config.get("constants", {}), **config.get("runtime", {})},
                 formats=dict(config.get("formats", {})), inputs=buffers("inputs"), outputs=buffers("outputs"))


# ------------------------------------------------------------------ inputs

Inputs = dict[str, np.ndarray]
Rng = np.random.Generator


def ints(rng: Rng, shape: tuple[int, int], bound: int) -> np.ndarray:
    return rng.integers(-bound, bound + 1, shape).astype(np.float64)


def uniform(rng: Rng, shape: tuple[int, int], low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return rng.uniform(low, high, shape)


def sparse_signs(rng: Rng, shape: tuple[int, int], per_tile_nonzero: int) -> np.ndarray:
    """Values in {-1, 0, 1} with at most ``per_tile_nonzero`` non-zeros in each 32x32 tile
    (a sum over a whole tile then stays exact in a 7-bit mantissa)."""
    out = np.zeros(shape)
    for r in range(0, shape[0], TILE):
        for c in range(0, shape[1], TILE):
            spots = rng.choice(TILE * TILE, per_tile_nonzero, replace=False)
            block = np.zeros(TILE * TILE)
            block[spots] = rng.choice([-1.0, 1.0], per_tile_nonzero)
            out[r:r + TILE, c:c + TILE] = block.reshape(TILE, TILE)
    return out


def sparse_rows(rng: Rng, shape: tuple[int, int], per_row_nonzero: int) -> np.ndarray:
    """Values in {-1, 0, 1} with at most ``per_row_nonzero`` non-zeros per row (a matmul's
    dot products then stay below that bound, exact in every format)."""
    out = rng.integers(-1, 2, shape).astype(np.float64)
    for row in out:
        nonzero = np.flatnonzero(row)
        if len(nonzero) > per_row_nonzero:
            row[rng.choice(nonzero, len(nonzero) - per_row_nonzero, replace=False)] = 0.0
    return out


def copy_bound(fmt: str) -> int:
    """Integers a copy moves exactly through any pipeline: 7-bit magnitudes (Bfp8_b, Int8 and
    the 16-bit floats all hold them); Int32 gets wider values, as its 32-bit Dest keeps them."""
    return 1 << 20 if fmt == "Int32" else 100


def random_values(rng: Rng, shape: tuple[int, int], fmt: str, *, low: float = -1.0, high: float = 1.0,
                  int_bound: int = 50) -> np.ndarray:
    """The harness's default stimuli: uniform floats; integers over a range the format holds."""
    if encoding(fmt).integer:
        return ints(rng, shape, (1 << 20) if fmt == "Int32" else int_bound)
    return uniform(rng, shape, low, high)


# ------------------------------------------------------------------ kernels


@dataclass(frozen=True)
class KernelSpec:
    """How ``tessera tensix check`` feeds and judges one kernel."""

    summary: str
    #: logical shape (rows, columns) of each input, by name
    shapes: Callable[[Built], dict[str, tuple[int, int]]]
    #: integer-valued inputs whose results are exact: (rng, build, shapes, input formats) -> matrices
    integer: Callable[[Rng, Built, dict[str, tuple[int, int]], dict[str, str]], Inputs]
    #: random inputs, as the harness's stimuli
    random: Callable[[Rng, Built, dict[str, tuple[int, int]], dict[str, str]], Inputs]
    #: the result in the output's L1 order, from the inputs' values (float64)
    golden: Callable[[Inputs, Built], np.ndarray]
    #: L1 formats the vendor's own test runs the kernel with (input = output), for the matrix
    formats: tuple[str, ...]
    #: the kernel multiplies (True, or the --op values that do): the check's default MATH_FIDELITY is
    #: HiFi4, as the golden is the full-precision product (tt-llk refuses a fidelity on add/sub)
    multiplies: bool | frozenset[str] = False
    #: build parameters whose other values the golden does not describe, with the value it assumes
    assumes: Mapping[str, Any] = field(default_factory=dict)
    #: the matrix's operations (``--op``) and sizes: ("dims", "64x64") or ("params", {"RT_DIM": 2, ...})
    ops: tuple[str | None, ...] = (None,)
    sizes: tuple[tuple[str, Any], ...] = (("dims", "32x32"), ("dims", "64x64"))
    #: build options the vendor's test uses with a format (e.g. a 32-bit Dest for Float32 eltwise)
    format_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: (format, op) pairs the vendor's test leaves out (Int8 multiplies are not exact)
    excluded: frozenset[tuple[str, str | None]] = frozenset()


def _same_as_a(built: Built) -> dict[str, tuple[int, int]]:
    return {b.name: built.dims for b in built.inputs}


def _layout_out(built: Built, matrix: np.ndarray) -> np.ndarray:
    return l1_order(matrix, built.outputs[0].layout)


def _copy_int(rng: Rng, built: Built, shapes: dict, fmts: dict) -> Inputs:
    return {n: ints(rng, s, copy_bound(fmts[n])) for n, s in shapes.items()}


def _copy_random(rng: Rng, built: Built, shapes: dict, fmts: dict) -> Inputs:
    return {n: random_values(rng, s, fmts[n]) for n, s in shapes.items()}


def _copy_golden(x: Inputs, built: Built) -> np.ndarray:
    return _layout_out(built, x["A"])


# eltwise binary
_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply}


def _binary_op(built: Built) -> str:
    op = str(built.param("ELTWISE_BINARY_OP", "ELWADD"))
    return {"ELWADD": "add", "ELWSUB": "sub", "ELWMUL": "mul"}.get(op.rsplit("::", 1)[-1], op)


def _binary_int(rng: Rng, built: Built, shapes: dict, fmts: dict) -> Inputs:
    bound = 11 if _binary_op(built) == "mul" else 50      # |result| <= 121 / 100: a 7-bit magnitude
    return {n: ints(rng, s, bound) for n, s in shapes.items()}


def _binary_random(rng: Rng, built: Built, shapes: dict, fmts: dict) -> Inputs:
    bound = 11 if _binary_op(built) == "mul" else 50
    return {n: random_values(rng, s, fmts[n], int_bound=bound) for n, s in shapes.items()}


def _binary_golden(x: Inputs, built: Built) -> np.ndarray:
    op = _binary_op(built)
    if op not in _BINARY:
        raise ConfigError(f"eltwise_binary_test: no golden for ELTWISE_BINARY_OP {op}")
    return _layout_out(built, _BINARY[op](x["A"], x["B"]))


# matmul
def _matmul_shapes(built: Built) -> dict[str, tuple[int, int]]:
    rt, kt, ct = (int(built.param(n, 1)) for n in ("RT_DIM", "KT_DIM", "CT_DIM"))
    return {"A": (TILE * rt, TILE * kt), "B": (TILE * kt, TILE * ct)}


def _matmul_int(rng: Rng, built: Built, shapes: dict, fmts: dict) -> Inputs:
    return {"A": sparse_rows(rng, shapes["A"], 127), "B": rng.integers(-1, 2, shapes["B"]).astype(np.float64)}


def _matmul_random(rng: Rng, built: Built, shapes: dict, fmts: dict) -> Inputs:
    return {n: random_values(rng, s, fmts[n], low=0.0, high=1.0, int_bound=3) for n, s in shapes.items()}


def _matmul_golden(x: Inputs, built: Built) -> np.ndarray:
    block = tilize(x["A"] @ x["B"])
    return np.tile(block, max(1, int(built.param("NUM_BLOCKS", 1))))


# reduce
def _reduce_kind(built: Built) -> tuple[str, str]:
    dim = str(built.param("REDUCE_DIM", "REDUCE_ROW")).rsplit("::", 1)[-1].removeprefix("REDUCE_").lower()
    pool = str(built.param("POOL_TYPE", "SUM")).rsplit("::", 1)[-1].lower()
    return dim, pool


def _reduce_int(rng: Rng, built: Built, shapes: dict, fmts: dict) -> Inputs:
    dim, _pool = _reduce_kind(built)
    a = sparse_signs(rng, shapes["A"], 100) if dim == "scalar" else ints(rng, shapes["A"], 3)
    return {"A": a}


def _reduce_random(rng: Rng, built: Built, shapes: dict, fmts: dict) -> Inputs:
    return {"A": random_values(rng, shapes["A"], fmts["A"], int_bound=3)}


def _reduce_tile(tile: np.ndarray, dim: str, pool: str) -> np.ndarray:
    """The reduction in a zero tile: rows -> column 0, columns -> row 0, scalar -> [0, 0]."""
    fn: Any = {"sum": np.sum, "avg": np.mean, "max": np.max}[pool]
    out = np.zeros_like(tile)
    if dim == "row":
        out[:, 0] = fn(tile, axis=1)
    elif dim == "col":
        out[0, :] = fn(tile, axis=0)
    else:
        out[0, 0] = fn(tile)
    return out


def _reduce_golden(x: Inputs, built: Built) -> np.ndarray:
    dim, pool = _reduce_kind(built)
    if dim not in ("row", "col", "scalar") or pool not in ("sum", "avg", "max"):
        raise ConfigError(f"reduce_test: no golden for REDUCE_DIM {dim} with POOL_TYPE {pool}")
    return tilize(per_tile(x["A"], lambda t: _reduce_tile(t, dim, pool)))


# transposes
def _transpose_dest_golden(x: Inputs, built: Built) -> np.ndarray:
    faces = built.flag("MATH_TRANSPOSE_FACES") != built.flag("UNPACK_TRANSPOSE_FACES")
    return tilize(per_tile(x["A"], lambda t: transpose_tile(t, faces=faces, within=True)))


def _unpack_a_golden(x: Inputs, built: Built) -> np.ndarray:
    faces, within = built.flag("UNPACK_TRANSPOSE_FACES"), built.flag("UNPACK_TRANSPOSE_WITHIN_FACE")
    return tilize(per_tile(x["A"], lambda t: transpose_tile(t, faces=faces, within=within)))


_FLOATS = ("Float16_b", "Float16", "Float32", "Bfp8_b")
_COPY: dict[str, Any] = {"shapes": _same_as_a, "integer": _copy_int, "random": _copy_random}
#: one tile, four, and eight in a row (two Dest blocks when Dest is 32-bit: it holds four tiles per half)
_TWO_BLOCKS = (("dims", "32x32"), ("dims", "64x64"), ("dims", "32x256"))

KERNELS: dict[str, KernelSpec] = {
    "eltwise_unary_datacopy_test": KernelSpec(
        "res = A (tilize_en: A row-major, res in tiles)", golden=_copy_golden, formats=_FLOATS,
        assumes={"num_faces": 4}, sizes=_TWO_BLOCKS, **_COPY),
    "eltwise_binary_test": KernelSpec(
        "res = A op B elementwise", _same_as_a, _binary_int, _binary_random, _binary_golden,
        formats=(*_FLOATS, "Int8"), multiplies=frozenset({"mul"}), ops=("add", "sub", "mul"),
        assumes={"BROADCAST_TYPE": "NONE", "ACC_TO_DEST": False, "REUSE_DEST_TYPE": "NONE",
                 "UNPACK_TRANSPOSE_FACES": False, "UNPACK_TRANSPOSE_WITHIN_FACE": False, "num_faces": 4},
        format_options={"Float32": {"dest_acc": True}, "Int8": {"dest_acc": True}},
        excluded=frozenset({("Int8", "mul")})),
    "matmul_test": KernelSpec(
        "res = A @ B (tiles)", _matmul_shapes, _matmul_int, _matmul_random, _matmul_golden, formats=_FLOATS,
        multiplies=True, assumes={"UNPACK_TRANSPOSE_FACES": False},
        sizes=(("params", {"RT_DIM": 1, "KT_DIM": 1, "CT_DIM": 1}), ("params", {"RT_DIM": 2, "KT_DIM": 2, "CT_DIM": 2}))),
    "math_matmul_test": KernelSpec(
        "res = A @ B, NUM_BLOCKS times", _matmul_shapes, _matmul_int, _matmul_random, _matmul_golden,
        formats=("Float16_b", "Float16", "Float32"), multiplies=True,
        assumes={"UNPACK_TRANSPOSE_FACES": False, "PARTIAL_FACE_A": False, "PARTIAL_FACE_B": False},
        sizes=(("params", {"RT_DIM": 1, "KT_DIM": 1, "CT_DIM": 1}), ("params", {"RT_DIM": 2, "KT_DIM": 2, "CT_DIM": 2}))),
    "reduce_test": KernelSpec(
        "res = reduce(A) per tile (B: the scaler)", _same_as_a, _reduce_int, _reduce_random, _reduce_golden,
        formats=("Float16_b", "Float32", "Bfp8_b"), multiplies=True, assumes={"IS_REDUCE_TO_ONE": False},
        ops=tuple(f"{d}-{p}" for d in ("row", "col", "scalar") for p in ("sum", "avg", "max"))),
    "unpack_tilize_test": KernelSpec(
        "res = tilize(A)", golden=_copy_golden, formats=("Float16_b", "Float16", "Float32", "Int32", "Int8"),
        assumes={"num_faces": 4}, format_options={"Int8": {"dest_acc": True}}, **_COPY),
    "pack_untilize_test": KernelSpec(
        "res = untilize(A)", golden=_copy_golden, formats=("Float16_b", "Float16", "Float32", "Int32"),
        assumes={"num_faces": 4, "TILE_DST_CT_OFFSET": 0}, **_COPY),
    "transpose_dest_test": KernelSpec(
        "res = transpose(A) per tile", golden=_transpose_dest_golden, formats=(*_FLOATS, "Int32", "Int8"),
        assumes={"num_faces": 4}, format_options={"Int8": {"dest_acc": True}}, **_COPY),
    "pack_test": KernelSpec(
        "res = A (through the packer)", golden=_copy_golden, formats=(*_FLOATS, "Int32"),
        assumes={"RELU_CONFIG": 0, "num_faces": 4}, sizes=_TWO_BLOCKS, **_COPY),
    "unpack_A_test": KernelSpec(
        "res = A (through unpacker A; transposes when set)", golden=_unpack_a_golden, formats=_FLOATS,
        assumes={"BROADCAST_TYPE": "NONE", "ACC_TO_DEST": False, "num_faces": 4}, **_COPY),
}
#: listed by issue 17 but not buildable here: kernel -> why (the matrix shows the build's own message)
UNBUILDABLE = {"multiple_tiles_eltwise_test": "stale upstream source (calls an older tt-llk API)",
               "eltwise_unary_typecast_test": "needs the SFPI compiler"}


def multiplies(kspec: KernelSpec, op: str | None) -> bool:
    return kspec.multiplies is True or (isinstance(kspec.multiplies, frozenset) and op in kspec.multiplies)


def spec(kernel: str) -> KernelSpec:
    try:
        return KERNELS[kernel]
    except KeyError:
        raise ConfigError(f"tessera tensix check has no golden for {kernel!r} (it knows {', '.join(KERNELS)}); other "
                          "tests/sources kernels build and run with `tessera tensix build` and `tessera run`") from None


def check_assumptions(built: Built, kspec: KernelSpec) -> None:
    """One-line ConfigError when the build uses a variant the golden does not describe."""
    for name, assumed in kspec.assumes.items():
        if name not in built.params:
            continue
        value = built.params[name]
        text = str(value).rsplit("::", 1)[-1]
        if value != assumed and text != str(assumed):
            raise ConfigError(f"{built.kernel}: the check's golden assumes {name}={assumed} (the build has {text})")


# ------------------------------------------------------------------ a prepared case


@dataclass(frozen=True)
class Prepared:
    """Inputs in L1 bytes, and the golden with its tolerance."""

    inputs: dict[str, bytes]         # input name -> bytes for L1
    golden: np.ndarray               # output values, L1 order, rounded to the output format
    atol: float
    rtol: float
    exact: bool                      # integer inputs: compared exactly


def prepare(built: Built, mode: str, seed: int) -> Prepared:
    """Inputs of ``mode`` (``integer`` or ``random``) and the golden for ``built``."""
    kspec = spec(built.kernel)
    check_assumptions(built, kspec)
    if mode not in ("integer", "random"):
        raise ConfigError(f"--inputs {mode!r}: use integer or random")
    if len(built.outputs) != 1:
        raise ConfigError(f"{built.kernel}: the check compares one output; the build has {len(built.outputs)}")
    rng = np.random.default_rng(seed)
    shapes = kspec.shapes(built)
    by_name = {b.name: b for b in built.inputs}
    layouts = {b.name: ("row_major" if b.name == "A" and built.flag("tilize_en") else b.layout) for b in built.inputs}
    fmts = {b.name: b.format for b in built.inputs}
    for name in fmts:
        encoding(fmts[name])
    out_enc = encoding(built.outputs[0].format)
    wanted = {n: s for n, s in shapes.items() if by_name.get(n) is not None and by_name[n].fill is None}
    made = (kspec.integer if mode == "integer" else kspec.random)(rng, built, wanted, fmts)
    values: Inputs = {}
    blobs: dict[str, bytes] = {}
    for buf in built.inputs:
        shape = shapes.get(buf.name, built.dims)
        matrix = np.full(shape, buf.fill, dtype=np.float64) if buf.fill is not None else made[buf.name]
        if matrix.size != buf.tiles * TILE * TILE:
            raise ConfigError(f"{built.kernel}: input {buf.name} holds {buf.tiles} tiles, the golden made "
                              f"{matrix.shape[0]}x{matrix.shape[1]}")
        enc = encoding(buf.format)
        blobs[buf.name] = enc.encode(l1_order(matrix, layouts[buf.name]))
        held = enc.decode(blobs[buf.name])
        values[buf.name] = (untilize(held, shape) if layouts[buf.name] == "tiles" else held.reshape(shape))
    raw = kspec.golden(values, built)
    golden = out_enc.quantize(raw)
    if mode == "integer" and not np.array_equal(golden, raw):
        first = int(np.flatnonzero(golden != raw)[0])
        raise AssertionError(f"integer inputs of {built.kernel} give {raw[first]!r}, which "
                             f"{out_enc.name} does not hold exactly")
    exact = mode == "integer"
    return Prepared(inputs=blobs, golden=golden, atol=0.0 if exact else out_enc.atol,
                    rtol=0.0 if exact else out_enc.rtol, exact=exact)


# ------------------------------------------------------------------ comparison


def where(index: int, layout: str, dims: tuple[int, int]) -> str:
    """Where element ``index`` of an output in L1 order sits, in words."""
    if layout != "tiles":
        return f"row {index // dims[1]}, column {index % dims[1]}"
    tile, within = divmod(index, TILE * TILE)
    face, rest = divmod(within, FACE * FACE)
    return f"tile {tile}, face {face}, row {rest // FACE}, column {rest % FACE}"


def compare(got: np.ndarray, want: np.ndarray, *, atol: float, rtol: float, layout: str,
            dims: tuple[int, int], pcc: bool) -> str | None:
    """None when ``got`` matches ``want`` (elementwise tolerance and, for random inputs, the
    harness's correlation floor); else one line naming the first differing element and how
    the differences spread over faces."""
    got, want = np.asarray(got, np.float64).reshape(-1), np.asarray(want, np.float64).reshape(-1)
    if got.size != want.size:
        return f"the output has {got.size} elements, the golden {want.size}"
    ok = (np.abs(got - want) <= atol + rtol * np.abs(want)) | (got == want) | (np.isnan(got) & np.isnan(want))
    if not ok.all():
        bad = np.flatnonzero(~ok)
        i = int(bad[0])
        spread = ""
        if layout == "tiles" and got.size % 1024 == 0:
            per_face = np.bincount((bad % 1024) // 256, minlength=4)
            spread = "; per face " + "/".join(str(int(n)) for n in per_face)
        return (f"element {i} ({where(i, layout, dims)}) is {got[i].item()!r}, expected {want[i].item()!r} "
                f"({len(bad)} of {got.size} differ{spread}; atol {atol}, rtol {rtol})")
    if pcc and np.std(got) > 0 and np.std(want) > 0 and np.max(np.abs(want)) > 1e-6:
        r = float(np.corrcoef(got, want)[0, 1])
        if not r > PCC_FLOOR:
            return f"every element within tolerance but the correlation is {r:.4f} (< {PCC_FLOOR})"
    return None
