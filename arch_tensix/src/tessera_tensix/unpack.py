"""The unpackers: datums from L1 into SrcA, SrcB or Dest (the work of UNPACR).

Written from the vendor's functional models (WormholeB0/TensixTile/TensixCoprocessor/
UNPACR_Regular.md, UNPACR_IncrementContextCounter.md, UNPACR_NOP_*.md, Unpackers/
README.md, Unpackers/FormatConversion.md, ADCs.md, SrcASrcB.md, Dst.md,
Packers/Compression.md for the compressed layout); Blackhole uses the same models with
the deltas listed below.  :mod:`tessera_tensix.semantics.unpack_ops` decodes the
instructions and calls in here.

How an UNPACR runs (:func:`plan` then :func:`apply`): the plan reads configuration,
ADCs and L1 and computes every write as numpy arrays — L1 address streams for the
datums, the BFP exponents and the decompression counts, the format conversion
(:mod:`tessera_tensix.formats`), the decompression and upsampling expansion, and the
SrcA/SrcB/Dest cell of every output position — with no side effect, so a thread that
must wait for its bank parks before anything changed and re-runs the instruction from
scratch when woken.  :func:`apply` then writes the cells (the last write to a cell
wins) and advances the context counter, the ADCs and the bank/row state.

State kept here (the ``unpackers`` unit of the core, :func:`unpackers`):
``src_row[u][thread]`` (``Unpackers[u].SrcRow``: the lists ``core.srca.src_row`` /
``core.srcb.src_row``, which SETDVALID — :func:`hand_over` — and STOREIND-to-Src use
too), ``context_counter[u][thread]``,
``set_reg_acc[u]``, ``set_reg_base`` (set through TDMA-RISC, not modelled: 0) and a
record of the MMIO writes UNPACR_NOP asks for (NoC overlay stream clears and SETREG
writes: the overlay and that MMIO window are not modelled in direct mode).  The bank an
unpacker writes is ``srca/srcb.unpacker_bank`` (:mod:`tessera_tensix.srcab`).

Choices where the pages are silent or disagree (also in docs/tensix.md, "Unpackers"):

* Tile descriptor: the four configuration registers from ``THCON_SEC{u}_REG0_TileDescriptor``
  on (the register map names only the first; WRCFG writes all four, see
  :mod:`tessera_tensix.cfgregs`), in the bank the thread's ``CFG_STATE_ID_StateID`` picks,
  as every other field UNPACR reads (:func:`tessera_tensix.cfgregs.config_for`).
* ``SrcRow`` is 6 bits: updates wrap modulo 64, and a SrcA row (row + SrcRow) wraps too.
* ``Upsample_rate`` r inserts ``2**r - 1`` zeros (the functional model's formula); the
  README's table says 1, 2, 4.
* ``FP32ToFP16`` is :func:`tessera_tensix.formats.fp32_to_fp16`.
* Undefined behaviour is a rule stop (``rules.broken``).  With ``lenient`` the run goes on
  with: a misaligned output address rounded down; unpacker 1 contexts >= 2 and ADC 3
  used as given (ADC 3 as the thread's own); SrcA rows past 16 (64 with
  ``SRCA_SET_SetOvrdWithAddr``) wrapped to 6 bits; a format pair the conversion tables
  do not allow converted as the input format says (FP32 as FP32; TF32, FP32 or INT32
  into SrcA/SrcB as FP32 -> TF32); BFP8a exponents that do not fit 5 bits as the page's
  16-bit expression computes them.  Cases with no outcome to choose stop even when
  lenient: a format code that names nothing, BlobsYStart[8], decompression combined
  with ``Tileize_mode`` or with 2-bit datums, a datum count larger than L1 can hold (a
  negative count: the X end before the X start), and an address outside L1.
* Not modelled (the run stops saying so): FIFO wrap-around (``Unpack_limit_address`` /
  ``Unpack_fifo_size``) while decompressing; Wormhole ``rareb_en``; Blackhole
  ``srcb_bcast`` and ``Unp_LF8_4b_exp`` (FP8 e4m3), which no page defines.  The
  decompression row-start cache is not modelled (as in the functional model), so
  UNPACR's cache flush does nothing.

Blackhole deltas: L1 is 1536 KiB; the context counter wraps at
``Context_count_non_log2`` when ``Context_count_non_log2_en`` is set (the field names'
reading); UNPACR_NOP's fields follow the Blackhole table (see unpack_ops).
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from tessera.control import Trap
from tessera_tensix import cfgregs, formats, rules
from tessera_tensix.adc import adcs
from tessera_tensix.dest import ADJ16, ADJ32, COLS
from tessera_tensix.formats import Fmt
from tessera_tensix.srcab import MASK19, MATRIX, UNPACKERS

U32 = np.uint32
#: most SETREG / overlay-clear writes kept in the unit's state
MMIO_RECORD = 16


class Unpackers:
    """State of the two unpackers that is not in SrcA/SrcB (see the module docstring)."""

    def __init__(self, core: Any = None) -> None:
        # the very lists of SrcA/SrcB (srcab.SrcRegister.src_row): one cursor per thread,
        # whoever (SETDVALID, UNPACR, STOREIND) reads or resets it
        self.src_row = ([core.srca.src_row, core.srcb.src_row] if core is not None
                        else [[0, 0, 0], [0, 0, 0]])
        self.context_counter = [[0, 0, 0], [0, 0, 0]]
        self.set_reg_acc = [0, 0]
        self.set_reg_base = [0, 0, 0, 0]
        self.overlay_clears: dict[int, int] = {}
        self.mmio_writes: list[tuple[int, int]] = []

    def record_write(self, address: int, value: int) -> None:
        self.mmio_writes = (self.mmio_writes + [(address, value)])[-MMIO_RECORD:]

    def state(self) -> dict[str, Any]:
        return {"context_counter": [list(c) for c in self.context_counter],
                "set_reg_acc": list(self.set_reg_acc),
                "overlay_clears": {str(k): v for k, v in sorted(self.overlay_clears.items())},
                "mmio_writes": [f"{a:#010x}={v:#x}" for a, v in self.mmio_writes]}


def unpackers(core: Any) -> Unpackers:
    """The core's unpacker state (created on first use)."""
    return core.unit("unpackers", Unpackers)


