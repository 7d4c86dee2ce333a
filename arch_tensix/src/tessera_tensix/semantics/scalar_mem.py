"""Scalar-unit (ThCon) memory, register and atomic instructions.

LOADIND, STOREIND (L1 / MMIO / SrcA-SrcB modes), LOADREG, STOREREG, REG2FLOP (ADC and
THCON-configuration modes), ATCAS, ATINCGET, ATINCGETPTR, ATSWAP and DMANOP: functional
models of the WormholeB0 pages of those names (Blackhole shares them; its L1 is larger).
L1 is ``core.l1`` (byte offsets); GPRs are ``thread.gpr``; ADCs :mod:`tessera_tensix.adc`;
configuration :mod:`tessera_tensix.cfgregs`.

Addressing.  ``OffsetHalfReg`` names a 16-bit half of the GPR file (half h is GPR h>>1,
the high half when h is odd); ``OffsetIncrement`` 0..3 adds 0, 2, 4 or 16 to it (wrapping
at 16 bits).  L1 addresses are ``GPR[AddrReg]*16`` (+ the offset, or ``Ofs*4``) modulo
2**32; one at or beyond the chip's L1 size (1464 KiB Wormhole, 1536 KiB Blackhole) is
undefined behaviour: a rule stop, leniently the instruction does nothing at all.

Choices where the pages are silent (also in docs/tensix.md):

* Loads complete at once: the GPR holds the result when the next instruction runs (the
  hardware delivers it later; STALLWAIT C0 / FLUSHDMA find nothing outstanding).
* Bits the encoding diagrams leave unassigned inside a table field are ignored: LOADIND
  bit 21 (``offset_index`` is [21:14], OffsetHalfReg [20:14]), ATCAS bit 22, ATINCGET
  bits [22:19] (IntWidth is [18:14]), ATSWAP bits [13:12], REG2FLOP-to-ADC bit 12.
* REG2FLOP with [21:20] = 1 is neither documented mode: a rule stop, leniently nothing.
* MMIO (LOADREG, STOREREG, STOREIND's MMIO mode: ``0xFFB00000 + …``, undefined below
  0xFFB11000) goes to whatever the machine maps at that address (the Dest debug window
  at 0xFFBD8000, as seen from the issuing thread); where direct mode maps nothing the run
  stops naming the address (there is no lenient outcome).
* Waits (ATCAS until the word equals CmpVal, ATINCGETPTR until the FIFO is not full /
  not empty, STOREIND to SrcA/SrcB until the unpackers own the bank) park the thread
  before any side effect and name the condition; they are re-checked whenever the
  backend signals a change (every L1 write does).
* STOREIND to SrcA/SrcB: undefined row or address bits are a rule stop; leniently the
  offset GPR is still advanced (the model does that first) and nothing is written.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera.control import Trap
from tessera_tensix import cfgregs, rules
from tessera_tensix.adc import adcs
from tessera_tensix.semantics import op
from tessera_tensix.srcab import MASK19, UNPACKERS

MASK32 = 0xFFFF_FFFF
#: OffsetIncrement -> bytes added to the offset half-register
_STEP = (0, 2, 4, 16)
#: the scalar unit's MMIO window: 0xFFB00000 + 4·AddrLo; below 0xFFB11000 is undefined
MMIO_BASE, MMIO_FIRST = 0xFFB0_0000, 0xFFB1_1000


# ----------------------------------------------------------------- GPR and L1 helpers
def half(gpr: list[int], index: int) -> int:
    """16-bit half ``index`` of the GPR file."""
    return (gpr[index >> 1] >> (16 * (index & 1))) & 0xFFFF


def set_half(gpr: list[int], index: int, value: int) -> None:
    shift = 16 * (index & 1)
    word = gpr[index >> 1]
    gpr[index >> 1] = (word & ~(0xFFFF << shift) & MASK32) | ((value & 0xFFFF) << shift)


def advance(gpr: list[int], index: int, increment: int) -> None:
    """The offset half-register ``index`` += 0 / 2 / 4 / 16 (``OffsetIncrement``)."""
    if increment:
        set_half(gpr, index, half(gpr, index) + _STEP[increment])


def _in_l1(thread: Any, ins: Any, address: int) -> bool:
    """Is ``address`` inside L1?  Else break the rule (lenient: False).  Every access is
    aligned to its size and L1's size is a multiple of 16, so the access then fits."""
    size = thread.core.l1.size
    if address < size:
        return True
    rules.broken(thread, ins, f"L1 address {address:#x} is beyond L1 ({size // 1024} KiB; undefined behaviour)")
    return False


