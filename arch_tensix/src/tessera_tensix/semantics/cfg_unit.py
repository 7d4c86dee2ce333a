"""The Configuration Unit: SETC16, WRCFG, RDCFG, RMWCIB0..3, CFGSHIFTMASK, STREAMWRCFG.

Functional models of ConfigurationUnit.md, BackendConfiguration.md, SETC16.md, WRCFG.md,
RDCFG.md and RMWCIB.md (WormholeB0; the BlackholeA0 pages are the same models) and the
Blackhole-only CFGSHIFTMASK.md and STREAMWRCFG.md.  Registers are addressed by index and
read/written through :mod:`tessera_tensix.cfgregs` (the register map of the chip, two
Config banks chosen by the thread's ``CFG_STATE_ID_StateID``).

* SETC16 writes ``ThreadConfig[CurrentThread][CfgIndex]`` (16 bits); WRCFG writes one
  register, or with ``Is128Bit`` the four at ``CfgIndex & ~3`` from GPRs ``InputReg & ~3``
  upwards; RDCFG reads one into a GPR; RMWCIB<n> replaces the bits ``Mask`` of byte n of
  a register with ``NewValue``; CFGSHIFTMASK combines a register with a rotated, masked
  ``SCRATCH_SEC[i].val`` (i = ``ScratchIndex``, or the current thread for 3).
* An index out of range (``CfgIndex >= THD_STATE_SIZE`` / ``>= CFG_STATE_SIZE*4``) is
  undefined behaviour: a rule stop; leniently the instruction does nothing.
* Writes take effect at once.  The instruction right after WRCFG/CFGSHIFTMASK must not
  consume what it wrote, and on Blackhole the one right after RDCFG not the GPR it writes:
  :mod:`tessera_tensix.hazards` watches that next instruction (a rule; leniently it sees
  the new value).  Wormhole's RDCFG from two threads in one cycle dropping all but one is
  timing between threads, which the model does not have: not checked.
* SETC16 on a clock-gating register (``CG_CTRL_*``) has no effect in the model.  A SETC16
  to the register of ``UNPACK_MISC_CFG_CfgContextCntReset_0/_1`` resets the issuing
  thread's configuration context counter of each unpacker whose ``CfgContextCntReset``
  bit it writes as 1 (the page says "writing to" the register resets "the counters";
  which counters a value resets is our reading of the field names).
* STREAMWRCFG (Blackhole) reads a NoC overlay stream register, which direct mode does not
  have: the run stops naming the stream and register (there is no lenient outcome).
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap
from tessera_tensix import cfgregs, hazards, rules
from tessera_tensix.semantics import op

MASK32 = 0xFFFF_FFFF
CONTEXT_RESET = "UNPACK_MISC_CFG_CfgContextCntReset_"


def _cfg_index_ok(thread: Any, ins: Any, index: int) -> bool:
    words = cfgregs.register_map(thread.core.chip).cfg_words
    if index < words:
        return True
    rules.broken(thread, ins, f"configuration index {index} is out of range (CFG_STATE_SIZE*4 = {words}; "
                              "undefined behaviour)")
    return False


@op("SETC16")
def setc16(thread: Any, ins: Any) -> None:
    index, words = ins.setc16_reg, cfgregs.register_map(thread.core.chip).tcfg_words
    if index >= words:
        rules.broken(thread, ins, f"thread-configuration index {index} is out of range "
                                  f"(THD_STATE_SIZE = {words}; undefined behaviour)")
        return
    cfgregs.write_tcfg(thread, index, ins.setc16_value)
    rmap = cfgregs.register_map(thread.core.chip)
    if index == rmap.tcfg_index.get(CONTEXT_RESET + "0"):
        from tessera_tensix import unpack

        for which in (0, 1):
            if thread.tcfg.get(CONTEXT_RESET + str(which)):
                unpack.reset_context_counter(thread.core, thread.tid, which)


@op("WRCFG")
def wrcfg(thread: Any, ins: Any) -> None:
    index = ins.cfg_reg
    if not _cfg_index_ok(thread, ins, index):
        return
    core, bank, gpr = thread.core, cfgregs.state_id(thread), thread.gpr
    if ins.wr128b:
        first, reg = index & ~3, ins.gpr_address & ~3
        values = gpr[reg:reg + 4]                  # read all four before writing any
        for i, value in enumerate(values):
            cfgregs.write_cfg(core, bank, first + i, value)
        hazards.watch_config(thread, ins, bank, range(first, first + 4), "WRCFG.md")
    else:
        cfgregs.write_cfg(core, bank, index, gpr[ins.gpr_address])
        hazards.watch_config(thread, ins, bank, (index,), "WRCFG.md")


@op("RDCFG")
def rdcfg(thread: Any, ins: Any) -> None:
    index = ins.cfg_reg
    if not _cfg_index_ok(thread, ins, index):
        return
    thread.gpr[ins.gpr_address] = cfgregs.read_cfg(thread.core, cfgregs.state_id(thread), index)
    if thread.core.chip == "bh" and thread.core.config.strict_rdcfg:  # Blackhole's result arrives
        hazards.watch_gpr(thread, ins, ins.gpr_address)              # late (RDCFG.md)


def _rmwcib(thread: Any, ins: Any, byte: int) -> None:
    index = ins.cfg_reg_addr
    if not _cfg_index_ok(thread, ins, index):
        return
    core, bank = thread.core, cfgregs.state_id(thread)
    shift, mask = 8 * byte, ins.mask
    old = cfgregs.read_cfg(core, bank, index)
    new = (old & ~(mask << shift)) | ((ins.data & mask) << shift)
    cfgregs.write_cfg(core, bank, index, new, resets=False)


@op("RMWCIB0")
def rmwcib0(thread: Any, ins: Any) -> None:
    _rmwcib(thread, ins, 0)


@op("RMWCIB1")
def rmwcib1(thread: Any, ins: Any) -> None:
    _rmwcib(thread, ins, 1)


@op("RMWCIB2")
def rmwcib2(thread: Any, ins: Any) -> None:
    _rmwcib(thread, ins, 2)


@op("RMWCIB3")
def rmwcib3(thread: Any, ins: Any) -> None:
    _rmwcib(thread, ins, 3)


def rotr(value: int, amount: int) -> int:
    """Rotate a 32-bit ``value`` right by ``amount`` (0..31) bits."""
    amount &= 31
    return ((value >> amount) | (value << (32 - amount))) & MASK32 if amount else value & MASK32


#: CFGSHIFTMASK AluMode -> combine(config value, scratch value)
_ALU = (
    lambda c, s: c | s,
    lambda c, s: c & s,
    lambda c, s: c ^ s,
    lambda c, s: c + s,
    lambda c, s: c | ~s,
    lambda c, s: c & ~s,
    lambda c, s: c ^ ~s,
    lambda c, s: c - s,
)


@op("CFGSHIFTMASK")
def cfgshiftmask(thread: Any, ins: Any) -> None:
    index = ins.cfg_reg_7_0
    if not _cfg_index_ok(thread, ins, index):
        return
    core = thread.core
    which = ins.scratch_sel if ins.scratch_sel < 3 else thread.tid
    mask = ((2 << ins.mask_width) - 1) & MASK32
    amount = ins.right_cshift_amt
    scratch = rotr(core.cfg.get(f"SCRATCH_SEC{which}_val") & mask, amount)
    bank = cfgregs.state_id(thread)
    value = cfgregs.read_cfg(core, bank, index)
    if ins.disable_mask_on_old_val == 0:
        value &= ~rotr(mask, amount) & MASK32
    value = _ALU[ins.operation](value, scratch) & MASK32
    cfgregs.write_cfg(core, bank, index, value)
    hazards.watch_config(thread, ins, bank, (index,), "CFGSHIFTMASK.md")


@op("STREAMWRCFG")
def streamwrcfg(thread: Any, ins: Any) -> None:
    if not _cfg_index_ok(thread, ins, ins.cfg_reg):
        return
    select = ins.stream_id_sel & 3                # StreamSelect [22:21]; bit 23 is unused
    stream = thread.tcfg.get(f"STREAM_ID_SYNC_SEC{select}_BankSel")
    raise Trap(rules.RULE, ins.word,
               name=f"{ins.mnemonic}: reads NoC overlay stream {stream} register {ins.stream_reg_addr}, "
                    "which direct mode does not model", word=ins.word)
