"""MOP, MOP_CFG and REPLAY: the front-end expanders of a Tensix thread (and NOP).

WormholeB0 .../TensixCoprocessor/MOPExpander.md, MOP.md, MOP_CFG.md, REPLAY.md.  In
hardware these never reach the wait gate: the MOP expander replaces a ``MOP`` by the
words of its template (:mod:`tessera_tensix.mop`), the replay expander a playback
``REPLAY`` by words of its buffer (:mod:`tessera_tensix.replay`).  Tessera runs them
as instructions whose semantics queue those words in the thread's front end and issue
them (:meth:`~tessera_tensix.frontend.FrontEnd.expand`, ``drain``): a MOP's words pass
the replay expander (recorded if a load is under way), a REPLAY's do not.  If an issued
word must wait, the thread parks with the rest queued and the MOP/REPLAY runs again
when woken: a non-empty queue is resumed, never expanded a second time.

* ``REPLAY`` words in a MOP's expansion are expanded on the spot: their words go to
  the front of the queue, right after the REPLAY, as the replay expander emits them
  before the MOP expander's next word gets through.
* A load-mode ``REPLAY`` only starts the load; the thread then feeds each following
  instruction to the buffer (``FrontEnd.admit``).  A REPLAY arriving while a load is
  under way breaks a rule (leniently it is recorded, as the functional model does).
* After an expansion or a load, if the thread now needs its instructions one at a time
  (a STALLWAIT latched, a load under way), the slice ends so the next instruction
  goes through the replay expander and the wait gate.
* ``NOP`` (opcode 0x02) does nothing in the backend; it is the "nothing" of the MOP
  templates (only it, not SFPNOP or DMANOP, is skipped in template 1's slots).
"""

from __future__ import annotations

from typing import Any

from tessera.control import Yield
from tessera_tensix import rules
from tessera_tensix.mop import MOP_CFG_OPCODE, MOP_OPCODE, REPLAY_OPCODE, SLOT_NAMES, expander_of, slots
from tessera_tensix.replay import SIZE, buffer_of
from tessera_tensix.semantics import op

#: words an expansion must not issue, by opcode: what they would be at the wait gate
_MOP_FORBIDDEN = {0x00: "not an instruction (opcode 0 is unassigned): was it programmed?",
                  MOP_OPCODE: "a MOP, which would pass the MOP expander to the wait gate",
                  MOP_CFG_OPCODE: "a MOP_CFG, which would pass the MOP expander to the wait gate"}
_REPLAY_FORBIDDEN = {0x00: "not an instruction (opcode 0 is unassigned): was it loaded?",
                     MOP_OPCODE: "a MOP, which would pass the replay expander to the wait gate",
                     MOP_CFG_OPCODE: "a MOP_CFG, which would pass the replay expander to the wait gate",
                     REPLAY_OPCODE: "a REPLAY, which would pass the replay expander to the wait gate"}
#: the first MopCfg entry that holds an instruction (0 and 1 are counts / flags)
CFG_FIRST_INSN = 2


def _settle(thread: Any, ins: Any) -> None:
    """End the slice if the thread's next instructions must go one at a time through the
    replay expander and the wait gate (not inside an expansion: its drain does that)."""
    frontend = thread.frontend
    if not frontend.draining and frontend.slow():
        raise Yield(ins.next)


def _mop_words(thread: Any, ins: Any) -> list[int]:
    """The words ``ins`` (a MOP) expands to, with the rules on them checked."""
    expander = expander_of(thread)
    template, count1 = ins.mop_type, ins.loop_count
    mask_lo = getattr(ins, "zmask_lo16", None)
    if mask_lo is None:  # Blackhole's name for the field
        mask_lo = ins.zmask_lo16_or_loop_count
    if template == 1 and (count1 or mask_lo) and thread.core.chip == "bh":
        rules.broken(thread, ins, "a template-1 MOP with non-zero count/mask fields: Blackhole takes loop "
                                  "counts from them, which no page defines (the vendor's kernels use MOP 1,0,0)")
    cfg = list(expander.cfg)  # sampled when the MOP starts
    order = slots(template, count1, expander.mask(mask_lo), cfg)
    bad = [s for s in range(CFG_FIRST_INSN, len(cfg)) if (cfg[s] >> 24) in _MOP_FORBIDDEN]
    if bad:
        used = set(order)
        bad = [s for s in bad if s in used]
        for s in bad:
            rules.broken(thread, ins, f"MopCfg[{s}] ({SLOT_NAMES[template][s]}) holds {cfg[s]:#010x}, "
                                      f"{_MOP_FORBIDDEN[cfg[s] >> 24]}")
        dropped = set(bad)
        return [cfg[s] for s in order if s not in dropped]
    return [cfg[s] for s in order]



@op("MOP")
def mop(thread: Any, ins: Any) -> None:
    frontend = thread.frontend
    if not frontend.pending:  # else: re-run after a wait, resume the queue
        frontend.expand(thread, _mop_words(thread, ins), f"MOP at {ins.address:#x}", address=ins.address)
    frontend.drain(thread)
    _settle(thread, ins)


@op("MOP_CFG")
def mop_cfg(thread: Any, ins: Any) -> None:
    expander_of(thread).mask_hi = ins.zmask_hi16
    thread.frontend.shift -= 1  # consumed by the MOP expander (hazards.position)


def _replay_words(thread: Any, ins: Any, words: list[int]) -> list[int]:
    """``words`` (a playback), with the rules on them checked."""
    if not any((w >> 24) in _REPLAY_FORBIDDEN for w in words):
        return words
    out = []
    for i, w in enumerate(words):
        why = _REPLAY_FORBIDDEN.get(w >> 24)
        if why is None:
            out.append(w)
        else:
            rules.broken(thread, ins, f"replay buffer entry {(ins.start_idx + i) % SIZE} holds {w:#010x}, {why}")
    return out


@op("REPLAY")
def replay(thread: Any, ins: Any) -> None:
    frontend = thread.frontend
    if frontend.pending and not frontend.draining:  # re-run after a wait: resume the queue
        frontend.drain(thread)
        _settle(thread, ins)
        return
    buffer = buffer_of(thread)
    if buffer.loading:
        if rules.broken(thread, ins, f"a REPLAY while the replay buffer is loading ({buffer.left} more "
                                     "to record) is stored as an ordinary instruction, whose replay is undefined"):
            buffer.take(ins.word)
        return
    if ins.load_mode:
        buffer.load(ins.start_idx, ins.len, ins.execute_while_loading)
        if not frontend.draining:  # consumed by the replay expander (hazards.position)
            frontend.shift -= 1
        _settle(thread, ins)
        return
    words = _replay_words(thread, ins, buffer.playback(ins.start_idx, ins.len))
    if frontend.draining:
        # a REPLAY from a MOP's expansion: it is pending[0] (issued, not yet removed); its
        # words come next, ahead of the rest of the MOP's
        pending = frontend.pending
        current = pending.popleft()
        origin = f"REPLAY from {current[1]}"
        by = f"REPLAY from {ins.issued_by}"
        decode, pc = thread.core.decode, ins.address  # the MOP's address, as this REPLAY's is
        pending.extendleft((decode(w, pc, by), origin, False) for w in reversed(words))
        pending.appendleft(current)
        return
    frontend.expand(thread, words, f"REPLAY at {ins.address:#x}", recordable=False, issued_by="REPLAY",
                    address=ins.address)
    frontend.drain(thread)
    _settle(thread, ins)


@op("NOP")
def nop(thread: Any, ins: Any) -> None:
    """Plain NOP: nothing happens in the backend."""