def _note(thread: Any, kind: str, address: int) -> None:
    """The L1 note (:mod:`tessera_tensix.l1`) of a scalar-unit access to the 16-byte row of
    ``address``: ``read``, ``write`` (all 128 bits) or ``rmw`` (a narrower write or an
    atomic, which L1.md says is a read-modify-write of the row)."""
    row = address & ~15
    thread.l1_note = (("thcon", kind, (row, row + 16)),)


def _l1_write(thread: Any, offset: int, data: Any, who: str) -> None:
    """Write L1 (which wakes threads waiting on L1 contents: :attr:`L1.signal`)."""
    thread.core.l1.write(offset, data, who)


def _mmio_address(thread: Any, ins: Any, address: int) -> bool:
    if address >= MMIO_FIRST:
        return True
    rules.broken(thread, ins, f"MMIO address {address:#010x} is below {MMIO_FIRST:#010x} (undefined behaviour)")
    return False


def _mmio_region(thread: Any, ins: Any, address: int) -> Any:
    space = getattr(thread, "space", None)
    region = space.region_at(address) if space is not None else None
    if region is None:
        raise Trap(rules.RULE, address,
                   name=f"{ins.mnemonic}: MMIO register {address:#010x} is not modelled in direct mode",
                   word=ins.word)
    return space


# ----------------------------------------------------------------- LOADIND / STOREIND
def _l1_operands(thread: Any, ins: Any, offset_half: int) -> int:
    """``GPR[AddrReg]*16 + *Offset`` (modulo 2**32)."""
    gpr = thread.gpr
    return (gpr[ins.addr_reg_index] * 16 + half(gpr, offset_half)) & MASK32


@op("LOADIND")
def loadind(thread: Any, ins: Any) -> None:
    gpr, size = thread.gpr, ins.size_sel
    offset_half = ins.offset_index & 0x7F          # OffsetHalfReg [20:14]; bit 21 unassigned
    address = _l1_operands(thread, ins, offset_half)
    if not _in_l1(thread, ins, address):
        return
    advance(gpr, offset_half, ins.auto_inc_spec)
    _note(thread, "read", address)
    l1, result = thread.core.l1, ins.data_reg_index
    if size == 0:                                  # 128 bits into four GPRs
        first = result & 0x3C
        gpr[first:first + 4] = [int(v) for v in l1.read_as(address & ~15, np.uint32, 4, "LOADIND")]
    elif size == 1:
        gpr[result] = l1.word(address & ~3, "LOADIND")
    elif size == 2:                                # low 16 bits; the high half is kept
        value = int(l1.read_as(address & ~1, np.uint16, 1, "LOADIND")[0])
        gpr[result] = (gpr[result] & 0xFFFF_0000) | value
    else:                                          # low 8 bits
        gpr[result] = (gpr[result] & 0xFFFF_FF00) | int(l1.read(address, 1, "LOADIND")[0])


@op("STOREIND")
def storeind(thread: Any, ins: Any) -> None:
    if ins.mem_hier_sel:
        _storeind_l1(thread, ins)
    elif ins.size_sel_22_22:
        _storeind_mmio(thread, ins)
    else:
        _storeind_src(thread, ins)


