"""Words with reserved bits set: break the rule "reserved bits must be zero", then run.

A bit of [23:0] that no field of an instruction covers is reserved (ttsim flags a word
setting one as NonContractualBehavior).  Such a word still decodes as its instruction,
through a second row that matches the opcode alone (:mod:`tessera_tensix.isa`); that
row names ``reserved_name(NAME, mask)``, and this module registers, for every
instruction of either chip with reserved bits, a copy of :func:`reserved_bits` under
that name with the instruction's own function (``REGISTRY.ref(NAME)``) and its mask
as constants.  Executing it breaks the rule — the run stops, or with ``lenient`` the
instruction runs ignoring those bits, as the hardware decoder does (its fields never
cover reserved bits, so the semantic function cannot see them).
"""

from __future__ import annotations

from typing import Any

from tessera.isa import specialised
from tessera.semantics import no_inline
from tessera_tensix import rules
from tessera_tensix.semantics import REGISTRY, reserved_name

#: Replaced in each registered copy: the instruction's function (a SemanticRef), the
#: reserved bits of its row, and the rule's text naming them.
RUN: Any = None
RESERVED = 0
RULE = "reserved bits must be zero"


@no_inline
def reserved_bits(thread: Any, ins: Any) -> None:
    rules.broken(thread, ins, f"reserved bits {ins.word & RESERVED:#08x} are set ({RULE})")
    RUN(thread, ins)


def bit_ranges(mask: int) -> str:
    """``0xfff000`` -> ``"23:12"``; several runs are comma-separated, highest first."""
    runs, bit = [], 0
    while bit < 32:
        if mask >> bit & 1:
            lo = bit
            while bit < 32 and mask >> bit & 1:
                bit += 1
            runs.append(f"{bit - 1}:{lo}" if bit - 1 != lo else f"{lo}")
        else:
            bit += 1
    return ",".join(reversed(runs))


def _register() -> None:
    from tessera_tensix.isa import CHIPS, tables

    for chip in CHIPS:
        for info in tables(chip).rows.values():
            key = reserved_name(info.name, info.reserved)
            if info.reserved and key not in REGISTRY:
                REGISTRY.register(key, specialised(
                    reserved_bits, f"reserved_bits[{info.name}]", RUN=REGISTRY.ref(info.name),
                    RESERVED=info.reserved,
                    RULE=f"bits {bit_ranges(info.reserved)} must be zero; ttsim: NonContractualBehavior"))


_register()
