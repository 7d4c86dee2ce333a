"""What a kernel build is given: the user's choices, turned into the values the harness would pass.

The harness's Python test for each kernel picks formats, the Dest mode, tile counts,
block sizes and the kernel's own parameters (``test_<kernel>.py``).  :func:`resolve`
does the same from :class:`Options`: shape parameters (``TILE_CNT``, ``NUM_BLOCKS``,
``FULL_CT_DIM``, matmul's ``RT_DIM/CT_DIM/KT_DIM`` ...) follow from the input size
and what fits in half of Dest, the values a kernel's vendor test always passes
(:mod:`.vendorvalues`) replace the generic defaults, :data:`PROFILES` adds what a known
kernel needs beyond that (its operation, which operand is row-major, what the harness
fills B with), and ``--param NAME=VALUE`` overrides anything.  A parameter the kernel
reads that nothing gives stops the build (:class:`~.params.MissingParameter`).  Any other
``tests/sources`` kernel gets the generic treatment: the same derivation, operands of one
tile count.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tessera.errors import ConfigError
from tessera_tensix.llk import chips, vendorvalues
from tessera_tensix.llk import formats as fmts
from tessera_tensix.llk.buildheader import Buffer, Spec
from tessera_tensix.llk.params import VOCABULARY, MissingParameter, Usage

TILE = 32
#: tiles half of Dest holds with 16-bit rows (SyncHalf; a 32-bit Dest holds half as many)
HALF_DEST_TILES = 8
#: operand buffers must end below the harness's performance-counter area
BUFFERS_END = 0x169000


@dataclass(frozen=True)
class Options:
    """What the user asked for (``tessera tensix build`` options)."""

    kernel: str
    chip: str = "blackhole"
    input_format: str = "Float16_b"
    output_format: str | None = None
    input_format_b: str | None = None
    dest_acc: bool | None = None          # None: what the harness would choose
    unpack_to_dest: bool | None = None
    dims: tuple[int, int] | None = None   # input rows x columns (elements); default 32 x 32*tiles
    tiles: int = 1
    math_fidelity: str | None = None
    op: str | None = None
    params: Mapping[str, object] = field(default_factory=dict)
    force_chip: bool = False              # build even when tt-llk's tests do not run the kernel on chip


@dataclass(frozen=True)
class Profile:
    """A known kernel's needs beyond the generic derivation."""

    golden: str                                           # what it computes (for the manifest)
    ops: Mapping[str, Mapping[str, object]] = field(default_factory=dict)   # --op -> parameter values
    default_op: str | None = None
    constants: Mapping[str, object] = field(default_factory=dict)
    operands: Callable[[dict], dict[str, int]] | None = None                # buffer -> tiles
    row_major: frozenset[str] = frozenset()               # buffers in row-major order (tilize/untilize)
    fills: Callable[[dict], dict[str, float]] | None = None   # buffers the harness fills with one value
    dest_acc: Callable[[str, str], bool] | None = None    # the harness's Dest mode for (input, output)
    block_per_row: bool = False                           # blocks are tiles of one tile-row (untilize)
    shape: Callable[[dict], dict[str, object]] | None = None   # tile counts that do not follow the input size
    unpack_to_dest: bool = True                           # may unpack 32-bit inputs straight to Dest


def _matmul_operands(v: dict) -> dict[str, int]:
    return {"buffer_A": v["RT_DIM"] * v["KT_DIM"], "buffer_B": v["KT_DIM"] * v["CT_DIM"],
            "buffer_Res": v["RT_DIM"] * v["CT_DIM"] * v.get("NUM_BLOCKS", 1)}


def _matmul_shape(v: dict) -> dict[str, object]:
    """One block of RT_DIM x CT_DIM output tiles (the harness's CRK_TILE_DIMM)."""
    product = int(v["RT_DIM"]) * int(v["CT_DIM"])
    return {"TILE_CNT": product, "NUM_TILES_IN_BLOCK": product, "NUM_BLOCKS": 1}