def _storeind_l1(thread: Any, ins: Any) -> None:
    gpr = thread.gpr
    size = ins.size_sel_22_22 << 1 | ins.reg_size_sel
    offset_half = ins.offset_index_20_14
    address = _l1_operands(thread, ins, offset_half)
    if not _in_l1(thread, ins, address):
        return
    advance(gpr, offset_half, ins.auto_inc_spec)   # before the GPRs are read, as in the model
    _note(thread, "rmw" if size else "write", address)
    data = ins.data_reg_index
    if size == 0:
        first = data & 0x3C
        _l1_write(thread, address & ~15, np.array(gpr[first:first + 4], dtype=np.uint32), "STOREIND")
    elif size == 1:
        _l1_write(thread, address & ~3, (gpr[data] & MASK32).to_bytes(4, "little"), "STOREIND")
    elif size == 2:
        _l1_write(thread, address & ~1, (gpr[data] & 0xFFFF).to_bytes(2, "little"), "STOREIND")
    else:
        _l1_write(thread, address, bytes([gpr[data] & 0xFF]), "STOREIND")


def _storeind_mmio(thread: Any, ins: Any) -> None:
    gpr = thread.gpr
    offset_half = ins.offset_index_20_14
    address = MMIO_BASE + ((gpr[ins.addr_reg_index] + (half(gpr, offset_half) >> 4)) & 0x000F_FFFC)
    if not _mmio_address(thread, ins, address):
        return
    space = _mmio_region(thread, ins, address)
    space.write(address, 4, gpr[ins.data_reg_index] & MASK32)
    advance(gpr, offset_half, ins.auto_inc_spec)


def bf16_lo(x: int) -> int:
    """``ReadBF16Lo``: the low half holds sign, 7-bit mantissa, 8-bit exponent (in that
    order from the top); Src holds BF16 as sign, 10-bit mantissa, 8-bit exponent."""
    return ((x & 0x8000) << 3) | ((x & 0x7F00) << 3) | (x & 0xFF)


def bf16_hi(x: int) -> int:
    """``ReadBF16Hi``: the high half is an ordinary BF16 (sign, exponent, mantissa)."""
    return ((x >> 31) << 18) | (((x >> 16) & 0x7F) << 11) | ((x >> 23) & 0xFF)


def _storeind_src(thread: Any, ins: Any) -> None:
    core, gpr = thread.core, thread.gpr
    to_srcb = ins.reg_size_sel                     # StoreToSrcB [21]
    src = core.srcb if to_srcb else core.srca
    bank = src.unpacker_bank
    src.require(thread, bank, UNPACKERS, "STOREIND")   # parks before any side effect
    data = ins.data_reg_index & 0x3C
    datum = [bf16_lo(gpr[data]), bf16_hi(gpr[data]), bf16_lo(gpr[data + 1]), bf16_hi(gpr[data + 1])]
    offset_half = ins.offset_index_20_14
    address = (gpr[ins.addr_reg_index] + (half(gpr, offset_half) >> 4)) & 0xF_FFFF
    advance(gpr, offset_half, ins.auto_inc_spec)
    if address & 0xF_0000:
        rules.broken(thread, ins, f"SrcA/SrcB address {address:#x} sets bits 19:16 (undefined behaviour)")
        return
    column = (address & 3) * 4
    if to_srcb:
        row = address >> 2
        if row >= 16:
            rules.broken(thread, ins, f"SrcB row {row} is beyond 15 (undefined behaviour)")
            return
        row += src.src_row[thread.tid]
    else:
        row = (address >> 2) - 4
        if row < 0:                                # rows -4..-1 write nothing
            return
        if thread.tcfg.get("SRCA_SET_SetOvrdWithAddr"):
            if row >= 64:
                rules.broken(thread, ins, f"SrcA row {row} is beyond 63 (undefined behaviour)")
                return
        else:
            if row >= 16:
                rules.broken(thread, ins, f"SrcA row {row} is beyond 15 (undefined behaviour)")
                return
            row += src.src_row[thread.tid]
    src.rows[bank, row, column:column + 4] = np.array(datum, dtype=np.uint32) & MASK19