def src_register(core: Any, which: int) -> Any:
    """SrcA for unpacker 0, SrcB for unpacker 1."""
    return core.srcb if which else core.srca


def row_base(thread: Any, which: int) -> int:
    """``SRCA_SET_Base << 4`` (unpacker 0) or ``SRCB_SET_Base << 4`` (unpacker 1), 6 bits."""
    return (thread.tcfg.get("SRCB_SET_Base" if which else "SRCA_SET_Base") << 4) & 0x3F


def hand_over(thread: Any, which: int) -> None:
    """Give unpacker ``which``'s current bank to the matrix unit, flip to the other bank and
    restart the thread's row cursor (SETDVALID.md, UNPACR_NOP_SETDVALID.md, UNPACR's
    FlipSrc)."""
    src = src_register(thread.core, which)
    bank = src.unpacker_bank
    src.unpacker_bank = bank ^ 1
    src.src_row[thread.tid] = row_base(thread, which)
    src.give(bank, MATRIX)
    if src.signal is not None:
        src.signal.changed()        # the unpacker's bank index moved (STALLWAIT C8/C9 read it)


def bump_context_counter(thread: Any, which: int, current: int) -> None:
    """Context counter of ``thread`` for unpacker ``which`` := ``current + 1``, wrapping at
    ``2**Context_count`` (UNPACR_IncrementContextCounter.md; Blackhole: at
    ``Context_count_non_log2`` when enabled)."""
    get = cfgregs.config_for(thread).get
    sec = f"THCON_SEC{which}_REG2_"
    bound = 1 << get(sec + "Context_count")
    if thread.core.chip == "bh" and get(sec + "Context_count_non_log2_en"):
        bound = get(sec + "Context_count_non_log2")
    nxt = (current + 1) & 7
    unpackers(thread.core).context_counter[which][thread.tid] = 0 if nxt >= bound else nxt


def reset_context_counter(core: Any, tid: int, which: int) -> None:
    """``UNPACK_MISC_CFG_CfgContextCntReset_<which>`` written by thread ``tid`` (SETC16)."""
    unpackers(core).context_counter[which][tid] = 0


# ------------------------------------------------------------------------ tile descriptor
@attrs.frozen
class TileDescriptor:
    """The 128-bit tile descriptor of UNPACR_Regular.md ("Configuration")."""

    in_format: int
    uncompressed: bool
    no_bfp_exp_section: bool
    blobs_per_xy_plane: int
    x_dim: int
    y_dim: int
    z_dim: int        # 0 read as 1
    w_dim: int        # 0 read as 1
    blobs_y_start: tuple[int, ...]
    digest_size: int

    @classmethod
    def from_words(cls, w: list[int]) -> TileDescriptor:
        starts = ((w[2] >> 16) & 0xFFFF) | ((w[3] & 0xFFFF) << 16)
        return cls(in_format=w[0] & 0xF, uncompressed=bool(w[0] >> 4 & 1),
                   no_bfp_exp_section=bool(w[0] >> 5 & 1), blobs_per_xy_plane=(w[0] >> 8) & 7,
                   x_dim=(w[0] >> 16) & 0xFFFF, y_dim=w[1] & 0xFF,
                   z_dim=((w[1] >> 16) & 0xFF) or 1, w_dim=(w[2] & 0xFF) or 1,
                   blobs_y_start=tuple((starts >> (4 * i)) & 0xF for i in range(8)),
                   digest_size=(w[3] >> 24) & 0xFF)


def descriptor_index(chip: str, which: int) -> int:
    """Backend-configuration register index of the descriptor's first word."""
    return cfgregs.register_map(chip).cfg_index[f"THCON_SEC{which}_REG0_TileDescriptor"]


def descriptor(thread: Any, which: int) -> TileDescriptor:
    """The tile descriptor of unpacker ``which`` in the configuration bank ``thread`` uses:
    four consecutive registers, of which the register map names only the first."""
    core = thread.core
    bank = cfgregs.state_id(thread)
    first = descriptor_index(core.chip, which)
    return TileDescriptor.from_words([cfgregs.read_cfg(core, bank, first + k) for k in range(4)])


