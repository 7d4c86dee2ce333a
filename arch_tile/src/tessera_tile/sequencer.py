"""The ACE sequencer of one thread (tile.md 2.3): staging, dispatch, illegal sequences.

Each thread keeps ``{asp, w1}``.  A W2 stages the register value it moves (captured when
the W2 executes); a W1 of a multi-word class stages itself with the GPRs as they are
then; a W0 — or a W1 of a one-word class (TCSR, control) — combines what is staged,
finds the one operation of the tables whose layouts and field patterns match, and
dispatches it.  Bad sequences are the host's illegal-instruction trap naming the rule:
a W0 with nothing staged, a second W2 or W1 before dispatch, a combination no operation
has, reserved bits (``strict_reserved``), a disabled opcode or placeholder.

Staging survives non-ACE instructions and traps (an interrupt may land between two
words).  ``strict_sequencing`` notices a word that does not directly follow the one
staged before it — something ran in between — and reports it (or, set to ``trap``,
raises illegal instruction) without changing results otherwise.  A dispatch that traps
drops the staged words: the trap's ``mepc`` is the dispatching word, and the operation
is gone (re-run its first word to retry it).
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap
from tessera_tile import faults
from tessera_tile.executors import EXECUTORS, issue
from tessera_tile.op import TileOp
from tessera_tile.state import Asp, StagedW1, TileThread


def _opcode_check(system: Any, word: int) -> None:
    if word & 0x7F not in system.enabled_opcodes:
        raise faults.illegal(word, f"major opcode {word & 0x7F:#04x} is not enabled for ACE words "
                             f"(tile.opcodes={system.cfg.opcodes})")


def _interleaved(system: Any, hart: Any, pc: int, word: int, previous_pc: int, what: str) -> None:
    """A word that does not directly follow the word staged before it."""
    if pc == previous_pc + 4:
        return
    mode = system.cfg.strict_sequencing
    if mode == "false":
        return
    rule = f"{what} staged at {previous_pc:#x} is not directly before this word (interleaved sequence)"
    if mode == "trap":
        raise faults.illegal(word, rule)
    system.report(hart, pc, word, rule)


def on_w2(hart: Any, word: int, pc: int) -> None:
    """A W2 (ASP word): capture the register it moves into the tile core, or stage the move."""
    thread: TileThread = hart.tile
    system = thread.system
    _opcode_check(system, word)
    if thread.asp is not None:
        raise faults.illegal(word, f"a second W2 before dispatch (the W2 at {thread.asp.pc:#x} is "
                             "still staged)")
    tables = system.tables
    layout = next((lay for lay in tables.layouts_for("W2") if lay.applies(word)), None)
    if layout is None:
        raise faults.illegal(word, "reserved W2 form (no W2 layout matches its mode bits)")
    _reserved(system, word, layout, "W2")
    fields = layout.decode(word)
    if fields.get("addrctl") and system.cfg.strict_reserved:
        raise faults.illegal(word, "addrCtl must be 0 (its meaning is unknown)")
    value = capture(system, thread, hart, layout, fields, word)
    unmasked_bit = tables.table("func6_vector_unmasked")["bit"]
    mask = None
    if "func6" in fields and not fields["func6"] >> unmasked_bit & 1:
        mask = thread.vreg(0)      # v0 as this word sees it (tile.md E6)
    thread.asp = Asp(word, pc, layout.name, value, mask)


def capture(system: Any, thread: TileThread, hart: Any, layout: Any, fields: dict[str, int],
            word: int) -> Any:
    """The register value a W2 moves into the tile core, read when the W2 executes."""
    reg = fields["reg"]
    if layout.source == "vector":
        return thread.vreg(reg)
    if layout.source == "alu":
        if fields["vec_en"]:
            return thread.vreg(reg)
        return hart.x[reg] if system.cfg.alu_scalar_source == "gpr" else thread.fpr[reg]
    if layout.source == "move":
        kind = system.tables.name_of("mvop", fields["mvop"])
        if kind is None:
            raise faults.illegal(word, f"reserved mvop {fields['mvop']:03b}")
        if kind.endswith(".into"):
            if kind.startswith("vec"):
                return thread.vreg(reg)
            return hart.x[reg] if kind.startswith("gpr") else thread.fpr[reg]
        return None
    raise faults.illegal(word, f"W2 layout {layout.name} has unknown source {layout.source!r}")


def _reserved(system: Any, word: int, layout: Any, role: str) -> None:
    if system.cfg.strict_reserved and word & layout.reserved:
        raise faults.illegal(word, f"reserved bits {word & layout.reserved:#010x} set in the {role} "
                             f"({layout.name})")


def on_w1(hart: Any, word: int, pc: int) -> None:
    """A W1: stage it, or — for a one-word class — dispatch it at once."""
    thread: TileThread = hart.tile
    system = thread.system
    _opcode_check(system, word)
    tables = system.tables
    cls = tables.class_of_tuop[tables.tuop_of(word)]
    if thread.w1 is not None:
        raise faults.illegal(word, f"a second W1 before dispatch (the W1 at {thread.w1.pc:#x} is "
                             "still staged)")
    if cls in tables.lone_classes:
        if thread.asp is not None:
            raise faults.illegal(word, f"a {cls} word takes no ASP operand, but the W2 at "
                                 f"{thread.asp.pc:#x} is staged")
        dispatch(hart, thread, {"W1": word}, cls, pc, word, {"W1": hart.x}, None)
        return
    if thread.asp is not None:
        _interleaved(system, hart, pc, word, thread.asp.pc, "the W2")
    thread.w1 = StagedW1(word, pc, cls, list(hart.x))


def on_w0(hart: Any, word: int, pc: int) -> None:
    """A W0: combine it with the staged words and dispatch the operation."""
    thread: TileThread = hart.tile
    system = thread.system
    _opcode_check(system, word)
    asp, w1 = thread.asp, thread.w1
    if asp is None and w1 is None:
        raise faults.illegal(word, "W0 with nothing staged")
    words = {"W0": word}
    x: dict[str, list[int]] = {"W0": hart.x}
    if w1 is not None:
        _interleaved(system, hart, pc, word, w1.pc, "the W1")
        words["W1"] = w1.word
        x["W1"] = w1.x
    else:
        assert asp is not None
        _interleaved(system, hart, pc, word, asp.pc, "the W2")
    if asp is not None:
        words["W2"] = asp.word
    try:
        dispatch(hart, thread, words, w1.cls if w1 is not None else None, pc, word, x, asp)
    except Trap:
        thread.asp = thread.w1 = None     # the operation is dropped (see the module docstring)
        raise


def identify(system: Any, words: dict[str, int], cls: str | None, word: int) -> tuple[Any, dict[str, int]]:
    """The operation of a complete sequence and its fields (``"W1.td"``: value), or the trap.

    The answer depends only on the words, so :func:`dispatch` keeps it per machine: a loop
    of tile operations decodes each sequence once.
    """
    tables = system.tables
    order = [w for w in ("W2", "W1", "W0") if w in words]
    forms = tables.ops_for(order, cls)
    seq = "->".join(order) + (f" ({cls})" if cls else "")
    if not forms:
        raise faults.illegal(word, f"no operation is the sequence {seq}")
    form = next((f for f in forms if f.matches(words)), None)
    if form is None:
        raise faults.illegal(word, f"no operation matches the sequence {seq}: "
                             + ", ".join(f"{w} {v:#010x}" for w, v in words.items()))
    if form.placeholder and not system.cfg.mbar_instructions:
        raise faults.illegal(word, f"{form.name} is an Appendix B placeholder, disabled "
                             "(tile.mbar_instructions=false)")
    fields: dict[str, int] = {}
    for w, layout in form.layouts.items():
        _reserved(system, words[w], layout, w)
        for name, value in layout.decode(words[w]).items():
            fields[f"{w}.{name}"] = value
    return form, fields


def dispatch(hart: Any, thread: TileThread, words: dict[str, int], cls: str | None, pc: int,
             word: int, x: dict[str, list[int]], asp: Asp | None) -> None:
    """Identify the operation of a complete sequence and execute or issue it."""
    system = thread.system
    key = (tuple(words.items()), cls)
    known = system.decoded.get(key)
    if known is None:
        known = identify(system, words, cls, word)
        if len(system.decoded) < 4096:
            system.decoded[key] = known
    form, decoded = known
    fields = dict(decoded)
    snapshot = {w: (list(v) if v is hart.x else v) for w, v in x.items()}
    op = TileOp(form.name, form.kind, hart.name, pc, word, dict(words), fields, snapshot,
                None if asp is None else asp.value, None if asp is None else asp.mask, dict(form.params))
    executor = EXECUTORS[form.kind]
    executor.prepare(system, thread, op, hart)       # traps here are precise: nothing changed yet
    if executor.unit:
        issue(system, thread, op, hart)               # may wait (timed mode, full queue) before any change
    else:
        executor.run(system, thread, op, hart)        # front-end operation: synchronous
    thread.asp = thread.w1 = None
