"""SFPLOADMACRO: an SFPLOAD, then up to four vector instructions scheduled for later cycles.

Vendor ISA pages ``WormholeB0/TensixTile/TensixCoprocessor/SFPLOADMACRO.md`` and its
Blackhole counterpart (functional model), ``SFPCONFIG.md`` (LoadMacroConfig, written by
:mod:`tessera_tensix.semantics.configops`), ``VectorUnit.md``; spec tensix-sfpu.md §17.2.

What runs.  The load part is SFPLOAD with VD = VDHi·4 + VDLo (LReg 0..7), Imm10 =
Imm9·2 + VDHi, the instruction's Mod0 and AddrMod.  Then, for each sub-unit k = Simple,
MAD, Round, Store, byte k of ``Sequence[MacroIndex]`` (bits 2:0 select, 5:3 delay, 6 and 7
the operand bits) schedules one instruction — none (0), undefined (1), SFPNOP (2), SFPSTORE
with VD 0 (3) or ``InstructionTemplate[sel − 4]`` (4..7), captured now — with the page's
operand overrides (VB/VC := the loaded VD, VD := the loaded VD or LReg[16]; the Store gets
the macro's Imm10, Mod0 from ``Misc``, the address this SFPLOADMACRO computed, no ADDR_MOD).
An opcode the sub-unit cannot run becomes SFPNOP.  A delay other than 7 first forgets the
instruction already scheduled on that sub-unit for the same slot.  Scheduled instructions
run with DISABLE_BACKDOOR_LOAD read as true; those whose model says ``unsigned VB = VD;``
(or ``VC = VD`` for SFPADDI/SFPMULI) read the macro's VB (VC) instead, passed to the
semantic functions as ``lanes.MACRO_VB`` / ``lanes.MACRO_VC``.

The clock (choices; the page defines cycles, a functional model has instructions):

* One cycle is one instruction the thread that issued the SFPLOADMACRO (the *owner*)
  passes to the backend, whatever its unit; MOP, REPLAY and MOP_CFG, which the front end
  consumes, are not cycles (the instructions they expand to are).  An instruction with
  delay d runs in cycle d + 1 after its SFPLOADMACRO: just before the instruction the
  owner issues in that cycle.  While any scheduled instruction counts instructions
  (Misc.UnitDelayKind), counters move only on the owner's SFPU instructions, but an
  instruction whose counter reached 0 still runs in the next cycle.
* While the owner waits (parks at its wait gate) or ends (END), cycles pass with nothing
  issued: the schedule runs out, or up to the first instruction that waits for SFPU
  instructions.  Instructions that count instructions stay pending after END (``units.
  loadmacro`` in ``--dump-state``).  An instruction that waits inside its own unit (e.g.
  MOVA2D for SrcA) is a cycle at each attempt.  Other threads' instructions do not clock
  the schedule.
* The instructions of one cycle run in the order Simple, MAD, Round, Store, each reading
  the LRegs as they were at the start of the cycle (the last one wins a register two of
  them write); flags, the flag stack, the PRNG and Dest change in that order.  A regular
  instruction issued in the same cycle runs after them and sees their results.  Results
  are written at once: the two-cycle latency of the MAD sub-unit is not modelled.
* A regular instruction issued to a sub-unit on a cycle a scheduled instruction runs there
  breaks a rule; ``--lenient`` discards it (the page: the scheduled one takes priority).
  Also rules: a Simple and a Round instruction in one cycle unless exactly one of them
  writes LReg[16] (†); an SFPSWAP scheduled on the Simple sub-unit with a MAD instruction
  other than SFPNOP in its cycle, or a Simple/Round instruction other than SFPNOP in the
  next (‡: an idle MAD sub-unit is accepted, as tt-llk's exp kernel relies on); selector 1;
  an opcode other than SFPSTORE for the Store sub-unit; two delay-7 instructions for one
  slot; LoadMacroConfig differing between lanes (per-lane macros are not modelled:
  leniently lane 0's configuration is used).  The page's other outcomes are undefined:
  leniently nothing is scheduled for such a sub-unit, and (†)/(‡) cases just run.
* SFPSWAP reads the value its model calls LReg[VD] through the macro's VB and writes VD
  before VC (:mod:`tessera_tensix.semantics.crosslane`), so a macro whose VC and VD are the
  same register keeps the VC result.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from tessera.control import Yield
from tessera_tensix import rules
from tessera_tensix.isa import FRONT_END, tables
from tessera_tensix.lanes import MACRO_VB, MACRO_VC
from tessera_tensix.semantics import op
from tessera_tensix.semantics.convert import is_wormhole
from tessera_tensix.semantics.dest_ops import sfpu_load, sfpu_store

SIMPLE, MAD, ROUND, STORE = range(4)
UNITS = ("Simple", "MAD", "Round", "Store")
#: Misc.UnitDelayKind: 0 WaitForElapsedCycles, 1 WaitForElapsedInstructions
CYCLES, INSTRUCTIONS = 0, 1
SFPNOP_WORD = 0x8F00_0000
SFPSTORE_WORD = 0x7200_0000                       # SFPSTORE, VD 0 (selector 3)

# The sub-unit table at the top of SFPLOADMACRO.md (Blackhole adds SFPARECIP, SFPGT, SFPLE
# to Simple and SFPMUL24 to MAD).
_SIMPLE_WH = frozenset({
    "SFPABS", "SFPAND", "SFPCAST", "SFPCOMPC", "SFPCONFIG", "SFPDIVP2", "SFPENCC", "SFPEXEXP",
    "SFPEXMAN", "SFPIADD", "SFPLZ", "SFPMOV", "SFPNOP", "SFPNOT", "SFPOR", "SFPPOPC", "SFPPUSHC",
    "SFPSETCC", "SFPSETEXP", "SFPSETMAN", "SFPSETSGN", "SFPSHFT", "SFPSWAP", "SFPTRANSP", "SFPXOR"})
_MAD_WH = frozenset({"SFPADD", "SFPADDI", "SFPLUT", "SFPLUTFP32", "SFPMAD", "SFPMUL", "SFPMULI",
                     "SFPNOP"})
_ROUND = frozenset({"SFPNOP", "SFPSHFT2", "SFP_STOCH_RND"})
_STORE = frozenset({"SFPSTORE"})
#: wormhole? -> what each sub-unit can run (CanExecuteOpcode)
CAN_EXECUTE = {
    True: (_SIMPLE_WH, _MAD_WH, _ROUND, _STORE),
    False: (_SIMPLE_WH | {"SFPARECIP", "SFPGT", "SFPLE"}, _MAD_WH | {"SFPMUL24"}, _ROUND, _STORE),
}
#: functional models with ``unsigned VB = VD;`` (SFPSWAP: our reading, see the docstring);
#: Wormhole's SFPAND/SFPOR too (Blackhole's choose VB or VD by Mod1 themselves)
_IMPLICIT_VB = frozenset({"SFPIADD", "SFPSHFT", "SFPXOR", "SFPSETEXP", "SFPSETMAN", "SFPSETSGN",
                          "SFPGT", "SFPLE", "SFPSWAP"})
_IMPLICIT_VB_WH = _IMPLICIT_VB | {"SFPAND", "SFPOR"}
#: functional models with ``unsigned VC = VD;``
_IMPLICIT_VC = frozenset({"SFPADDI", "SFPMULI"})


@functools.cache
def _names(wh: bool) -> dict[int, str]:
    """Opcode -> vendor instruction name of the chip."""
    return {info.opcode: name for name, info in tables("wh" if wh else "bh").rows.items()}


@functools.cache
def _sfpu_names(wh: bool) -> frozenset[str]:
    return frozenset(name for name, info in tables("wh" if wh else "bh").rows.items()
                     if info.resource == "SFPU")


@functools.cache
def _regular_unit(wh: bool) -> dict[str, int]:
    """The sub-unit a normally issued instruction occupies (SFPNOP: none — the Load
    column runs it too, so it never competes with a scheduled instruction)."""
    return {name: k for k, names in enumerate(CAN_EXECUTE[wh]) for name in names if name != "SFPNOP"}


@functools.cache
def _decoder(wh: bool) -> Any:
    from tessera.isa import Decoder
    from tessera_tensix.arch import TENSIX_BH, TENSIX_WH

    return Decoder(TENSIX_WH if wh else TENSIX_BH)


@functools.lru_cache(maxsize=1024)
def _base(wh: bool, word: int) -> Any:
    """The decoded instruction of a template word (never run itself: copied by _proxy)."""
    return _decoder(wh).decode(word, 0)


@functools.lru_cache(maxsize=4096)
def _proxy(wh: bool, word: int, overrides: tuple[tuple[str, int], ...]) -> Any:
    """The instruction a sub-unit runs: the template's decoded fields with the
    SFPLOADMACRO overrides.  Semantic functions cache derived data on their instruction
    object, so each distinct scheduled form is one object, reused."""
    base = _base(wh, word)
    ins = copy.copy(base)
    d = ins.__dict__
    for key in [k for k in d if k.startswith("_tx")]:
        del d[key]
    d.update(overrides)
    run = getattr(base.run, "resolve", None)
    ins.run = run() if run is not None else base.run
    ins.mnemonic = f"{base.mnemonic} (scheduled by sfploadmacro)"
    return ins


@dataclass
class Scheduled:
    """One instruction waiting on a sub-unit (plain data: pickles with the machine)."""

    unit: int
    delay: int                                   # cycles (or SFPU instructions) to wait
    kind: int                                    # CYCLES or INSTRUCTIONS
    name: str                                    # vendor name (SFPNOP for a no-op)
    word: int                                    # the template word it came from
    overrides: tuple[tuple[str, int], ...]       # fields the macro replaced
    vd: int                                      # its VD after the overrides (16: LReg[16])
    mod0: int = 0                                # Store: format
    addr: int = 0                                # Store: the Dest address of its SFPLOADMACRO

    def describe(self) -> dict[str, Any]:
        return {"unit": UNITS[self.unit], "wait": self.delay,
                "counts": "instructions" if self.kind else "cycles",
                "instruction": f"{self.name} {self.word:#010x}", "vd": self.vd,
                "overrides": {k: v for k, v in self.overrides if not k.startswith("_")}}


class Schedule:
    """The vector unit's instructions scheduled by SFPLOADMACRO (``core.unit("loadmacro")``)."""

    def __init__(self, core: Any = None) -> None:
        self.pending: list[Scheduled] = []
        #: tid of the thread whose instructions clock the schedule (the last SFPLOADMACRO's)
        self.owner: int | None = None
        #: an SFPSWAP ran on the Simple sub-unit in the last cycle (‡)
        self.swap_guard = False

    @property
    def busy(self) -> bool:
        return bool(self.pending) or self.swap_guard

    def state(self) -> dict[str, Any]:
        return {"owner": None if self.owner is None else f"t{self.owner}",
                "pending": [e.describe() for e in sorted(self.pending, key=lambda e: (e.delay, e.unit))]}

    # -- scheduling (SFPLOADMACRO)
    def add(self, thread: Any, plan: list[tuple[int, int, Scheduled | None]]) -> None:
        for unit, delay, entry in plan:
            if delay != 7:                       # ForgetFutureInstructionWhoseDelayIs(Delay)
                self.pending = [e for e in self.pending if e.unit != unit or e.delay != delay]
            if entry is not None:
                self.pending.append(entry)
        self.owner = thread.tid

    # -- the clock
    def tick(self, thread: Any, ins: Any) -> bool:
        """Cycle of the owner issuing ``ins``: run what is due, then count down.  Returns
        False if ``ins`` must be discarded (its sub-unit runs a scheduled instruction)."""
        if thread.tid != self.owner or not self.busy:
            return True
        wh = is_wormhole(thread)
        name = _names(wh).get(ins.word >> 24)
        if name in FRONT_END:
            return True
        unit = _regular_unit(wh).get(name) if name is not None else None
        due = [e for e in self.pending if e.delay == 0]
        issue = True
        if due:
            self.pending = [e for e in self.pending if e.delay != 0]
            if unit is not None and any(e.unit == unit for e in due):
                rules.broken(thread, ins, f"issued to the {UNITS[unit]} sub-unit on the cycle an "
                                          "instruction scheduled by SFPLOADMACRO runs there "
                                          "(the scheduled one takes priority; --lenient discards "
                                          "this one)")
                issue = False
        self._cycle(thread, due, (ins, unit) if issue and unit is not None else None)
        if self.pending and (name in _sfpu_names(wh) or not self._counts_instructions()):
            for e in self.pending:
                e.delay -= 1
        return issue

    def idle(self, thread: Any) -> None:
        """Cycles pass with the owner issuing nothing (it waits, or it ended)."""
        if thread.tid != self.owner:
            return
        while self.busy:
            due = [e for e in self.pending if e.delay == 0]
            self.pending = [e for e in self.pending if e.delay != 0]
            self._cycle(thread, due, None)
            if not self.pending or self._counts_instructions():
                break
            for e in self.pending:
                e.delay -= 1

    def _counts_instructions(self) -> bool:
        return any(e.kind == INSTRUCTIONS for e in self.pending)

    def _cycle(self, thread: Any, due: list[Scheduled], regular: tuple[Any, int] | None) -> None:
        """Run the scheduled instructions of one cycle (the regular one runs afterwards)."""
        wh = is_wormhole(thread)
        due.sort(key=lambda e: e.unit)
        self._check_pairing(thread, wh, due, regular)
        if len(due) == 1:
            _execute(thread, wh, due[0])
        elif due:                                # each reads the LRegs of the cycle's start
            lreg = thread.core.sfpu.lreg
            start = lreg.copy()
            final = start.copy()
            try:
                for e in due:
                    lreg[...] = start
                    _execute(thread, wh, e)
                    changed = lreg != start
                    final[changed] = lreg[changed]
            finally:
                lreg[...] = final

    def _check_pairing(self, thread: Any, wh: bool, due: list[Scheduled],
                       regular: tuple[Any, int] | None) -> None:
        """(†) and (‡) of the sub-unit table, over the scheduled and the regular instruction."""
        busy: list[tuple[int, int, Scheduled | None]] = [(e.unit, e.vd, e) for e in due if e.name != "SFPNOP"]
        if regular is not None:
            busy.append((regular[1], -1, None))  # a regular instruction's VD is never 16
        first = next((e for e in due if e.name != "SFPNOP"), None)
        simple = [b for b in busy if b[0] == SIMPLE]
        rnd = [b for b in busy if b[0] == ROUND]
        if simple and rnd and (simple[0][1] == 16) == (rnd[0][1] == 16):
            blame = simple[0][2] or rnd[0][2]
            _broken(thread, wh, blame, "a Simple and a Round instruction run on the same cycle, "
                                       "so exactly one of them must write LReg[16] (SFPLOADMACRO.md †)")
        swap = next((e for e in due if e.unit == SIMPLE and e.name == "SFPSWAP"), None)
        if swap is not None and any(b[0] == MAD for b in busy):
            _broken(thread, wh, swap, "SFPSWAP on the Simple sub-unit needs the MAD sub-unit idle or "
                                      "running SFPNOP on the same cycle (SFPLOADMACRO.md ‡)")
        if self.swap_guard and any(b[0] in (SIMPLE, ROUND) for b in busy):
            blame = next((b[2] for b in busy if b[0] in (SIMPLE, ROUND) and b[2] is not None), first)
            _broken(thread, wh, blame, "the cycle after an SFPSWAP scheduled on the Simple sub-unit, "
                                       "the Simple and Round sub-units must be idle or run SFPNOP "
                                       "(SFPLOADMACRO.md ‡)")
        self.swap_guard = swap is not None


