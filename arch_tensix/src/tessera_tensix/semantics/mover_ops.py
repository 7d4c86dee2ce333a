"""XMOV: a Tensix thread instructs the mover (WormholeB0 …/TensixCoprocessor/XMOV.md).

The transfer is described by the backend configuration of the issuing thread's bank
(``CFG_STATE_ID_StateID``, :func:`tessera_tensix.cfgregs.config_for`):
``THCON_SEC0_REG6_Destination_address`` and ``…_Source_address`` (16-byte units),
``THCON_SEC0_REG6_Buffer_size`` (its low 16 bits, 16-byte units) and
``THCON_SEC0_REG6_Transfer_direction``; the mover's work is
:meth:`tessera_tensix.mover.Mover.transfer`.  In direct mode these fields are set with
``--set cfg.THCON_SEC0_REG6_…=V`` or by WRCFG / RMWCIB / REG2FLOP in the kernel.

XMOV never waits: the mover finishes each transfer when it is issued, so it is always
able to start work (see :mod:`tessera_tensix.mover`).  Its operands (``TT_XMOV(0, 0)``)
are not read by the page's functional model and are ignored.  Blackhole has no XMOV
page; it runs the same model on its larger L1.
"""

from __future__ import annotations

from typing import Any

from tessera_tensix import cfgregs, rules
from tessera_tensix.mover import l1_note, mover
from tessera_tensix.semantics import op

MASK32 = 0xFFFF_FFFF
_REG6 = "THCON_SEC0_REG6_"


@op("XMOV")
def xmov(thread: Any, ins: Any) -> None:
    cfg = cfgregs.config_for(thread)
    dst = (cfg.get(_REG6 + "Destination_address") << 4) & MASK32
    src = (cfg.get(_REG6 + "Source_address") << 4) & MASK32
    count = (cfg.get(_REG6 + "Buffer_size") & 0xFFFF) << 4
    direction = cfg.get(_REG6 + "Transfer_direction") & 3
    unit = mover(thread.core)
    done = unit.transfers
    unit.transfer(thread.core, dst, src, count, direction, who=ins.mnemonic,
                  broken=lambda text: rules.broken(thread, ins, text), word=ins.word)
    if unit.transfers != done:          # it ran: what it read and wrote, for a timing model
        thread.l1_note = l1_note(dst, src, count, direction)
