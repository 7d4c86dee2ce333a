"""PACR and PACR_SETREG: the packer instructions (WormholeB0 …/PACR.md, PACR_SETREG.md).

The work is :mod:`tessera_tensix.pack`'s; this module turns each chip's encoding into
its request.  Wormhole PACR: AddrMod [16:15], ZeroWrite [12], PackerMask [11:8],
OvrdThreadId [7], Concat [4], Flush [1], Last [0].  Blackhole PACR (tt-llk
assembly.yaml; no vendor page): CfgContext [22:21], RowPadZero [20:18], DstAccessMode
[17], AddrMode [16:15], AddrCntContext [14:13], ZeroWrite [12], ReadIntfSel [11:8],
OvrdThreadId [7], Concat [4], CtxtCtrl [3:2], Flush [1], Last [0]; a CtxtCtrl other
than 0 (context tracking in packer flops) is not modelled and stops the run.

The packers accept work at once and finish it within the instruction, so PACR never
waits (the Dest read-after-write window is a hardware stall, not a rule).

PACR_SETREG (Wormhole: Push [23], AddrSel [22], Value10 [21:12], PackSel [11:8],
AddrMid [6-bit StreamId, 7:2], Flush [1], Last [0]) flushes the packers' partly filled
16-byte buffers to L1 (padded with zeros; the streams keep their addresses) and writes
``Value32`` to ``0xFFB00000 + SetRegBase[AddrSel] + (AddrMid << 12)``.  The page gives
the form ``Push=1, PackSel=0xF, Flush=1, Last=0`` only: other values break a rule, and
leniently the write happens when Push and Flush are both set (tt-llk's descriptions).
An address below 0xFFB11000 is undefined (rule; leniently no write); from 0xFFB80000 on
nothing is written; in between the word goes to the address space, which in direct
mode maps nothing there, so such a write stops the run naming the address.  Blackhole
(assembly.yaml): ModeSel [22] = 1 loads the 16-bit value of bits [18:3] into half
[2] of the packer's write-data flops; ModeSel 0 writes the flops to
``0xFFB00000 + SetRegBase[AddrSel (2 bits)] + (StreamId << 12)``.
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap
from tessera_tensix import pack, rules
from tessera_tensix.semantics import op


@op("PACR")
def pacr(thread: Any, ins: Any) -> None:
    if thread.core.chip == "bh":
        if ins.ctxt_ctrl:
            raise Trap(rules.RULE, ins.word, name=f"{ins.mnemonic}: CtxtCtrl {ins.ctxt_ctrl} (packer context "
                                                  "tracking) is not modelled", word=ins.word)
        req = pack.Pacr(mask=ins.read_intf_sel, addr_mod=ins.addr_mode_16_15, zero_write=bool(ins.zero_write),
                        ovrd_thread_id=bool(ins.ovrd_thread_id), concat=bool(ins.concat),
                        flush=bool(ins.flush), last=bool(ins.last), bh=True, cfg_context=ins.cfg_context,
                        addr_cnt_context=ins.addr_cnt_context, dst_access_mode=ins.dst_access_mode,
                        row_pad_zero=ins.row_pad_zero)
    else:
        req = pack.Pacr(mask=ins.pack_sel, addr_mod=ins.addr_mode, zero_write=bool(ins.zero_write),
                        ovrd_thread_id=bool(ins.ovrd_thread_id), concat=bool(ins.concat),
                        flush=bool(ins.flush), last=bool(ins.last))
    pack.execute(thread, ins, req)


@op("PACR_SETREG")
def pacr_setreg(thread: Any, ins: Any) -> None:
    unit = pack.packers(thread.core)
    if thread.core.chip == "bh":
        if ins.mode_sel:
            value16 = ((ins.stream_id_7_2 >> 1) | (ins.addr_sel << 5) | (ins.disable_stall << 7)
                       | ((ins.unused & 0x7F) << 9))
            shift = 16 * (ins.stream_id_7_2 & 1)
            unit.setreg_wrdata = (unit.setreg_wrdata & ~(0xFFFF << shift) | value16 << shift) & 0xFFFFFFFF
            return
        write = bool(ins.push and ins.flush)
        _flush_buffers(thread, ins, unit)
        if write:
            _write(thread, ins, pack.setreg_address(unit, ins.addr_sel, ins.stream_id_7_2), unit.setreg_wrdata)
        return
    odd = [f"{name}={value:#x}" for name, value, want in
           (("Push", ins.push, 1), ("PackSel", ins.pack_sel, 0xF), ("Flush", ins.flush, 1), ("Last", ins.last, 0))
           if value != want]
    if odd:
        rules.broken(thread, ins, f"{', '.join(odd)} is undefined (the form is Push=1, PackSel=0xF, "
                                  "Flush=1, Last=0)")
    out_fmt = thread.core.cfg.get(pack.SLOT[0] + "Out_data_format")
    address = pack.setreg_address(unit, ins.addr_sel, ins.stream_id)
    value = pack.setreg_value(unit, ins.wr_data, out_fmt)
    _flush_buffers(thread, ins, unit)
    if ins.push and ins.flush:
        _write(thread, ins, address, value)


def _flush_buffers(thread: Any, ins: Any, unit: pack.Packers) -> None:
    """Write out every partly filled 16-byte buffer before L1 (zero padded)."""
    l1 = thread.core.l1
    for i, p in enumerate(unit.packers):
        for stream in (p.rsi, p.exp, p.data):
            if stream.pending:
                stream.put(l1, b"\0" * (16 - len(stream.pending)), f"{ins.mnemonic} packer {i}")


def _write(thread: Any, ins: Any, address: int, value: int) -> None:
    if address < 0xFFB11000:
        rules.broken(thread, ins, f"the write address {address:#010x} is below 0xFFB11000 (undefined)")
        return
    if address >= 0xFFB80000:
        return
    space = thread.space
    if space.region_at(address) is None:
        raise Trap(rules.RULE, ins.word, name=f"{ins.mnemonic}: nothing is mapped at {address:#010x} to take "
                                              f"the write of {value:#010x}", word=ins.word)
    space.write(address, 4, value)
