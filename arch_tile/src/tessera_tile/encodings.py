"""The encoding rows of the ACE words, generated from the tables.

Decoding a tile word needs its role, which the tables give by ``tuop``: one row per
role and class and enabled major opcode — ``ace.w2`` (W2), ``ace.w0`` (W0), and one
per W1 class (``ace.tgmem``, ``ace.tsmem``, ``ace.tcsr``, ``ace.mma``, ``ace.talu``,
``ace.ctrl``).  Everything else about the word — which layout applies, its fields, the
operation a sequence forms, reserved bits — depends on the other words of the sequence
and is the sequencer's business, so a row's only operand is the 22-bit ACE payload
(``ace.tgmem 0x40a00``: what the plain disassembler shows, and what assembles back to
the same word).  The tile disassembler shows the fields and the operation instead.

Rows of other opcodes than custom-3 are named by the opcode (``ace0.w2`` for custom-0).
Each row names its semantic function in :data:`tessera_tile.ace.REGISTRY` (``ace_w2``,
``ace_w1``, ``ace_w0``: all three hand the word to the sequencer).
"""

from __future__ import annotations

from tessera.isa import Encoding, Field
from tessera_tile.ace import REGISTRY
from tessera_tile.tables import Tables

TIMING_CLASS = "ace"


def prefix(opcode_name: str) -> str:
    number = opcode_name.rsplit("-", 1)[-1]
    return "ace" if number == "3" else f"ace{number}"


def payload_field(tables: Tables) -> Field:
    bits = tables.payload_field
    return Field("ace", bits.bits, kind="uimm")


def rows(tables: Tables, opcodes: list[str]) -> tuple[Encoding, ...]:
    """The rows for ``opcodes`` (names of ``tables.opcodes``)."""
    base_mask = tables.opcode_field.field_mask | tables.tuop_field.field_mask
    out = []
    for name in opcodes:
        opcode = tables.opcodes[name]
        pre = prefix(name)
        for cls, tuop in sorted(tables.tuop.items(), key=lambda kv: kv[1]):
            match = tables.tuop_field.insert(tables.opcode_field.insert(0, opcode), tuop)
            if cls == "w2":
                mnemonic, op, doc = f"{pre}.w2", "ace_w2", "ACE W2 (ASP) word"
            elif cls == "w0":
                mnemonic, op, doc = f"{pre}.w0", "ace_w0", "ACE W0 word"
            else:
                mnemonic, op, doc = f"{pre}.{cls}", "ace_w1", f"ACE W1 word, class {cls}"
            # a W0 dispatches the staged operation: t_wait and barriers may block the hart
            flags = frozenset({"ace", "wait"}) if cls == "w0" else frozenset({"ace"})
            out.append(Encoding(mnemonic, match, base_mask, "{ace}", REGISTRY.ref(op), TIMING_CLASS,
                                flags, doc))
    return tuple(out)