def _reduce_scaler(v: dict) -> dict[str, float]:
    """B is all ones (SUM, MAX) or 1/32 (AVG: a row, a column, or sqrt of a tile's 1024 elements)."""
    return {"buffer_B": 1.0 / 32 if str(v["POOL_TYPE"]).endswith("AVG") else 1.0}


_BINARY = {"add": {"ELTWISE_BINARY_OP": "ELWADD"}, "sub": {"ELTWISE_BINARY_OP": "ELWSUB"},
           "mul": {"ELTWISE_BINARY_OP": "ELWMUL"}}
_REDUCE = {f"{dim}-{pool}": {"REDUCE_DIM": f"REDUCE_{dim.upper()}", "POOL_TYPE": pool.upper()}
           for dim in ("row", "col", "scalar") for pool in ("sum", "avg", "max")}

PROFILES: dict[str, Profile] = {
    "eltwise_unary_datacopy_test": Profile("res = A (tilize_en: A row-major -> tiles)"),
    "eltwise_binary_test": Profile("res = A op B, elementwise (ELTWISE_BINARY_OP)", ops=_BINARY, default_op="add", unpack_to_dest=False),
    "multiple_tiles_eltwise_test": Profile("res = A op B, elementwise, TILE_CNT tiles", ops=_BINARY,
                                           default_op="add", unpack_to_dest=False),
    "matmul_test": Profile("res = A @ B (A: RT_DIMxKT_DIM tiles, B: KT_DIMxCT_DIM tiles, all tilized)",
                           operands=_matmul_operands, shape=_matmul_shape, unpack_to_dest=False),
    "math_matmul_test": Profile("res = A @ B, repeated NUM_BLOCKS times into consecutive output blocks",
                                operands=_matmul_operands, shape=_matmul_shape, unpack_to_dest=False),
    "reduce_test": Profile("res = reduce(A) along REDUCE_DIM with POOL_TYPE; B holds the scaler", ops=_REDUCE,
                           default_op="row-sum", fills=_reduce_scaler,
                           operands=lambda v: {"buffer_A": v["INPUT_TILE_CNT"], "buffer_B": v["INPUT_TILE_CNT"],
                                               "buffer_Res": v["OUTPUT_TILE_CNT"]},
                           dest_acc=lambda i, o: fmts.is_32bit(i) or (o == "Float32" and not fmts.is_32bit(i)),
                           unpack_to_dest=False),
    "unpack_tilize_test": Profile("res = tilize(A): A row-major, res in tiles", row_major=frozenset({"buffer_A"})),
    "pack_untilize_test": Profile("res = untilize(A): A in tiles, res row-major", row_major=frozenset({"buffer_Res"}),
                                  block_per_row=True),
    "transpose_dest_test": Profile("res = transpose(A) per tile (through Dest)",
                                   constants={"MATH_TRANSPOSE_FACES": True}),
    "pack_test": Profile("res = A (through the packer; RELU_CONFIG applies ReLU)"),
    "unpack_A_test": Profile("res = A (unpack A, with BROADCAST_TYPE / transposes when set)"),
    "eltwise_unary_typecast_test": Profile("res = A converted to the output format (SFPU typecast)",
                                           constants={"SFPU_UNARY_OPERATION": "typecast"}),
}


def profile(kernel: str) -> Profile:
    return PROFILES.get(kernel, Profile("(not described: see the kernel's test in tests/python_tests)"))


@dataclass(frozen=True)
class Resolved:
    """A build's :class:`Spec` and what the manifest says besides it."""

    spec: Spec
    values: dict[str, object]
    inputs: tuple[Buffer, ...]
    outputs: tuple[Buffer, ...]
    row_major: frozenset[str]
    fills: dict[str, float]
    dims: tuple[int, int]
    golden: str
    op: str | None