# ------------------------------------------------------------------------------ the plan
@attrs.define
class Writes:
    """Cells one UNPACR writes: ``target`` "srca", "srcb", "dst16" or "dst32"; ``index``
    flat indices into the target (a bank's 64x16 cells, or DstBits rows x 16 for Dest),
    ``values`` what goes there (19-bit Src cells, 16-bit Dest cells, or 32-bit Dst32b
    values, whose halves go to ``index`` and ``index + 8 * 16``)."""

    target: str
    bank: int
    index: np.ndarray
    values: np.ndarray
    #: the unpacker's output format code (what a Src bank is then "in")
    fmt: int = -1


@attrs.define
class Plan:
    """Everything an UNPACR does, computed before any side effect."""

    which: int
    context: int          # WhichContext
    adc: int              # WhichADC
    writes: Writes | None  # None: no output position (no wait, no write)
    bump_counter: bool
    flip: bool
    increments: tuple[int, int, int, int]  # Ch0Y, Ch0Z, Ch1Y, Ch1Z


def _stop(ins: Any, text: str) -> None:
    """A case the model cannot continue from, even when lenient."""
    raise Trap(rules.RULE, ins.word, name=f"{ins.mnemonic}: {text}", word=ins.word)


def _undefined(thread: Any, ins: Any, text: str) -> None:
    """Undefined behaviour with an outcome to choose: stop unless lenient."""
    rules.broken(thread, ins, f"{text} (undefined behaviour)")


class _Wrap:
    """``WrapAddr`` of UNPACR_Regular.md in bit units: an address past
    ``Unpack_limit_address * 16`` bytes moves back by ``Unpack_fifo_size * 16`` bytes."""

    def __init__(self, get: Any, which: int) -> None:
        self.limit = get(f"THCON_SEC{which}_REG2_Unpack_limit_address") * 16 * 8
        self.size = get(f"THCON_SEC{which}_REG2_Unpack_fifo_size") * 16 * 8
        self.active = self.size != 0

    def __call__(self, bit_address: int) -> int:
        return bit_address - self.size if self.active and bit_address > self.limit else bit_address


def _l1_span(core: Any, ins: Any, lo_bit: int, hi_bit: int) -> None:
    """Stop unless bits [lo_bit, hi_bit) lie in L1 (ReadL1Bytes: the address must be in L1)."""
    lo, hi = lo_bit >> 3, (hi_bit + 7) >> 3
    core.l1.check(lo, hi - lo, ins.mnemonic)