def _broken(thread: Any, wh: bool, entry: Scheduled | None, rule: str) -> None:
    if entry is None:                            # only the regular instruction: name SFPLOADMACRO
        rules.broken(thread, _base(wh, 0x9300_0000), rule)
    else:
        rules.broken(thread, _proxy(wh, entry.word, entry.overrides), rule)


def _execute(thread: Any, wh: bool, e: Scheduled) -> None:
    if e.name == "SFPNOP":
        return
    ins = _proxy(wh, e.word, e.overrides)
    if e.unit == STORE:
        sfpu_store(thread, ins, e.vd, e.mod0, 0, ins.dest_reg_addr, wh=wh, apply_addr_mod=False,
                   addr=e.addr, backdoor=False)
    else:
        ins.run(thread, ins)


# ------------------------------------------------------------------------------ the op
@op("SFPLOADMACRO")
def sfploadmacro(thread: Any, ins: Any) -> None:
    lreg_ind, mod0, addr_mod, imm10 = ins.lreg_ind, ins.instr_mod0, ins.sfpu_addr_mode, ins.dest_reg_addr
    wh = is_wormhole(thread)
    macro = lreg_ind >> 2
    vd = ((imm10 & 1) << 2) | (lreg_ind & 3)
    schedule = thread.core.unit("loadmacro", Schedule)
    plan = _plan(thread, ins, schedule, wh, macro, vd, mod0, imm10)   # rules: before any effect
    addr = sfpu_load(thread, ins, vd, mod0, addr_mod, imm10, wh=wh)
    for _unit, _delay, entry in plan:
        if entry is not None and entry.unit == STORE:
            entry.addr = addr
    schedule.add(thread, plan)
    frontend = getattr(thread, "frontend", None)
    if frontend is not None:
        frontend.macro = schedule
        if schedule.pending and not frontend.draining:
            raise Yield(ins.next)                # the thread steps (and clocks) from here