# ----------------------------------------------------------------- LOADREG / STOREREG
def _reg_address(thread: Any, ins: Any) -> int | None:
    address = MMIO_BASE + (ins.reg_addr << 2)
    return address if _mmio_address(thread, ins, address) else None


@op("LOADREG")
def loadreg(thread: Any, ins: Any) -> None:
    address = _reg_address(thread, ins)
    if address is None:
        return
    space = _mmio_region(thread, ins, address)
    thread.gpr[ins.tdma_data_reg_index] = space.read(address, 4) & MASK32


@op("STOREREG")
def storereg(thread: Any, ins: Any) -> None:
    address = _reg_address(thread, ins)
    if address is None:
        return
    space = _mmio_region(thread, ins, address)
    space.write(address, 4, thread.gpr[ins.tdma_data_reg_index] & MASK32)


# ----------------------------------------------------------------- REG2FLOP
@op("REG2FLOP")
def reg2flop(thread: Any, ins: Any) -> None:
    target = ins.target_sel
    if target == 0:
        _reg2flop_config(thread, ins)
    elif target & 2:
        _reg2flop_adc(thread, ins, override=bool(target & 1))
    else:
        rules.broken(thread, ins, "bits 21:20 = 1 select no documented mode (0: THCON configuration, "
                                  "2 or 3: an ADC)")


def _reg2flop_config(thread: Any, ins: Any) -> None:
    rmap = cfgregs.register_map(thread.core.chip)
    index, limit = ins.flop_index, rmap.global_base - rmap.thcon_base
    if index >= limit:
        rules.broken(thread, ins, f"THCON configuration index {index} is beyond {limit - 1} "
                                  "(only THCON_ fields; undefined behaviour)")
        return
    core, bank, gpr = thread.core, cfgregs.state_id(thread), thread.gpr
    if ins.size_sel == 0:                          # 128 bits
        first, reg = rmap.thcon_base + (index & ~3), ins.reg_index & ~3
        for i, value in enumerate(gpr[reg:reg + 4]):
            cfgregs.write_cfg(core, bank, first + i, value)
    else:
        cfgregs.write_cfg(core, bank, rmap.thcon_base + index, gpr[ins.reg_index])


def _reg2flop_adc(thread: Any, ins: Any, override: bool) -> None:
    value, size, shift8 = thread.gpr[ins.reg_index] & MASK32, ins.size_sel, ins.byte_offset
    if size == 0:                                  # "128 bit (not valid)"
        value = 0
    elif size == 1:
        value = value if shift8 == 0 else 0
    elif size == 2:
        value = value & 0xFFFF if shift8 == 0 else value >> 16 if shift8 == 2 else 0
    else:
        value = (value >> (8 * shift8)) & 0xFF
    which = ins.context_id_2 if override else thread.tid
    fields = ins.flop_index                        # Channel[5] ADCSel[4:3] Cr[2] XYZW[1:0]
    adc_sel = (fields >> 3) & 3
    if which >= 3 or adc_sel == 3:                 # the model returns without an effect
        return
    counter = "XYZW"[fields & 3] + ("_Cr" if fields & 4 else "")
    adcs(thread.core).set(which, adc_sel, (fields >> 5) & 1, counter, value)


# ----------------------------------------------------------------- atomics
def _word(thread: Any, address: int) -> int:
    return thread.core.l1.word(address, "scalar unit")


