"""The semantic functions of the ACE words: what the RISC-V hart runs for each one.

A tile word means nothing on its own — the sequence it belongs to decides the
operation — so each function hands its word to the thread's sequencer
(:mod:`tessera_tile.sequencer`), which stages it or dispatches the operation.  They
register by name in :data:`REGISTRY`; the rows (:mod:`tessera_tile.encodings`) name
them with ``REGISTRY.ref(...)``, the way every architecture binds rows to semantics
(``tessera.isa.SemanticsRegistry``), so rows pickle by name into snapshots and
``tessera semantics --arch tile`` lists them.

All three are ``no_inline``: the sequencer does its work in plain calls anyway, and
the fast engine would gain nothing by copying a one-line call into every block.
"""

from __future__ import annotations

from typing import Any

from tessera.isa import SemanticsRegistry
from tessera.semantics import no_inline
from tessera_tile import sequencer

#: the ACE words' semantic functions by name (a module, not a package: nothing to import)
REGISTRY = SemanticsRegistry(__name__)


@REGISTRY.op("ace_w2")
@no_inline
def ace_w2(hart: Any, ins: Any) -> None:
    """A W2 (ASP) word: stage the register it moves."""
    sequencer.on_w2(hart, ins.word, ins.address)


@REGISTRY.op("ace_w1")
@no_inline
def ace_w1(hart: Any, ins: Any) -> None:
    """A W1: stage it, or dispatch a one-word operation."""
    sequencer.on_w1(hart, ins.word, ins.address)


@REGISTRY.op("ace_w0")
@no_inline
def ace_w0(hart: Any, ins: Any) -> None:
    """A W0: dispatch the staged operation."""
    sequencer.on_w0(hart, ins.word, ins.address)
