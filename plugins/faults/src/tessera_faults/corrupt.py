"""Instruction-word corruption: run a corrupted word once, in place of the fetched one.

The corrupted word is decoded as the engine decodes a fetched word — the plugins'
``tessera_decode`` hooks first, then the encoding table — completed by the
architecture's ``refine`` and run on the agent.  A word no row matches is the
architecture's illegal instruction: executing it raises the architecture's own
illegal-instruction trap (with the corrupted word as its value), or, for an
architecture without one, the run stops with a ``DecodeError`` (exit status 66) —
exactly what fetching that word from memory would do.  Memory is not changed, so the
next execution of the address runs the original word again.  The engine charges the
cycles of the original instruction.
"""

from __future__ import annotations

from typing import Any

from tessera.isa import SemanticRef


def run_word(agent: Any, address: int, word: int) -> int:
    """Execute ``word`` as if ``agent`` had fetched it at ``address``; returns the next PC."""
    machine = agent.machine
    filler = machine.decode_filler(agent.arch, agent.space)
    ins = filler.decode(word, address)
    run = ins.run
    if isinstance(run, SemanticRef):
        run = run.resolve()
    try:
        ins.run = run
        refine = agent.arch.refine
        if refine is not None:
            refine(ins, filler.peek)
        run = ins.run
    except AttributeError:  # a decode hook handed back an entry filled before: run it as it is
        run = getattr(ins, "semantic", run)
    target = run(agent, ins)
    return ins.next if target is None else int(target)