@op("ATCAS")
def atcas(thread: Any, ins: Any) -> None:
    address = (thread.gpr[ins.addr_reg_index] * 16 + ins.sel32b * 4) & MASK32
    if not _in_l1(thread, ins, address):
        return
    compare, new = ins.cmp_val, ins.swap_val & 0xF     # SetVal [21:18]; bit 22 unassigned
    old = _word(thread, address)
    if old != compare:
        thread.core.signal.hold(thread, f"ATCAS waits: L1 word {address:#x} holds {old:#x}, not {compare}")
    _note(thread, "rmw", address)
    _l1_write(thread, address, new.to_bytes(4, "little"), "ATCAS")


@op("ATINCGET")
def atincget(thread: Any, ins: Any) -> None:
    gpr = thread.gpr
    address = (gpr[ins.addr_reg_index] * 16 + ins.sel32b * 4) & MASK32
    if not _in_l1(thread, ins, address):
        return
    width = ins.wrap_val & 0x1F                    # IntWidth [18:14]
    mask = ((2 << width) - 1) & MASK32
    original = _word(thread, address)
    incremented = (original + gpr[ins.data_reg_index]) & MASK32
    _note(thread, "rmw", address)
    _l1_write(thread, address, ((incremented & mask) | (original & ~mask & MASK32)).to_bytes(4, "little"),
              "ATINCGET")
    gpr[ins.data_reg_index] = original


@op("ATINCGETPTR")
def atincgetptr(thread: Any, ins: Any) -> None:
    gpr = thread.gpr
    address = (gpr[ins.addr_reg_index] * 16) & MASK32
    if not _in_l1(thread, ins, address):
        return
    words = [int(v) for v in thread.core.l1.read_as(address, np.uint32, 4, "ATINCGETPTR")]
    rd, wr = words[0], words[1]
    fill = (wr - rd) & MASK32
    width, which = ins.wrap_val_17_14, ins.sel32b
    if which & 1:                                  # push: wait while full
        capacity = 1 << (width - 1) if width else 0x8000
        if fill % capacity == 0 and fill != 0:
            thread.core.signal.hold(thread, f"ATINCGETPTR waits: the FIFO at L1 {address:#x} is full "
                                            f"(Rd {rd}, Wr {wr}, capacity {capacity})")
    elif fill == 0:                                # pop: wait while empty
        thread.core.signal.hold(thread, f"ATINCGETPTR waits: the FIFO at L1 {address:#x} is empty "
                                        f"(Rd = Wr = {rd})")
    increment = 0 if ins.no_incr else 1 << ins.incr_val
    mask = (1 << width) - 1
    original = words[which]
    new = (((original + increment) & mask) | (original & ~mask)) & MASK32
    _note(thread, "rmw", address)
    _l1_write(thread, address + 4 * which, new.to_bytes(4, "little"), "ATINCGETPTR")
    gpr[ins.data_reg_index] = original


@op("ATSWAP")
def atswap(thread: Any, ins: Any) -> None:
    gpr = thread.gpr
    address = (gpr[ins.addr_reg_index] * 16) & MASK32
    if not _in_l1(thread, ins, address):
        return
    mask, single = ins.swap_mask & 0xFF, (ins.swap_mask >> 8) & 1   # Mask [21:14], SingleDataReg [22]
    data = ins.data_reg_index_13_6 & 0x3F                          # DataReg [11:6]
    if single:
        values = [0, 0, 0, 0]
        values[data & 3] = gpr[data]
    else:
        values = gpr[(data & 0x3C):(data & 0x3C) + 4]
    new = np.array(values, dtype="<u4").view("<u2")
    l1 = thread.core.l1
    old = l1.read_as(address, np.uint16, 8, "ATSWAP")
    keep = ((mask >> np.arange(8)) & 1).astype(bool)
    _note(thread, "rmw", address)
    _l1_write(thread, address, np.where(keep, new, old).astype(np.uint16), "ATSWAP")


@op("DMANOP")
def dmanop(thread: Any, ins: Any) -> None:
    """Occupies the scalar unit for one cycle; no architectural effect."""
    return None