def _uniform(thread: Any, ins: Any, row: np.ndarray, what: str) -> int:
    """The configuration value of every lane; lanes that differ break a rule (lane 0's wins)."""
    first = row[0]
    if (row != first).any():
        rules.broken(thread, ins, f"{what} differs between lanes (per-lane macros are not "
                                  "modelled; --lenient uses lane 0's)")
    return int(first)


def _plan(thread: Any, ins: Any, schedule: Schedule, wh: bool, macro: int, vd: int, mod0: int,
          imm10: int) -> list[tuple[int, int, Scheduled | None]]:
    """(sub-unit, delay, instruction or None) for the four sub-units, per the page's loop."""
    sfpu = thread.core.sfpu
    seq = _uniform(thread, ins, sfpu.sequence[macro], f"LoadMacroConfig.Sequence[{macro}]")
    if not seq:
        return [(k, 0, None) for k in range(4)]
    misc = _uniform(thread, ins, sfpu.misc, "LoadMacroConfig.Misc")
    names = _names(wh)
    plan: list[tuple[int, int, Scheduled | None]] = []
    for k in range(4):
        bits = (seq >> (8 * k)) & 0xFF
        delay, sel = (bits >> 3) & 7, bits & 7
        entry = None
        if sel == 1:
            rules.broken(thread, ins, f"Sequence[{macro}] selects 1 for the {UNITS[k]} sub-unit "
                                      "(undefined behaviour; --lenient schedules nothing)")
        elif sel:
            if sel == 2:
                word = SFPNOP_WORD
            elif sel == 3:
                word = SFPSTORE_WORD
            else:
                word = _uniform(thread, ins, sfpu.template[sel - 4],
                                f"LoadMacroConfig.InstructionTemplate[{sel - 4}]")
            name = names.get(word >> 24)
            if name not in CAN_EXECUTE[wh][k]:
                if k == STORE:
                    rules.broken(thread, ins, f"the Store sub-unit can only run SFPSTORE, not "
                                              f"{name or hex(word >> 24)} (undefined behaviour; "
                                              "--lenient schedules nothing)")
                    plan.append((k, delay, None))
                    continue
                name, word = "SFPNOP", SFPNOP_WORD
            kind = (misc >> (8 + k)) & 1
            if k == STORE:
                entry = _store_entry(wh, word, bits, kind, delay, vd, macro, mod0, imm10, misc)
            else:
                entry = _unit_entry(wh, k, name, word, bits, kind, delay, vd)
            if delay == 7 and any(e.unit == k and e.delay == 7 for e in schedule.pending):
                rules.broken(thread, ins, f"two instructions scheduled on the {UNITS[k]} sub-unit "
                                          "for the same cycle (delay 7 forgets nothing; --lenient "
                                          "runs both)")
        plan.append((k, delay, entry))
    return plan


