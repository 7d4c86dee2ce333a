"""Helpers of the configuration-unit, ADC and scalar-unit memory tests.

* An independent encoder: one function per instruction, written from the encoding
  diagrams of the vendor's ISA pages (field positions as in ``Bits32_<NAME>.svg``), not
  from the package's tables.
* ``Thread`` — a stand-in Tensix thread (core with L1, GPRs, thread config) for running
  single words through the chip's decoder; ``machine`` builds a real direct-mode machine
  (whichever engine ``TESSERA_ENGINE`` names) with kernels for one or more threads.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tessera.isa import Decoder
from tessera.machine import Machine
from tessera.memory import AddressSpace
from tessera_tensix.arch import TENSIX_BH, TENSIX_WH
from tessera_tensix.config import ConfigSpace, TensixConfig
from tessera_tensix.core import TensixCore
from tessera_tensix.l1 import L1

ARCHS = {"bh": TENSIX_BH, "wh": TENSIX_WH}
CHIPS = ("wh", "bh")
L1_BYTES = {"wh": 1464 * 1024, "bh": 1536 * 1024}
M32 = 0xFFFF_FFFF


def _op(opcode: int, params: int) -> int:
    assert 0 <= params < 1 << 24, hex(params)
    return opcode << 24 | params


# ---------------------------------------------------------------- configuration unit
def SETC16(index, value): return _op(0xB2, index << 16 | value)
def WRCFG(reg, is128, index): return _op(0xB0, reg << 16 | is128 << 15 | index)
def RDCFG(reg, index): return _op(0xB1, reg << 16 | index)
def RMWCIB(byte, mask, value, index): return _op(0xB3 + byte, mask << 16 | value << 8 | index)


def CFGSHIFTMASK(mask_mode, alu, width, rotate, scratch, index):
    return _op(0xB8, mask_mode << 23 | alu << 20 | width << 15 | rotate << 10 | scratch << 8 | index)


def STREAMWRCFG(select, reg, index): return _op(0xB7, select << 21 | reg << 11 | index)
def SETDMAREG(value16, half): return _op(0x45, value16 << 8 | half)


def set_gpr(reg: int, value: int) -> list[int]:
    """Two SETDMAREG words: GPR ``reg`` = ``value``."""
    return [SETDMAREG(value & 0xFFFF, 2 * reg), SETDMAREG(value >> 16 & 0xFFFF, 2 * reg + 1)]


# ---------------------------------------------------------------- ADCs
def SETADC(sets, channel, xyzw, value): return _op(0x50, sets << 21 | channel << 20 | xyzw << 18 | value)
def SETADCXX(sets, x1, x0): return _op(0x5E, sets << 21 | x1 << 10 | x0)


def _xy(opcode, sets, v1b, v1a, v0b, v0a, bits=0, override=0):
    return _op(opcode, sets << 21 | override << 18 | v1b << 15 | v1a << 12 | v0b << 9 | v0a << 6 | bits)


def SETADCXY(sets, y1, x1, y0, x0, bits, override=0): return _xy(0x51, sets, y1, x1, y0, x0, bits, override)
def INCADCXY(sets, y1, x1, y0, x0, override=0): return _xy(0x52, sets, y1, x1, y0, x0, 0, override)
def ADDRCRXY(sets, y1, x1, y0, x0, bits, override=0): return _xy(0x53, sets, y1, x1, y0, x0, bits, override)
def SETADCZW(sets, w1, z1, w0, z0, bits, override=0): return _xy(0x54, sets, w1, z1, w0, z0, bits, override)
def INCADCZW(sets, w1, z1, w0, z0, override=0): return _xy(0x55, sets, w1, z1, w0, z0, 0, override)
def ADDRCRZW(sets, w1, z1, w0, z0, bits, override=0): return _xy(0x56, sets, w1, z1, w0, z0, bits, override)


# ---------------------------------------------------------------- scalar unit
def LOADIND(size, offset_half, increment, result, addr):
    return _op(0x49, size << 22 | offset_half << 14 | increment << 12 | result << 6 | addr)


def STOREIND_L1(size, offset_half, increment, data, addr):
    return _op(0x66, 1 << 23 | size << 21 | offset_half << 14 | increment << 12 | data << 6 | addr)


def STOREIND_MMIO(offset_half, increment, data, addr):
    return _op(0x66, 1 << 22 | offset_half << 14 | increment << 12 | data << 6 | addr)


def STOREIND_SRC(to_srcb, offset_half, increment, data, addr):
    return _op(0x66, to_srcb << 21 | offset_half << 14 | increment << 12 | data << 6 | addr)


def LOADREG(result, addr_lo): return _op(0x68, result << 18 | addr_lo)
def STOREREG(data, addr_lo): return _op(0x67, data << 18 | addr_lo)
def REG2FLOP_CFG(size, index, reg): return _op(0x48, size << 22 | index << 6 | reg)


def REG2FLOP_ADC(size, override, shift8, thread_sel, channel, adc_sel, cr, xyzw, reg):
    fields = channel << 5 | adc_sel << 3 | cr << 2 | xyzw
    return _op(0x48, size << 22 | (2 + override) << 20 | shift8 << 18 | thread_sel << 16 | fields << 6 | reg)


def ATCAS(set_val, cmp_val, ofs, addr): return _op(0x64, set_val << 18 | cmp_val << 14 | ofs << 12 | addr)
def ATINCGET(width, ofs, inout, addr): return _op(0x61, width << 14 | ofs << 12 | inout << 6 | addr)


def ATINCGETPTR(no_incr, incr_log2, width, ofs, result, addr):
    return _op(0x62, no_incr << 22 | incr_log2 << 18 | width << 14 | ofs << 12 | result << 6 | addr)


def ATSWAP(mask, data, addr, single=0): return _op(0x63, single << 22 | mask << 14 | data << 6 | addr)


DMANOP = _op(0x60, 0)


# ---------------------------------------------------------------- running words
class Thread:
    """The parts of a TensixThread the semantics use, with an L1 of the chip's size."""

    def __init__(self, chip: str = "wh", *, lenient: bool = False, tid: int = 0, core: Any = None) -> None:
        if core is None:
            core = TensixCore(TensixConfig(lenient=lenient), chip)
            core.l1 = L1(AddressSpace(), 0x1000_0000, chip)
            core.l1.signal = core.signal
        self.core = core
        self.arch = SimpleNamespace(name="tensix" if chip == "bh" else "tensix-wh")
        self.name = f"t{tid}"
        self.tid = tid
        self.gpr = [0] * 64
        self.tcfg = ConfigSpace()
        self.rwc = {"dst": 0, "srca": 0, "srcb": 0, "sp": 0}


_DECODERS = {"tensix": Decoder(TENSIX_BH), "tensix-wh": Decoder(TENSIX_WH)}


def execute(thread: Thread, *words: int) -> None:
    """Decode each word with the thread's chip table and run its semantics, as the engine does."""
    for i, word in enumerate(words):
        ins = _DECODERS[thread.arch.name].decode(word, 4 * i)
        ins.run(thread, ins)


def machine(chip: str, *kernels: list[int], lenient: bool = False, **config: Any) -> Machine:
    """A direct-mode machine running ``kernels[i]`` on thread Ti (at 0x1000·i)."""
    m = Machine(ARCHS[chip], config={"threads": len(kernels), "lenient": lenient, **config})
    for tid, words in enumerate(kernels):
        m.space.write_bytes(0x1000 * tid, b"".join(w.to_bytes(4, "little") for w in [*words, 0]))
        if tid:
            agent = m.agent(f"t{tid}")
            agent.pc = agent.next_pc = 0x1000 * tid
    return m
