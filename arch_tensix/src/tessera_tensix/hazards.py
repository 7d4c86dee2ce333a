"""Scheduling hazards the pages leave to software, checked in program order per thread.

The model runs each thread's instructions one after another and finishes every
instruction when it issues, so most of the pages' scheduling notes change nothing
here: where the hardware stalls a thread by itself (the cycle after MOVD2A, MOVB2A,
MOVD2B, SHIFTXB, SFPSWAP; Dst.md's four-cycle window for matrix-unit and PACR readers;
Blackhole's MAD family) there is nothing to check.  Where a page says *software* must
keep instructions apart and the distance is counted in instructions of one thread, the
model can see the mistake, and these rules stop the run (``rules.broken``; ``--lenient``
carries on as if the instructions had been far enough apart — the pages do not say what
a too-early read returns):

* **Dest read-after-write** (SFPLOAD.md, SFPLOADMACRO.md "Instruction scheduling"): at
  least three unrelated instructions must come between a matrix-unit instruction that
  writes Dest (MVMUL, DOTPV, GAPOOL, GMPOOL, ELWMUL, ELWADD, ELWSUB, MOVA2D, MOVDBGA2D,
  MOVB2D) and an SFPLOAD / SFPLOADMACRO of this thread reading a row it wrote.  A
  STALLWAIT whose block mask holds B8 (the vector unit) and whose conditions hold the
  matrix-unit one (Wormhole C7, Blackhole C4) ends the window, as the pages allow.
  Rows compare as physical Dest rows (a Dst32b write covers both halves).
* **The instruction right after** WRCFG (and Blackhole's CFGSHIFTMASK) must not consume
  the configuration it wrote (WRCFG.md, CFGSHIFTMASK.md: "any kind of Tensix NOP"
  between suffices).  A Configuration Unit instruction (RDCFG, RMWCIB, WRCFG …) right
  after is exempt: CFGSHIFTMASK.md says that unit's pipeline inserts the idle cycle
  itself, and Tessera takes that to hold after WRCFG too (WRCFG.md is silent on it).
  On Blackhole the instruction right after RDCFG must not consume the GPR RDCFG writes
  (RDCFG.md).  "Consume" is "read": the next backend instruction of the thread runs
  with the written fields (GPR) watched, and its first read of one breaks the rule.
* **Wormhole's vector unit, next cycle**: the instruction after a MAD-family result
  (SFPMAD, SFPADD, SFPMUL, SFPADDI, SFPMULI, SFPLUT, SFPLUTFP32) must not read it, and
  SFPSHFT2's shuffles restrict the next instruction (their pages); on both chips an
  SFPCONFIG that changes LaneConfig.DISABLE_BACKDOOR_LOAD must not be followed by an
  instruction that bit decides about (SFPCONFIG.md).  Checked by looking ahead from the
  earlier instruction (see the section below), so the stop names that one.

Not checked (docs/tensix.md lists them with reasons): Blackhole's stall-logic bugs
after MAD-family instructions (a look-ahead on every Blackhole MAD instruction costs
more than the vector unit's performance target allows), instructions SFPLOADMACRO
schedules, and anything between threads.

Counting instructions.  :func:`position` numbers a thread's backend instructions:
``ins.address // 4 + frontend.shift``, where the front end adds one for every
instruction an expansion issues and takes one off for every kernel word that is not a
backend instruction (MOP, MOP_CFG, REPLAY, words REPLAY records without executing).
Only instructions of the same thread count; a write by one thread and a read by
another are as far apart as the threads' synchronisation makes them, which is timing.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from tessera_tensix import rules
from tessera_tensix.dest import ADJ16, ADJ32, LOAD_32
from tessera_tensix.mop import FRONT_END_OPCODES

#: instructions that must come between a matrix-unit Dest write and a vector-unit read
WINDOW = 3
#: STALLWAIT block bit of the vector unit, and the matrix-unit condition per chip
B8 = 1 << 8
FPU_CONDITION = {"wh": 1 << 7, "bh": 1 << 4}
#: SFPLOAD Mod0 ZERO reads no Dest cell
LOAD_ZERO = 11


def position(thread: Any, ins: Any) -> int:
    """The place of ``ins`` among ``thread``'s backend instructions (see the module docstring;
    a tile's thread counts the words it popped instead of kernel addresses)."""
    popped = getattr(thread, "popped", None)
    return (ins.address // 4 if popped is None else popped) + thread.frontend.shift


class Recent:
    """A thread's matrix-unit Dest writes that a vector-unit read may still be too close to:
    ``(position, word, address, rows, Dst32b?)``, newest last; ``rows`` are physical rows
    (high halves for Dst32b) or a :func:`tessera_tensix.matrix.dest_span` number."""

    def __init__(self) -> None:
        self.dest: deque[tuple[int, int, int, Any, bool]] = deque(maxlen=WINDOW)


def _vendor(ins: Any) -> str:
    """The vendor name of a decoded instruction (``ttmvmul`` -> ``MVMUL``)."""
    from tessera_tensix.isa import row_info

    info = row_info(ins.encoding) if getattr(ins, "encoding", None) is not None else None
    if info is not None:
        return str(info.name)
    name = str(ins.mnemonic).upper()
    return name[2:] if name.startswith("TT") else name


def _name_of(thread: Any, word: int) -> str:
    return _vendor(thread.core.decode(word))


# ------------------------------------------------------------------ Dest read-after-write
def dest_written(thread: Any, ins: Any, rows: Any, wide: bool) -> None:
    """A matrix-unit instruction ``ins`` of ``thread`` wrote Dest ``rows`` (physical rows,
    the high halves when ``wide``; or a ``dest_span`` number).  Kept cheap: the rows are
    looked at only when a vector-unit read comes close."""
    try:
        frontend = thread.frontend
    except AttributeError:                         # a stand-in thread (unit tests)
        return
    recent = frontend.recent
    if recent is None:
        recent = frontend.recent = Recent()
        thread.core.dest_hazards = True
    recent.dest.append((ins.address // 4 + frontend.shift, ins.word, ins.address, rows, wide))
    thread.dest_note = (rows, wide)    # for a timing model, which takes it: dest_blocks(), accumulates()


def dest_blocks(rows: Any, wide: bool) -> frozenset[int]:
    """The aligned 8x16 blocks of Dest (physical row // 8) that a matrix-unit write of
    ``rows`` covered.  ``thread.dest_note`` holds the thread's last such write, ``(rows,
    wide)``; a timing model's observer of the writing instruction takes it (sets it to
    ``None``), so a note is never mistaken for a later instruction's.

    Dst.md: for four cycles after an instruction writes Dest, the aligned 8x16 block the
    write fell in cannot be read, and the hardware stalls a matrix-unit or PACR reader
    of it — time a cycle model charges (tessera-cycles' ``tensix`` model)."""
    return frozenset(r >> 3 for r in _physical(rows, wide))


#: matrix-unit instructions that read the Dest rows they write (they accumulate onto Dst;
#: Dst.md names MVMUL, GAPOOL, DOTPV, GMPOOL and ELWMUL); ELWADD / ELWSUB only with AddDst
ACCUMULATE = frozenset({"MVMUL", "DOTPV", "GAPOOL", "GMPOOL", "ELWMUL"})


def accumulates(ins: Any) -> bool:
    """Does matrix-unit instruction ``ins`` read the Dest rows it writes (Dst.md)?"""
    name = _vendor(ins)
    if name in ACCUMULATE:
        return True
    return name in ("ELWADD", "ELWSUB") and bool(getattr(ins, "dest_accum_en", 0) & 1)


def _physical(rows: Any, wide: bool) -> set[int]:
    """The physical rows (both halves of Dst32b cells) a write to ``rows`` covered."""
    if isinstance(rows, (int, np.integer)):        # matrix.dest_span
        rows = int(rows)
        row0, count, step = rows & 0x3FF, (rows >> 10) & 0xF, (rows >> 14) & 3
        remap, swizzle = (rows >> 16) & 1, (rows >> 17) & 1
        logical = (row0 + step * np.arange(count)) & 0x3FF
        rows = ADJ32[remap][swizzle][logical] if wide else ADJ16[remap][logical]
    out = set(np.asarray(rows).ravel().tolist())
    if wide:
        out |= {r + 8 for r in out}
    return out


def dest_read(thread: Any, ins: Any, addr: int, mod0: int) -> None:
    """SFPLOAD / SFPLOADMACRO ``ins`` reads the four Dest rows at ``addr`` in format ``mod0``
    (resolved): a rule if a matrix-unit write of this thread to one of them is fewer than
    :data:`WINDOW` instructions back."""
    frontend = getattr(thread, "frontend", None)
    if frontend is None or frontend.recent is None or not frontend.recent.dest or mod0 == LOAD_ZERO:
        return
    here = position(thread, ins)
    close = [w for w in frontend.recent.dest if 0 < here - w[0] <= WINDOW]
    if not close:
        return
    c = thread.core.cfg.fields
    remap = int(bool(c.get("DEST_ACCESS_CFG_remap_addrs", 0)))
    base = addr & 0x3FC
    if mod0 in LOAD_32:
        hi = ADJ32[remap][int(bool(c.get("DEST_ACCESS_CFG_swizzle_32b", 0)))][base:base + 4]
        read = set(hi.tolist()) | set((hi + 8).tolist())
    else:
        read = set(ADJ16[remap][base:base + 4].tolist())
    for wpos, word, where, rows, wide in reversed(close):
        if read & _physical(rows, wide):
            between = here - wpos - 1
            rules.broken(thread, ins, (
                f"reads Dest rows {base}..{base + 3}, which {_name_of(thread, word)} at {where:#x} wrote "
                f"with {between} instruction{'' if between == 1 else 's'} between; at least {WINDOW} must "
                "come between a matrix-unit write to Dest and a vector-unit read of it (SFPLOAD.md, "
                "instruction scheduling)"))
            return


def latched(thread: Any, latch: Any) -> None:
    """A STALLWAIT that holds vector-unit instructions until the thread's matrix-unit
    instructions have left the pipeline ends every Dest read-after-write window."""
    frontend = getattr(thread, "frontend", None)
    if (frontend is None or frontend.recent is None or latch.opcode != "STALLWAIT"
            or not latch.block & B8 or not latch.conditions & FPU_CONDITION.get(latch.chip, 0)):
        return
    frontend.recent.dest.clear()


# ------------------------------------------------------------------ the instruction right after
class Watch:
    """What the thread's next backend instruction must not read: backend configuration
    registers ``registers`` (``(bank, index)``) or GPRs ``gprs``, written by ``writer``
    (its vendor name) at ``address``; ``page`` names the rule's page; ``exempt_unit``: a
    consumer of this execution unit is exempt (CFGSHIFTMASK: the Configuration Unit)."""

    __slots__ = ("address", "exempt_unit", "gprs", "page", "registers", "writer")

    def __init__(self, writer: str, address: int, page: str, *, registers: tuple[tuple[int, int], ...] = (),
                 gprs: tuple[int, ...] = (), exempt_unit: str | None = None) -> None:
        self.writer, self.address, self.page = writer, address, page
        self.registers, self.gprs, self.exempt_unit = registers, gprs, exempt_unit

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.writer, self.address, self.page, self.registers, self.gprs, self.exempt_unit)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.writer, self.address, self.page, self.registers, self.gprs, self.exempt_unit = state


def _arm(thread: Any, ins: Any, watch: Watch) -> None:
    """Watch ``thread``'s next backend instruction; outside an expansion end the slice so
    that instruction goes through :meth:`TensixThread.run_slice`'s one-at-a-time loop."""
    frontend = getattr(thread, "frontend", None)
    if frontend is None:
        return
    frontend.watch = watch
    if not frontend.draining:
        from tessera.control import Yield

        raise Yield(ins.next)


def watch_config(thread: Any, ins: Any, bank: int, indices: Any, page: str) -> None:
    """WRCFG / CFGSHIFTMASK ``ins`` wrote ``Config[bank][i]`` for ``i`` in ``indices``:
    the thread's next instruction must not read them, unless it is a Configuration Unit
    instruction (CFGSHIFTMASK.md: that unit's pipeline inserts the idle cycle itself).
    Call after the write."""
    _arm(thread, ins, Watch(_vendor(ins), ins.address, page,
                            registers=tuple((bank, int(i)) for i in indices), exempt_unit="CFG"))


def watch_gpr(thread: Any, ins: Any, index: int) -> None:
    """Blackhole RDCFG ``ins`` wrote GPR ``index``: the next instruction must not read it."""
    _arm(thread, ins, Watch(_vendor(ins), ins.address, "RDCFG.md", gprs=(index,)))


class _Reported:
    """Breaks the watch's rule at the first watched read (then stays quiet: lenient)."""

    __slots__ = ("done", "ins", "thread", "watch")

    def __init__(self, thread: Any, ins: Any, watch: Watch) -> None:
        self.thread, self.ins, self.watch, self.done = thread, ins, watch, False

    def __call__(self, what: str) -> None:
        if self.done:
            return
        self.done = True
        w = self.watch
        fix = "a NOP between" if w.registers else "a STALLWAIT between"
        rules.broken(self.thread, self.ins, (
            f"reads {what}, which the {w.writer} right before (at {w.address:#x}) writes; the "
            f"instruction right after {w.writer} must not consume what it writes ({w.page}; {fix})"))


class _WatchedFields(dict):
    """A configuration space's fields while the next instruction runs: reads of ``names``
    are reported."""

    def __init__(self, data: dict[str, int], names: frozenset[str], report: _Reported) -> None:
        super().__init__(data)
        self.names, self.report = names, report

    def get(self, key: Any, default: Any = None) -> Any:
        if key in self.names:
            self.report(f"configuration field {key}")
        return dict.get(self, key, default)

    def __getitem__(self, key: Any) -> Any:
        if key in self.names:
            self.report(f"configuration field {key}")
        return dict.__getitem__(self, key)


class _WatchedGprs(list):
    """A thread's GPRs while the next instruction runs: reads of ``indices`` are reported."""

    def __init__(self, data: list[int], indices: frozenset[int], report: _Reported) -> None:
        super().__init__(data)
        self.indices, self.report = indices, report

    def __getitem__(self, key: Any) -> Any:
        hit = (set(range(*key.indices(len(self)))) if isinstance(key, slice) else {key}) & self.indices
        if hit:
            self.report(f"GPR {min(hit)}")
        return list.__getitem__(self, key)


def _install(thread: Any, ins: Any, watch: Watch) -> list[Any]:
    """Put the watched stand-ins in place; returns what :func:`_restore` needs."""
    from tessera_tensix import cfgregs

    report = _Reported(thread, ins, watch)
    undo: list[Any] = []
    core = thread.core
    if watch.registers:
        rmap = cfgregs.register_map(core.chip)
        spaces: dict[int, tuple[Any, set[str]]] = {}
        for bank, index in watch.registers:
            space = core.cfg if bank == 0 or index >= rmap.global_base else cfgregs.banks(core).bank1
            spaces.setdefault(id(space), (space, set()))[1].update(n for n, _s, _m in rmap.cfg[index])
        for space, names in spaces.values():
            original = space.fields
            space.fields = _WatchedFields(original, frozenset(names), report)
            undo.append((space, original))
    if watch.gprs:
        original = thread.gpr
        thread.gpr = _WatchedGprs(original, frozenset(watch.gprs), report)
        undo.append((thread, original))
    return undo


def _restore(thread: Any, undo: list[Any]) -> None:
    """Copy what the instruction wrote back into the original objects and put them back."""
    for owner, original in undo:
        if owner is thread:
            original[:] = list(thread.gpr)
            thread.gpr = original
        else:
            original.clear()
            original.update(owner.fields)
            owner.fields = original


def watched(thread: Any, ins: Any, call: Any) -> Any:
    """Run ``call()`` — executing ``ins``, the thread's next backend instruction — under the
    armed watch; the watch is spent once ``call()`` returns a true value (the instruction
    ran; a held instruction runs again later, watched again)."""
    frontend = thread.frontend
    watch = frontend.watch
    if watch.exempt_unit is not None:
        from tessera_tensix.isa import resource

        if resource(_vendor(ins)) == watch.exempt_unit:
            frontend.watch = None
            return call()
    undo = _install(thread, ins, watch)
    result = None
    try:
        result = call()
    finally:
        _restore(thread, undo)
        if result and frontend.watch is watch:
            frontend.watch = None
    return result


# ------------------------------------------------------------------ the vector unit's next cycle
# Wormhole's MAD sub-unit takes two cycles and does not stall a reader of its result
# (SFPMAD.md, SFPADD.md, SFPMUL.md, SFPADDI.md, SFPMULI.md, SFPLUT.md, SFPLUTFP32.md:
# "software must ensure that on the next cycle, the Vector Unit (SFPU) does not execute
# an instruction which reads from any location written"); SFPSHFT2's shuffling modes
# restrict the next cycle too (SFPSHFT2.md); a change of LaneConfig.DISABLE_BACKDOOR_LOAD
# may not be seen by the next instruction (SFPCONFIG.md, both chips).  These are checked
# by looking ahead when the earlier instruction runs: the thread's next backend
# instruction is the next queued word of an expansion, or the kernel word after the
# instruction (or after the MOP / REPLAY that issued it).  A MOP or REPLAY there (whose
# first word would need expanding) is not looked into.

#: SFPSHFT2 Mod1 values with next-cycle restrictions (SFPSHFT2.md)
SHFLROR1_AND_COPY4, SHFLROR1, SHFLSHR1 = 2, 3, 4
#: what may not follow SFPSHFT2 modes 2..4 on the next cycle (SFPSHFT2.md's list)
_NOT_AFTER_SHUFFLE = frozenset({"SFPABS", "SFPAND", "SFPCAST", "SFPDIVP2", "SFPEXEXP", "SFPEXMAN",
                                "SFPIADD", "SFPLZ", "SFPMOV", "SFPNOT", "SFPOR", "SFPSETEXP", "SFPSETMAN",
                                "SFPSETSGN", "SFPSHFT", "SFPSTOCHRND", "SFP_STOCH_RND", "SFPXOR"})
_ALL8 = frozenset(range(8))


def _f(ins: Any, name: str) -> int:
    return int(getattr(ins, name, 0) or 0)


def _shft2_reads(ins: Any, vc: int) -> set[int]:
    mod = _f(ins, "instr_mod1")
    vb = _f(ins, "imm12_math") & 15
    return ({0, 1, 2, 3} if mod in (0, 1) else {0, 1, 2, 3, vc} if mod == 2 else {vc} if mod in (3, 4)
            else {vc, vb} if mod == 5 else {vb} if mod == 6 else set())


def _config_reads(ins: Any, mod: int) -> set[int]:
    dest = _f(ins, "config_dest")
    return {0} if dest <= 3 or (dest not in (9, 10) and dest <= 15 and not mod & 1) else set()


#: name -> (instruction, VC, VD, Mod1) -> the LRegs read, from each page's functional model
_READERS: dict[str, Any] = {
    **dict.fromkeys(("SFPMAD", "SFPADD", "SFPMUL"), lambda i, vc, vd, mod: {
        _f(i, "lreg_src_a"), _f(i, "lreg_src_b"), _f(i, "lreg_src_c")} | ({7} if mod & 4 else set())),
    **dict.fromkeys(("SFPADDI", "SFPMULI"), lambda i, vc, vd, mod: {vd, 7} if mod & 8 else {vd}),
    "SFPLUT": lambda i, vc, vd, mod: {0, 1, 2, 3} | ({7} if _f(i, "instr_mod0") & 8 else set()),
    "SFPLUTFP32": lambda i, vc, vd, mod: {0, 1, 2, 3, 4, 5, 6} | ({7} if mod & 8 else set()),
    "SFPSTORE": lambda i, vc, vd, mod: {_f(i, "lreg_ind")},
    # SFPLOAD LO16_ONLY / HI16_ONLY and SFPLOADI LOWER / UPPER keep half of VD
    "SFPLOAD": lambda i, vc, vd, mod: {_f(i, "lreg_ind")} if _f(i, "instr_mod0") in (14, 15) else set(),
    "SFPLOADI": lambda i, vc, vd, mod: {_f(i, "lreg_ind")} if _f(i, "instr_mod0") in (8, 10) else set(),
    **dict.fromkeys(("SFPABS", "SFPNOT", "SFPLZ", "SFPDIVP2", "SFPEXEXP", "SFPEXMAN", "SFPCAST"),
                    lambda i, vc, vd, mod: {vc}),
    "SFPMOV": lambda i, vc, vd, mod: set() if mod & 8 else {vc},
    **dict.fromkeys(("SFPAND", "SFPOR", "SFPXOR", "SFPSWAP"), lambda i, vc, vd, mod: {vc, vd}),
    # VB = VD unless the immediate form (Mod1 bit 0)
    **dict.fromkeys(("SFPIADD", "SFPSETEXP", "SFPSETMAN", "SFPSETSGN"),
                    lambda i, vc, vd, mod: {vc} if mod & 1 else {vc, vd}),
    "SFPSHFT": lambda i, vc, vd, mod: {vd} if mod & 1 else {vc, vd},
    "SFPSETCC": lambda i, vc, vd, mod: set() if mod & 9 else {vc},
    # INT32_TO_(U)INT8 (Mod1 4, 5) shift by LReg[VB] unless UseImm5 (bit 3)
    "SFP_STOCH_RND": lambda i, vc, vd, mod: {vc, _f(i, "lreg_src_b")} if mod & 7 in (4, 5) and not mod & 8
    else {vc},
    "SFPTRANSP": lambda i, vc, vd, mod: set(_ALL8),
    "SFPSHFT2": lambda i, vc, vd, mod: _shft2_reads(i, vc),
    "SFPCONFIG": lambda i, vc, vd, mod: _config_reads(i, mod),
}


def lreg_reads(ins: Any) -> frozenset[int]:
    """The LRegs a Wormhole vector-unit instruction reads (its page's functional model;
    registers other instructions cannot write — the constants 8..15 — left out)."""
    reader = _READERS.get(_vendor(ins))
    if reader is None:
        return frozenset()
    vc = _f(ins, "lreg_c") or _f(ins, "lreg_src_c")
    out = reader(ins, vc, _f(ins, "lreg_dest"), _f(ins, "instr_mod1"))
    return frozenset(r for r in out if r < 8 or r == 16)


def lreg_writes(ins: Any) -> frozenset[int]:
    """The LRegs a Wormhole vector-unit instruction writes (for SFPSHFT2.md's rule)."""
    name = _vendor(ins)
    if name in ("SFPTRANSP",):
        return _ALL8
    if name == "SFPSHFT2" and _f(ins, "instr_mod1") <= 2:
        return frozenset({0, 1, 2, 3})
    if name == "SFPSWAP":
        return frozenset({_f(ins, "lreg_dest"), _f(ins, "lreg_src_c")})
    if name in ("SFPLOAD", "SFPLOADI", "SFPLUT"):
        return frozenset({_f(ins, "lreg_ind")})
    if name in ("SFPSTORE", "SFPNOP", "SFPENCC", "SFPPUSHC", "SFPPOPC", "SFPCOMPC", "SFPSETCC",
                "SFPCONFIG", "SFPLOADMACRO"):
        return frozenset()
    return frozenset({_f(ins, "lreg_dest")})


def _next_backend(thread: Any, ins: Any) -> Any:
    """The decoded instruction ``thread`` issues after ``ins`` (which is running now), or
    None when it cannot be known without expanding a MOP / REPLAY."""
    frontend = getattr(thread, "frontend", None)
    if frontend is None or str(ins.mnemonic).endswith("sfploadmacro)"):  # scheduled by SFPLOADMACRO
        return None
    if frontend.draining:
        pending = frontend.pending
        if not pending or pending[0][0] is not ins:
            return None
        if len(pending) > 1:
            nxt = pending[1][0]
            if getattr(nxt, "run", None) is None:          # frontend.Undecoded
                nxt = thread.core.decode(nxt.word, nxt.address)
            return None if nxt.word >> 24 in FRONT_END_OPCODES else nxt
    address = ins.address + 4                              # after the instruction / its MOP
    try:
        word = thread.space.fetch(address, 4)[0]
        if word == 0 or word >> 24 in FRONT_END_OPCODES:         # the kernel's end, or an expander's word
            return None
        nxt = thread.core.decode(word, address)
    except Exception:  # noqa: BLE001 - nothing there, or undecodable: the run stops when it gets there
        return None
    return None if getattr(nxt, "trap", None) is not None else nxt


def _sfpu(ins: Any) -> bool:
    from tessera_tensix.isa import resource

    return resource(_vendor(ins)) == "SFPU"


def vector_wrote(thread: Any, ins: Any, vd: int, *, indirect: bool = False) -> None:
    """Wormhole MAD-family ``ins`` (SFPMAD, SFPADD, SFPMUL, SFPADDI, SFPMULI, SFPLUT,
    SFPLUTFP32) wrote LReg[vd] (per lane LReg[LReg[7] & 15] when ``indirect``): the
    thread's next instruction must not be a vector-unit instruction that reads it."""
    nxt = _next_backend(thread, ins)
    if nxt is None or not _sfpu(nxt):
        return
    if indirect and vd != 16:
        written = frozenset(int(i) for i in np.unique(thread.core.sfpu.lreg[7] & 15) if i < 8)
    else:
        written = frozenset({vd})
    hit = lreg_reads(nxt) & written
    if hit:
        name = _vendor(ins)
        rules.broken(thread, ins, (
            f"the next instruction, {_vendor(nxt)} at {nxt.address:#x}, reads LReg[{min(hit)}], which "
            f"this {name} writes; on Wormhole software must keep them a cycle apart ({name}.md, "
            "instruction scheduling; an SFPNOP between)"))


def shuffle_issued(thread: Any, ins: Any, mod1: int, vd: int) -> None:
    """Wormhole SFPSHFT2 ``ins`` in mode ``mod1`` (2, 3 or 4): SFPSHFT2.md's rules on the
    vector-unit instruction of the next cycle."""
    nxt = _next_backend(thread, ins)
    if nxt is None or not _sfpu(nxt):
        return
    name = _vendor(nxt)
    why = None
    if name in _NOT_AFTER_SHUFFLE or (name == "SFPSHFT2" and _f(nxt, "instr_mod1") in (0, 1, 5, 6)):
        why = f"{name} may not run on the cycle after SFPSHFT2 Mod1={mod1}"
    elif mod1 == SHFLROR1_AND_COPY4 and lreg_reads(nxt) & {0, 1, 2, 3}:
        why = f"{name} reads LReg[{min(lreg_reads(nxt) & {0, 1, 2, 3})}] on the cycle after SFPSHFT2 Mod1=2"
    elif mod1 == SHFLROR1_AND_COPY4 and lreg_writes(nxt) & {1, 2, 3}:
        why = f"{name} writes LReg[{min(lreg_writes(nxt) & {1, 2, 3})}] on the cycle after SFPSHFT2 Mod1=2"
    elif mod1 in (SHFLROR1, SHFLSHR1) and vd < 8 and vd in lreg_reads(nxt):
        why = f"{name} reads LReg[{vd}] on the cycle after SFPSHFT2 Mod1={mod1} wrote it"
    if why is not None:
        rules.broken(thread, ins, f"the next instruction (at {nxt.address:#x}) breaks a rule: {why} "
                                  "(SFPSHFT2.md, instruction scheduling; an SFPNOP between)")


def backdoor_changed(thread: Any, ins: Any) -> None:
    """SFPCONFIG ``ins`` changed LaneConfig.DISABLE_BACKDOOR_LOAD: the next vector-unit
    instruction might see either value (SFPCONFIG.md), which matters when its VD field
    is 12..15 (a backdoor template load, or a write to a read-only LReg)."""
    nxt = _next_backend(thread, ins)
    if nxt is None or not _sfpu(nxt) or _vendor(nxt) in ("SFPNOP", "SFPCONFIG"):
        return
    name = _vendor(nxt)
    vd = _f(nxt, "lreg_ind") if name in ("SFPLOAD", "SFPLOADI", "SFPSTORE", "SFPLUT", "SFPLOADMACRO") \
        else _f(nxt, "lreg_dest")
    if 12 <= vd <= 15:
        rules.broken(thread, ins, (
            f"changes LaneConfig.DISABLE_BACKDOOR_LOAD, and the next instruction, {name} at "
            f"{nxt.address:#x} with VD={vd}, might see the old or the new value (SFPCONFIG.md, "
            "instruction scheduling; an SFPNOP between)"))