def _unit_entry(wh: bool, k: int, name: str, word: int, bits: int, kind: int, delay: int,
                vd: int) -> Scheduled:
    """A Simple/MAD/Round instruction with the page's VB/VC/VD overrides."""
    if name == "SFPNOP":
        return Scheduled(k, delay, kind, name, SFPNOP_WORD, (), -1)
    base = _base(wh, word)
    fields = tables("wh" if wh else "bh").rows[name].fields
    vd_field = "lreg_ind" if name == "SFPLUT" else "config_dest" if name == "SFPCONFIG" else "lreg_dest"
    template_vd = getattr(base, vd_field)
    vc_field = next((f for f in ("lreg_c", "lreg_src_c") if f in fields), None)
    has_vb = name == "SFPSHFT2" or ("lreg_src_b" in fields and not (wh and name in ("SFPAND", "SFPOR")))
    over: dict[str, int] = {}
    if bits & 0x80:                              # VB := the loaded VD (VC := Insn.VD if it has none)
        vb, vc = vd, getattr(base, vc_field) if vc_field else template_vd
        if name == "SFPSHFT2":                   # its VB is Imm12's low bits: skip "VB = Imm12 & 15"
            over[MACRO_VB] = vb
    else:                                        # VC := the loaded VD (VB := Insn.VD if it has none)
        vc = vd
        vb = template_vd if not has_vb else getattr(base, "lreg_src_b", template_vd)
    if vc_field is not None:
        over[vc_field] = vc
    if has_vb and name != "SFPSHFT2":
        over["lreg_src_b"] = vb
    if name in (_IMPLICIT_VB_WH if wh else _IMPLICIT_VB):
        over[MACRO_VB] = vb
    if name in _IMPLICIT_VC:
        over[MACRO_VC] = vc
    new_vd = 16 if bits & 0x40 else vd
    over[vd_field] = new_vd
    return Scheduled(k, delay, kind, name, word, tuple(sorted(over.items())), new_vd)


def _store_entry(wh: bool, word: int, bits: int, kind: int, delay: int, vd: int, macro: int,
                 mod0: int, imm10: int, misc: int) -> Scheduled:
    """The Store sub-unit's SFPSTORE: VD := LReg[16] (bit 6), its own VD (bit 7) or the
    loaded VD; Mod0 the macro's or Misc.StoreMod0; Imm10 the macro's."""
    base = _base(wh, word)
    svd = 16 if bits & 0x40 else base.lreg_ind if bits & 0x80 else vd
    smod0 = mod0 if (misc >> (4 + macro)) & 1 else misc & 15
    over = (("dest_reg_addr", imm10), ("instr_mod0", smod0), ("lreg_ind", svd))
    return Scheduled(STORE, delay, kind, "SFPSTORE", word, over, svd, mod0=smod0)