def resolve(opts: Options, usage: Usage) -> Resolved:
    """The build of ``opts.kernel`` as the harness would configure it."""
    chip = chips.chip(opts.chip)
    prof = profile(opts.kernel)
    src = fmts.check(opts.input_format, chip.name)
    dst = fmts.check(opts.output_format or src, chip.name)
    src_b = fmts.check(opts.input_format_b, chip.name) if opts.input_format_b else src
    dest_acc = _dest_acc(opts, prof, src, dst)
    unpack_to_dest = opts.unpack_to_dest if opts.unpack_to_dest is not None else (
        prof.unpack_to_dest and fmts.is_32bit(src) and dest_acc and not opts.params.get("tilize_en", False))
    formats = fmts.infer(src, dst, dest_acc=dest_acc, unpack_to_dest=unpack_to_dest, chip=chip.name, src_b=src_b)
    if prof.shape and (opts.dims or opts.tiles != 1):
        raise ConfigError(f"{opts.kernel} takes its size from RT_DIM, KT_DIM and CT_DIM: use --param RT_DIM=N "
                          "(and KT_DIM, CT_DIM) instead of --tiles/--dims")
    dims = opts.dims or (TILE, TILE * opts.tiles)
    if dims[0] <= 0 or dims[1] <= 0 or dims[0] % TILE or dims[1] % TILE:
        raise ConfigError(f"--dims {dims[0]}x{dims[1]}: rows and columns must be positive multiples of {TILE}")
    values = _values(opts, prof, dims, 32 if (dest_acc or fmts.is_32bit(src)) else 16)
    names = usage.constants + [n for n in opts.params if n not in VOCABULARY and n in usage.names
                               and n not in usage.fields]
    unused = [n for n in opts.params if n not in usage.fields and n not in names]
    if unused:
        raise ConfigError(f"--param {unused[0]}: {opts.kernel} does not use {unused[0]}")
    for name in [*usage.runtime, *names]:
        if name not in values:
            raise MissingParameter(opts.kernel, name, known=name in VOCABULARY, runtime=name in usage.fields)
    tiles: dict[str, int] = {b: int(values["TILE_CNT"]) for b in usage.buffers}  # type: ignore[call-overload]
    if prof.operands:
        tiles.update({b: int(n) for b, n in prof.operands(values).items() if b in tiles})
    buffers = _layout(usage.buffers, tiles, formats, usage.fields)
    spec = Spec(kernel=opts.kernel, chip=chip.name, formats=formats, dest_acc=dest_acc, unpack_to_dest=unpack_to_dest,
                constants={n: values[n] for n in names}, runtime={n: values[n] for n in usage.runtime},
                buffers=buffers, runtime_formats=usage.runtime_formats,
                tile_units=(fmts.tile_bytes(dst) // 16, fmts.tile_bytes(src) // 16, fmts.tile_bytes(src_b) // 16))
    fills = {b: v for b, v in (prof.fills(values) if prof.fills else {}).items() if b in usage.buffers}
    return Resolved(spec=spec, values=values, inputs=tuple(b for b in buffers if b.field != "buffer_Res"),
                    outputs=tuple(b for b in buffers if b.field == "buffer_Res"), row_major=prof.row_major,
                    fills=fills, dims=dims, golden=prof.golden, op=_op(opts, prof))


def _dest_acc(opts: Options, prof: Profile, src: str, dst: str) -> bool:
    """The Dest mode: the user's, else the kernel's rule; 32-bit integers and an exponent-B input
    packed to Float16 need a 32-bit Dest (the harness's constraints), and Int8 gets one by
    default (tt-llk's python_tests run every Int8 case with ``DestAccumulation.Yes``)."""
    needed = src in ("Int32", "UInt32") or fmts.needs_32bit_dest(src, dst)
    if opts.dest_acc is False and needed:
        raise ConfigError(f"{src} -> {dst} needs a 32-bit Dest: drop --no-dest-acc")
    if opts.dest_acc is not None:
        return opts.dest_acc
    if src == "Int8":   # every Int8 test of the vendor's harness runs with a 32-bit Dest
        return True
    return needed or (prof.dest_acc(src, dst) if prof.dest_acc else False)


def _op(opts: Options, prof: Profile) -> str | None:
    op = opts.op or prof.default_op
    if op is not None and op not in prof.ops:
        choices = ", ".join(prof.ops) if prof.ops else "none (this kernel has no --op)"
        raise ConfigError(f"--op {op!r} for {opts.kernel}: use one of {choices}")
    return op


def _values(opts: Options, prof: Profile, dims: tuple[int, int], dest_bits: int) -> dict[str, object]:
    """Every vocabulary value for this build: defaults, the kernel's, the shape's, then the user's."""
    values: dict[str, object] = {n: p.default for n, p in VOCABULARY.items() if p.default is not None}
    values.update(vendorvalues.kernel_values(opts.kernel))
    values.update(prof.constants)
    op = _op(opts, prof)
    if op is not None:
        values.update(prof.ops[op])
    if opts.math_fidelity:
        values["MATH_FIDELITY"] = opts.math_fidelity
    given = dict(opts.params)
    values.update(given)
    values.update({k: v for k, v in _shape(values, dims, dest_bits, prof.block_per_row).items() if k not in given})
    if prof.shape:
        values.update({k: v for k, v in prof.shape(values).items() if k not in given})
    return values


def _shape(values: dict, dims: tuple[int, int], dest_bits: int, per_row: bool) -> dict[str, object]:
    """Tile counts and blocks: what the harness's get_num_blocks_and_num_tiles_in_block gives."""
    rows, cols = dims[0] // TILE, dims[1] // TILE
    tiles = rows * cols
    capacity = HALF_DEST_TILES * (2 if str(values.get("dest_sync", "")).endswith("SyncFull") else 1)
    capacity //= 2 if dest_bits == 32 else 1
    counted = cols if per_row else tiles
    if counted > capacity and counted % capacity:
        raise ConfigError(f"{tiles} tiles ({dims[0]}x{dims[1]}) cannot be split into blocks of {capacity} "
                          f"(what half of a {dest_bits}-bit Dest holds)")
    blocks = math.ceil(counted / capacity)
    in_block = math.ceil(counted / blocks)
    out: dict[str, object] = {
        "TILE_CNT": tiles, "INPUT_TILE_CNT": tiles, "OUTPUT_TILE_CNT": 1 if values.get("IS_REDUCE_TO_ONE") else tiles,
        "NUM_BLOCKS": blocks, "INPUT_NUM_BLOCKS": blocks, "OUTPUT_NUM_BLOCKS": blocks,
        "NUM_TILES_IN_BLOCK": in_block, "INPUT_NUM_TILES_IN_BLOCK": in_block, "OUTPUT_NUM_TILES_IN_BLOCK": in_block,
        "FULL_RT_DIM": rows, "FULL_CT_DIM": cols, "BLOCK_RT_DIM": rows, "BLOCK_CT_DIM": in_block if per_row else cols,
    }
    return out


def _layout(names: list[str], tiles: dict[str, int], formats: fmts.FormatConfig,
            fields: frozenset[str]) -> tuple[Buffer, ...]:
    """Operand buffers one after another from chips.BUFFERS_BASE, as the harness places them."""
    fmt = {"buffer_A": formats.unpack_A_src, "buffer_B": formats.unpack_B_src, "buffer_Res": formats.pack_dst}
    out, address = [], chips.BUFFERS_BASE
    for name in names:
        form = fmt.get(name, formats.unpack_A_src)
        buf = Buffer(field=name, address=address, tile_bytes=fmts.tile_bytes(form), tiles=int(tiles[name]),
                     format=form, runtime=name in fields)
        if buf.tiles <= 0:
            raise ConfigError(f"{name} would have {buf.tiles} tiles")
        out.append(buf)
        address = buf.end
    if address > BUFFERS_END:
        raise ConfigError(f"the operands need L1 up to {address:#x}, past {BUFFERS_END:#x}: use fewer tiles")
    return tuple(out)