def _gather(core: Any, ins: Any, bit_addr: np.ndarray, nbits: int) -> np.ndarray:
    """The ``nbits``-wide little-endian fields at ``bit_addr`` (uint32), range-checked."""
    if bit_addr.size == 0:
        return np.zeros(0, dtype=U32)
    _l1_span(core, ins, int(bit_addr.min()), int(bit_addr.max()) + nbits)
    mem = core.l1.bytes
    byte = bit_addr >> 3
    if nbits < 8:
        return ((mem[byte].astype(U32) >> (bit_addr & 7).astype(U32)) & U32((1 << nbits) - 1)).astype(U32)
    out = mem[byte].astype(U32)
    for k in range(1, nbits // 8):
        out |= mem[byte + k].astype(U32) << U32(8 * k)
    return out


def _read_u16(core: Any, ins: Any, byte_addr: int) -> int:
    core.l1.check(byte_addr, 2, ins.mnemonic)
    return int(core.l1.bytes[byte_addr]) | int(core.l1.bytes[byte_addr + 1]) << 8


def _uncompressed_addresses(start: int, count: int, size: int, stride: int, wrap: _Wrap,
                            row: int = 16) -> np.ndarray:
    """Bit addresses of ``count`` datums: ``row`` per row (16, UNPACR_Regular.md's main loop;
    32 for Blackhole's wide-datum Tileize_mode, see :meth:`Unpack.destination`), rows
    ``stride`` bits apart, each row start passed through WrapAddr."""
    rows = (count + row - 1) // row
    if not wrap.active:
        starts = start + stride * np.arange(rows, dtype=np.int64)
    else:
        starts = np.empty(rows, dtype=np.int64)
        at = start
        for r in range(rows):
            starts[r] = at
            at = wrap(at + stride)
    i = np.arange(count, dtype=np.int64)
    return starts[i // row] + (i % row) * size


def _exponent_addresses(start16: int, count: int, wrap: _Wrap) -> np.ndarray:
    """Byte addresses of the exponents of ``count`` datums; ``start16`` in 1/16 bytes (one
    exponent byte per 16 datums; WrapAddr each time the pointer reaches a 16-byte boundary)."""
    if not wrap.active:
        return (start16 + np.arange(count, dtype=np.int64)) >> 4
    parts, at, left = [], start16, count
    while left:
        seg = min(left, 256 - at % 256)
        parts.append(at + np.arange(seg, dtype=np.int64))
        at, left = at + seg, left - seg
        if at % 256 == 0 and at > 2 * wrap.limit:      # sixteenths = 2 x bits
            at -= 2 * wrap.size
    return (np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)) >> 4


@attrs.define
class Fields:
    """The operands of UNPACR (Move datums), named as in UNPACR_Regular.md's syntax."""

    which: int
    increments: int = 0          # Ch1YInc, Ch1ZInc, Ch0YInc, Ch0ZInc (two bits each)
    context_number: int = 0
    context_adc: int = 0
    multi_context: bool = False
    flip_src: bool = False
    all_zero: bool = False
    use_context_counter: bool = False
    row_search: bool = False


class _Job:
    """One UNPACR being planned: each step reads state and sets attributes, no side effect."""

    def __init__(self, thread: Any, ins: Any, f: Fields) -> None:
        self.thread, self.ins, self.f = thread, ins, f
        self.core = thread.core
        self.get = cfgregs.config_for(thread).get
        self.sec = f"THCON_SEC{f.which}_"
        self.unp = f"UNP{f.which}_"
        self.wrap = _Wrap(self.get, f.which)

    # -- WhichContext and WhichADC
    def context(self) -> None:
        f, tid = self.f, self.thread.tid
        if f.multi_context:
            counter = unpackers(self.core).context_counter[f.which][tid]
            context = counter if f.use_context_counter else f.context_number
            context = (context + self.thread.tcfg.get(f"UNPACK_MISC_CFG_CfgContextOffset_{f.which}")) & 7
            adc = f.context_adc
            if f.which == 1 and context >= 2:
                _undefined(self.thread, self.ins,
                           f"unpacker 1 (SrcB) has no configuration context {context} (only 0 and 1)")
            if adc == 3:
                _undefined(self.thread, self.ins, "ADC 3 does not exist (ContextADC must be 0..2)")
                adc = tid
        else:
            context, adc = 0, tid
        self.context_id, self.adc = context, adc

    # -- descriptor, formats, where the input starts
    def source(self) -> None:
        f, get, sec, ctx = self.f, self.get, self.sec, self.context_id
        desc = self.desc = descriptor(self.thread, f.which)
        multi = f.multi_context
        self.uncompressed = bool(get(f"{sec}REG2_Disable_zero_compress_cntx{ctx}")) if multi else desc.uncompressed
        self.x_dim = get(f"{sec}REG5_Tile_x_dim_cntx{ctx & 3}") if multi and f.which == 0 else desc.x_dim
        if multi and get(f"{sec}REG2_Ovrd_data_format"):
            in_fmt = get(f"{sec}REG7_Unpack_data_format_cntx{ctx}")
            out_fmt = get(f"{sec}REG7_Unpack_out_data_format_cntx{ctx}")
        else:
            in_fmt, out_fmt = desc.in_format, get(f"{sec}REG2_Out_data_format")
        for what, code in (("input", in_fmt), ("output", out_fmt)):
            if formats.datum_bits(code) is None:
                _stop(self.ins, f"{what} data format code {code} names no format")
        if self.core.chip == "bh" and in_fmt == Fmt.FP8 and get(f"{sec}REG1_Unp_LF8_4b_exp"):
            _stop(self.ins, "FP8 with a 4-bit exponent (Unp_LF8_4b_exp) is not modelled: no page defines it")
        self.in_fmt, self.out_fmt = Fmt(in_fmt), Fmt(out_fmt)
        self.size = formats.DATUM_BITS[self.in_fmt]
        self.force_exp = bool(get(f"{sec}REG2_Force_shared_exp"))
        if multi and ctx != 0:
            base = get(f"{sec}REG{3 if ctx < 4 else 4}_Base_cntx{ctx}_address")
            k = ctx & 3
            offset = get(f"{sec}REG7_Offset_address" if k == 0 else f"{sec}REG7_Offset_cntx{k}_address")
        else:
            base, offset = get(f"{sec}REG3_Base_address"), get(f"{sec}REG7_Offset_address")
        in_addr = (base + (offset & 0xFFFF) + 1 + desc.digest_size) * 16          # bytes
        self.row_start = in_addr
        if not self.uncompressed:
            rows = (desc.blobs_per_xy_plane or desc.y_dim) * desc.z_dim * desc.w_dim
            in_addr += -(-((rows + 1) * 2) // 16) * 16
        self.exp_addr = in_addr
        if self.in_fmt in formats.BFP and not self.force_exp:
            if self.in_fmt in (Fmt.BFP8, Fmt.BFP8A) or not desc.no_bfp_exp_section:
                n_exp = -(-(self.x_dim * desc.y_dim * desc.z_dim * desc.w_dim) // 16)
                in_addr += -(-n_exp // 16) * 16
        self.in_addr = in_addr

    # -- FirstDatum, InputNumDatums, DecompressDrop, DecompressNumDatums
    def extent(self) -> None:
        f, desc, x_dim = self.f, self.desc, self.x_dim
        a, tid, which = adcs(self.core), self.thread.tid, f.which
        xy_x, xy_y = a.get(self.adc, which, 0, "X"), a.get(self.adc, which, 0, "Y")
        zw_z, zw_w = a.get(tid, which, 0, "Z"), a.get(tid, which, 0, "W")
        ch1_x = a.get(self.adc, which, 1, "X")
        # int, or None while the compressed stream decides (typed Any: mypy cannot follow
        # which of count / take is set on each path)
        self.count: Any = None
        self.take: Any = None
        self.drop = 0
        plane = zw_w * desc.z_dim + zw_z
        if self.uncompressed:
            if not f.row_search:
                x_pos, y_pos, x_end = xy_x, xy_y, ch1_x + 1
            elif desc.blobs_per_xy_plane:
                x_pos, y_pos, x_end = self._blob_row(xy_x, xy_y)
            else:
                x_pos, y_pos, x_end = 0, xy_y, ch1_x
            self.first = (plane * desc.y_dim + y_pos) * x_dim + x_pos
            self.count = (x_end - x_pos) & 0xFFFF_FFFF
        else:
            y_rows = desc.blobs_per_xy_plane if f.row_search and desc.blobs_per_xy_plane else desc.y_dim
            rsi = self.row_start + 2 * plane * y_rows
            self.first = _read_u16(self.core, self.ins, rsi + 2 * (xy_y & 0xFF))
            if f.row_search:
                end = _read_u16(self.core, self.ins, rsi + 2 * ((xy_x & 0xFF) + 1))
            elif xy_x == 0 and ch1_x == x_dim - 1:
                end = _read_u16(self.core, self.ins, rsi + 2 * ((xy_y & 0xFF) + 1))
            else:
                end = None
                self.drop, self.take = xy_x, (ch1_x + 1 - xy_x) & 0xFFFF_FFFF
            self.count = None if end is None else (end - self.first) & 0xFFFF_FFFF
        wanted = self.count if self.count is not None else self.drop + self.take
        if wanted > 4 * 8 * self.core.l1.size // self.size + 64:
            _stop(self.ins, f"datum count {self.count if self.count is not None else self.take} is more "
                            "than L1 can hold (is the X end before the X start?)")

    def _blob_row(self, xy_x: int, xy_y: int) -> tuple[int, int, int]:
        """X start, Y start and X end of a RowSearch over blobs (uncompressed)."""
        desc = self.desc
        if self.f.multi_context and self.f.which == 0:
            word = self.get(f"UNP0_BLOBS_Y_START_CNTX_{'23' if self.context_id & 2 else '01'}_blobs_y_start")
            starts = [(word >> (4 * i)) & 0xF for i in range(8)]
        else:
            starts = list(desc.blobs_y_start)
        x71 = (xy_x & 7) + 1
        if x71 == desc.blobs_per_xy_plane:
            x_end = self.x_dim & 0x1F0
        elif x71 < 8:
            x_end = starts[x71] << 4
        else:
            _stop(self.ins, "BlobsYStart[8] does not exist (ADC X & 7 is 7 with fewer than 8 blobs)")
        return starts[xy_y & 7] << 4, 0, x_end

    # -- output address, modes, and the checks between them
    def destination(self) -> None:
        f, get, sec, unp, ctx = self.f, self.get, self.sec, self.unp, self.context_id
        if f.which == 0:
            self.to_dst = bool(get(f"{sec}REG2_Unpack_if_sel_cntx{ctx}") if f.multi_context
                               else get(f"{sec}REG2_Unpack_If_Sel"))
            self.transpose = bool(get(f"{sec}REG2_Haloize_mode"))
        else:
            self.to_dst = self.transpose = False
        a, tid = adcs(self.core), self.thread.tid
        out_y, out_z, out_w = (a.get(tid, f.which, 1, name) for name in ("Y", "Z", "W"))
        out = (get(f"{unp}ADDR_BASE_REG_1_Base") + out_y * get(f"{unp}ADDR_CTRL_XY_REG_1_Ystride")
               + out_z * get(f"{unp}ADDR_CTRL_ZW_REG_1_Zstride") + out_w * get(f"{unp}ADDR_CTRL_ZW_REG_1_Wstride"))
        shift = 2 if self.out_fmt in formats.WIDE32 else 1 if self.out_fmt in formats.WIDE16 else 0
        if out & ((1 << shift) - 1):
            _undefined(self.thread, self.ins, f"output address {out:#x} is not a multiple of {1 << shift} "
                                              f"for {formats.name(self.out_fmt)}")
        out >>= shift
        if f.multi_context and f.which == 0:
            ctx_out = get(f"{sec}REG5_Dest_cntx{ctx & 3}_address")
            out = out + ctx_out if self.to_dst or get(f"{unp}ADD_DEST_ADDR_CNTR_add_dest_addr_cntr") else ctx_out
        self.out_addr = out
        self.zeros_after = (1 << get(f"{sec}REG2_Upsample_rate")) - 1
        self.interleave = bool(get(f"{sec}REG2_Upsample_and_interleave"))
        self.tileize = bool(get(f"{sec}REG2_Tileize_mode"))
        self.col_shift = 0 if self.tileize or f.which == 1 else get(f"{sec}REG2_Shift_amount_cntx{ctx & 3}")
        self.row = 16
        if self.tileize:
            self.stride = ((get(f"{sec}REG2_Shift_amount_cntx0") << 4) | (get(f"{sec}REG2_Shift_amount_cntx1") << 8)
                           | (get(f"{sec}REG2_Shift_amount_cntx2") << 12)) * 8
            if self.core.chip == "bh" and self.size > 8:
                # Blackhole (no unpacker page; the vendor's own statement, tt-llk llk_pack.h, Tilize):
                # with datums wider than a byte the tileize unpacker reads a 32-datum source row
                # into two consecutive rows (row i -> 2i, 2i+1), which the packer un-swizzles.
                self.row = 32
        else:
            self.stride = self.size * 16
        if not self.uncompressed and (self.tileize or self.size < 4):
            _stop(self.ins, "decompression with " + ("Tileize_mode" if self.tileize else f"{self.size}-bit datums")
                  + " is not modelled")
        if self.tileize and self.zeros_after:
            _undefined(self.thread, self.ins, "Tileize_mode with upsampling")
        if self.to_dst and (self.col_shift or self.transpose):
            _undefined(self.thread, self.ins, "unpacking to Dest with a column shift or X/Y transpose")

    # -- L1 reads and the format conversion
    def read(self) -> None:
        size, first, wrap, core, ins = self.size, self.first, self.wrap, self.core, self.ins
        datum0 = self.in_addr * 8
        if self.uncompressed:
            datum0 = wrap(datum0 + first * size)
        else:
            group = 32 * size + 128          # 32 datums, then their 32 four-bit zero counts
            datum0 = wrap(datum0 + (first // 32) * group + (first % 32) * size)
        if (self.transpose or self.tileize) and datum0 % 128:
            _undefined(self.thread, ins, f"input address {datum0 / 8:g} is not 16-byte aligned (needed by "
                                         + ("X/Y transpose" if self.transpose else "Tileize_mode") + ")")
        self.zeros = None
        delta_at: np.ndarray | None = None
        exp_at: np.ndarray | None = None
        if self.uncompressed:
            n = self.count
            datum_at = _uncompressed_addresses(datum0, n, size, self.stride, wrap, self.row)
        else:
            if wrap.active:
                _stop(ins, "FIFO wrap-around (Unpack_fifo_size) while decompressing is not modelled")
            n = self.count if self.count is not None else self.drop + self.take
            idx = first + np.arange(n, dtype=np.int64)
            rel = (idx // 32 - first // 32) * group
            delta_at = self.in_addr * 8 + (first // 32) * group + 32 * size + rel + (idx % 32) * 4
            if self.count is None:
                n = self._needed(delta_at)
                idx, rel, delta_at = idx[:n], rel[:n], delta_at[:n]
            datum_at = datum0 + rel + (idx % 32 - first % 32) * size
            self.zeros = _gather(core, ins, delta_at, 4)
        self.n = n
        raw = _gather(core, ins, datum_at, size)
        exps = None
        if self.in_fmt in formats.BFP:
            if self.force_exp:
                exps = np.full(n, self.get(f"{self.unp}FORCED_SHARED_EXP_shared_exp"), dtype=U32)
            else:
                start16 = self.exp_addr * 16 + first            # InAddr_Exponents in 1/16 bytes
                if wrap.active and start16 > 2 * wrap.limit:
                    start16 -= 2 * wrap.size
                exp_at = _exponent_addresses(start16, n, wrap) * 8
                exps = _gather(core, ins, exp_at, 8)
        which = self.f.which
        # the bits read, for a timing model (the L1 note, tessera_tensix.l1): the datums (and
        # zero counts) through the unpacker's ports, the exponents through its exponent client
        client = f"unpacker{which}"
        self.thread.l1_note = ((client, "read", datum_at),) + (
            () if delta_at is None else ((client, "read", delta_at),)) + (
            () if exp_at is None else ((client + " exponents", "read", exp_at),))
        unsigned = bool(self.get("ALU_FORMAT_SPEC_REG0_SrcBUnsigned" if which else "ALU_FORMAT_SPEC_REG0_SrcAUnsigned"))
        self.values, problem = convert(self.in_fmt, self.out_fmt, raw, exps, self.to_dst, unsigned)
        # AllDatumsAreZero replaces every converted datum with 0 (UNPACR_Regular.md's main
        # loop), so a conversion with no defined result changes nothing: tt-llk's Wormhole
        # workaround after a 32-bit unpack to Dest is such an UNPACR (0x42000091) into SrcA
        if problem and not self.f.all_zero:
            _undefined(self.thread, ins, problem)

    def _needed(self, delta_at: np.ndarray) -> int:
        """How many compressed datums give DecompressDrop + DecompressNumDatums outputs (the
        counts are peeked without a range check; the datums used are checked when read)."""
        if not self.take or not delta_at.size:
            return 0
        safe = np.clip(delta_at, 0, self.core.l1.size * 8 - 4)
        z = (self.core.l1.bytes[safe >> 3].astype(np.int64) >> (safe & 7)) & 15
        produced = np.cumsum(1 + (0 if self.f.all_zero else z))
        return min(int(np.searchsorted(produced, self.drop + self.take)) + 1, delta_at.size)

    # -- decompression zeros, drop/take, upsampling: output positions and values
    def expand(self) -> tuple[np.ndarray, np.ndarray]:
        values, zeros, n = self.values, self.zeros, self.n
        if self.f.all_zero:
            values, zeros = np.zeros_like(values), None
        if zeros is not None and zeros.any():
            reps = zeros.astype(np.int64) + 1
            owner = np.repeat(np.arange(n), reps)
            firsts = np.zeros(owner.size, dtype=bool)
            firsts[np.concatenate(([0], np.cumsum(reps)[:-1]))] = True
            values = np.where(firsts, values[owner], U32(0)).astype(U32)
        values = values[self.drop:]
        if self.take is not None:
            values = values[:self.take]
        m, step = values.size, self.zeros_after + 1
        pos = self.out_addr + step * np.arange(m, dtype=np.int64)
        if self.zeros_after and not self.interleave:
            pos = (pos[:, None] + np.arange(step, dtype=np.int64)).reshape(-1)
            values = np.concatenate([values[:, None], np.zeros((m, self.zeros_after), dtype=U32)],
                                    axis=1).reshape(-1)
        return pos, values


def plan(thread: Any, ins: Any, f: Fields) -> Plan:
    """The writes and state updates of one UNPACR (Move datums) — no side effects."""
    job = _Job(thread, ins, f)
    job.context()
    job.source()
    job.extent()
    job.destination()
    job.read()
    pos, values = job.expand()
    writes = None
    if pos.size:
        writes = _targets(thread, ins, job.get, f.which, job.to_dst, job.out_fmt, job.transpose,
                          job.col_shift, pos, values, f.all_zero)
    am = f.increments
    return Plan(which=f.which, context=job.context_id, adc=job.adc, writes=writes,
                bump_counter=f.multi_context and f.use_context_counter, flip=f.flip_src,
                increments=(am >> 2 & 3, am & 3, am >> 6 & 3, am >> 4 & 3))


def _targets(thread: Any, ins: Any, get: Any, which: int, to_dst: bool, out_fmt: Fmt, transpose: bool,
             col_shift: int, pos: np.ndarray, values: np.ndarray, all_zero: bool = False) -> Writes:
    """Where each output position goes (UNPACR_Regular.md, the write part of the main loop).

    A SrcA row out of range is undefined behaviour, except that an AllDatumsAreZero UNPACR
    writes nothing there (a choice: tt-llk's Wormhole workaround for hardware bug TEN-3868,
    one zero unpack into SrcA after the last unpack to Dest, lands past row 63)."""
    core = thread.core
    tid = thread.tid
    src_row = unpackers(core).src_row[which][tid]
    ovrd = bool(thread.tcfg.get("SRCA_SET_SetOvrdWithAddr"))
    row = pos >> 4
    col = pos & 15
    if which == 1:
        bank = core.srcb.unpacker_bank
        r = (row + src_row) & 0x3F
        return Writes("srcb", bank, r * COLS + col, values & U32(MASK19), int(out_fmt) & 15)
    bank = core.srca.unpacker_bank
    if not to_dst:
        keep = (row >= 4) & (col >= col_shift)
        row, col, values = row[keep] - 4, col[keep] - col_shift, values[keep]
        bound = 64 if ovrd else 16
        if all_zero and row.size and int(row.max()) >= bound:
            keep = row < bound
            row, col, values = row[keep], col[keep], values[keep]
        if row.size and int(row.max()) >= bound:
            _undefined(thread, ins, f"SrcA row {int(row.max())} is out of range (0..{bound - 1}"
                                    + (" with SRCA_SET_SetOvrdWithAddr)" if ovrd else ")"))
        if not ovrd:
            row = row + src_row
        row &= 0x3F
        if transpose:
            row, col = (row & ~0xF) | col, row & 0xF
        return Writes("srca", bank, row * COLS + col, values & U32(MASK19), int(out_fmt) & 15)
    row = (row - 4) & (0xF if ovrd else 0x3FF)
    remap = int(bool(get("DEST_ACCESS_CFG_remap_addrs")))
    if out_fmt in formats.WIDE32:
        swizzle = int(bool(get("DEST_ACCESS_CFG_swizzle_32b")))
        phys = ADJ32[remap][swizzle][row]
        return Writes("dst32", bank, phys * COLS + col, values)
    return Writes("dst16", bank, ADJ16[remap][row] * COLS + col, values & U32(0xFFFF))


def convert(in_fmt: Fmt, out_fmt: Fmt, bits: np.ndarray, exps: np.ndarray | None, to_dst: bool,
            unsigned: bool) -> tuple[np.ndarray, str | None]:
    """FormatConversion of UNPACR_Regular.md on a block of datums: (cells, problem) where
    ``problem`` names undefined behaviour (the cells are then the lenient outcome)."""
    problem = None
    kind = in_fmt
    if in_fmt == Fmt.FP32:
        if out_fmt == Fmt.TF32:
            return (formats.dst_fp32(bits) if to_dst else formats.src_tf32(bits >> U32(13))).astype(U32), None
        if out_fmt == Fmt.BF16:
            bits, kind = formats.fp32_to_bf16_flush(bits), Fmt.BF16
        elif out_fmt == Fmt.FP16:
            bits, kind = formats.fp32_to_fp16(bits), Fmt.FP16
        elif out_fmt != Fmt.FP32:
            problem = f"FP32 cannot be unpacked as {formats.name(out_fmt)}"
    else:
        if in_fmt != out_fmt:
            problem = (f"input format {formats.name(in_fmt)} needs the same output format, not "
                       f"{formats.name(out_fmt)}")
        if in_fmt == Fmt.FP8:
            bits, kind = (bits & U32(0xFF)) << U32(8), Fmt.FP16
        elif in_fmt in formats.BFP:
            wide = (bits << U32(formats.BFP_WIDEN[in_fmt])) & U32(0xFF)
            if in_fmt in formats.BFP_A:
                bits, bad = formats.bfp8a_to_fp16(wide, exps)
                if bad.any() and problem is None:
                    problem = f"{formats.name(in_fmt)} exponent does not fit FP16's 5 bits"
                kind = Fmt.FP16
            else:
                bits, kind = formats.bfp8_to_bf16(wide, exps), Fmt.BF16
        elif in_fmt == Fmt.INT8:
            bits, kind = formats.int8_overlay(bits, unsigned), Fmt.FP16
        elif in_fmt == Fmt.TF32:
            if to_dst:
                return formats.dst_fp32(bits).astype(U32), problem
            problem = problem or "TF32 is not an input format for SrcA/SrcB (use FP32 -> TF32)"
            return formats.src_tf32(bits >> U32(13)), problem
    if kind == Fmt.INT16:
        out = bits & U32(0xFFFF) if to_dst else formats.src_int16(bits)
    elif kind in (Fmt.INT32, Fmt.FP32):
        if to_dst:
            out = formats.dst_fp32(bits)
        else:
            problem = problem or f"{formats.name(kind)} cannot be unpacked into SrcA/SrcB"
            out = formats.src_tf32(bits >> U32(13))
    elif kind == Fmt.BF16:
        out = formats.dst_bf16(bits & U32(0xFFFF)) if to_dst else formats.src_bf16(bits)
    else:  # FP16
        out = formats.dst_fp16(bits & U32(0xFFFF)) if to_dst else formats.src_fp16(bits)
    return np.asarray(out, dtype=U32), problem


def _last_wins(index: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep the last write to each index (the hardware writes in order)."""
    if index.size < 2 or bool((index[1:] > index[:-1]).all()):
        return index, values                        # the usual case: increasing positions
    uniq, first_from_end = np.unique(index[::-1], return_index=True)
    if uniq.size == index.size:
        return index, values
    return uniq, values[::-1][first_from_end]


def wait_bank(thread: Any, p: Plan) -> None:
    """Park the thread unless its unpacker's bank belongs to the unpackers (before any
    side effect; unpacker 0 waits on SrcA even when it writes Dest)."""
    if p.writes is not None:
        src = src_register(thread.core, p.which)
        src.require(thread, src.unpacker_bank, UNPACKERS, "UNPACR")


def apply(thread: Any, p: Plan) -> None:
    """Do what :func:`plan` computed: write the cells, then update counters and banks."""
    core = thread.core
    w = p.writes
    if w is not None:
        index, values = _last_wins(w.index, w.values)
        if w.target in ("srca", "srcb"):
            src = core.srca if w.target == "srca" else core.srcb
            src.rows[w.bank].reshape(-1)[index] = values
            src.formats[w.bank] = w.fmt
        else:
            flat = core.dest.flat
            if w.target == "dst32":
                flat[index] = (values >> U32(16)).astype(np.uint16)
                flat[index + 8 * COLS] = (values & U32(0xFFFF)).astype(np.uint16)
                core.dest.mark_written(np.concatenate([index, index + 8 * COLS]))
            else:
                flat[index] = values.astype(np.uint16)
                core.dest.mark_written(index)
    tid = thread.tid
    if p.bump_counter:
        bump_context_counter(thread, p.which, p.context)
    a = adcs(core)
    ch0y, ch0z, ch1y, ch1z = p.increments
    for i in {tid, p.adc}:
        a.add(i, p.which, 0, "Y", ch0y)
        a.add(i, p.which, 0, "Z", ch0z)
        a.add(i, p.which, 1, "Y", ch1y)
        a.add(i, p.which, 1, "Z", ch1z)
    state = unpackers(core)
    if p.flip:
        hand_over(thread, p.which)
    elif cfgregs.config_for(thread).get(f"THCON_SEC{p.which}_REG2_Unpack_Src_Reg_Set_Upd"):
        state.src_row[p.which][tid] = (state.src_row[p.which][tid] + 16 + row_base(thread, p.which)) & 0x3F


# ------------------------------------------------------------------------ UNPACR_NOP parts
def clear_src(thread: Any, which: int, value: int, both_banks: bool, wait_like_unpacr: bool) -> None:
    """UNPACR_NOP ZEROSRC (UNPACR_NOP_ZEROSRC.md): wait for the bank, then fill the
    unpacker's bank (or both) with ``value`` (a 19-bit cell)."""
    src = src_register(thread.core, which)
    bank = src.unpacker_bank
    src.require(thread, bank if wait_like_unpacr else src.matrix_bank, UNPACKERS, "UNPACR_NOP")
    if both_banks:
        src.rows[:] = value & MASK19
    else:
        src.rows[bank] = value & MASK19


def set_reg(thread: Any, which: int, addr_sel: int, addr_mid: int, value11: int, accumulate: bool) -> None:
    """UNPACR_NOP SETREG (UNPACR_NOP_SETREG.md): the MMIO write is recorded, not performed
    (the window is not mapped in direct mode); the accumulator is modelled."""
    state = unpackers(thread.core)
    address = (0xFFB0_0000 + state.set_reg_base[addr_sel & 3] + (addr_mid << 12)) & 0xFFFF_FFFF
    if accumulate:
        acc = state.set_reg_acc[which]
        if value11 == 0:
            acc = 0
        else:
            acc = (acc + value11) & 0x1FFFF
            state.record_write(address, acc)
        state.set_reg_acc[which] = acc
    else:
        state.record_write(address, value11)


def overlay_clear(thread: Any, which: int, stream: int | None) -> None:
    """UNPACR_NOP OverlayClear: one write to the message-clear register of NoC overlay stream ``stream``
    (None: the stream ``NOC_OVERLAY_MSG_CLEAR_StreamId_<which>`` of the thread config)."""
    if stream is None:
        stream = thread.tcfg.get(f"NOC_OVERLAY_MSG_CLEAR_StreamId_{which}")
    clears = unpackers(thread.core).overlay_clears
    clears[stream] = clears.get(stream, 0) + 1
