"""A baby RISC-V core: the RISC-V plugin's hart plus the custom CSRs of BabyRISCV/CSRs.md.

The vendor's firmware writes ``cfg0`` (``0x7c0``: chicken bits, e.g. to turn off
branch prediction and instruction gathering) before anything else, so these CSRs must
exist.  Modelled:

* ``cfg0``, ``pmacfg0``, ``pmacfg1``, ``cfg1``, ``hwa_mask``, ``hwa_cfg``, ``vgsrc``
  (``0x7c0``..``0x7c6``) and ``tt_cfg_sstatus0..7`` (``0xbc2``..``0xbc9``): they hold what
  was written; none of their bits changes what Tessera executes (branch prediction,
  gathering and the L0 cache are not modelled);
* ``tt_cfg_qstatus`` / ``tt_cfg_bstatus`` (``0xbc0``/``0xbc1``): a TRISC's own bits are
  all set (``0x7FF``) while its Tensix thread has anything queued or in flight, clear
  when it is idle (a coarse model: the per-type bits are not told apart); the
  or-reduced bits likewise over the three threads; writes are ignored;
* ``intp_restore_pc`` (``0xbca``): reads ``mepc``.

A core that only polls memory is parked rather than run (:mod:`tessera_tensix.tile.polls`).
A breakpoint the core cannot take (tt-llk's LLK_ASSERT failing) is reported with where it
failed (the tile architecture's ``take_trap``, :mod:`tessera_tensix.tile.asserts`).
"""

from __future__ import annotations

from typing import Any

from tessera.engine import RUNNABLE
from tessera_riscv import RiscvHart
from tessera_tensix.tile import polls

SCRATCH = frozenset(range(0x7C0, 0x7C7)) | frozenset(range(0xBC2, 0xBCA))
QSTATUS, BSTATUS, INTP_RESTORE_PC = 0xBC0, 0xBC1, 0xBCA
ALL_TYPES = 0x7FF


class BabyHart(RiscvHart):
    """RISCV B / T0 / T1 / T2 of a Tensix tile."""

    def __init__(self, *args: Any, tile: Any = None, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.tile = tile
        self.custom_csrs: dict[int, int] = {}
        #: instructions run since the last probe for polling, the count that starts the next,
        #: and the probe under way (polls.py: its reads, whether it read the clock, its steps)
        self.unprobed = 0
        self.probe_after = polls.PROBE_AFTER
        self.probe_reads: dict[tuple[int, int], int] | None = None
        self.probe_clock = False
        self.probe_used = 0

    def run_slice(self, limit: int, cycle_limit: float = float("inf")) -> int:
        tile = self.tile
        if tile is None or not tile.park_polls:
            used = super().run_slice(limit, cycle_limit)
        else:
            used = 0
            while used < limit and self.status == RUNNABLE and not self.yielded and self.cycles < cycle_limit:
                if self.probe_reads is not None:
                    used += polls.probe(self, limit - used, cycle_limit)
                    continue
                due = self.probe_after - self.unprobed
                if due <= 0:
                    polls.start(self)
                    continue
                n = super().run_slice(min(limit - used, due), cycle_limit)
                self.unprobed += n
                used += n
                if n == 0:
                    break
        if tile is not None and tile.polls.parked and polls.turn_ends(self, used, cycle_limit):
            tile.polls.recheck()
        return used

    def csr_exists(self, number: int) -> bool:
        return number in SCRATCH or number in (QSTATUS, BSTATUS, INTP_RESTORE_PC) or super().csr_exists(number)

    def _csr_get(self, number: int) -> int:
        if number in SCRATCH:
            return self.custom_csrs.get(number, 0)
        if number in (QSTATUS, BSTATUS):
            return self._status(number)
        if number == INTP_RESTORE_PC:
            return self.mepc
        return super()._csr_get(number)

    def _csr_set(self, number: int, value: int, *, retiring: int | None) -> None:
        if number in SCRATCH:
            self.custom_csrs[number] = value & 0xFFFF_FFFF
        elif number not in (QSTATUS, BSTATUS, INTP_RESTORE_PC):
            super()._csr_set(number, value, retiring=retiring)

    def _status(self, number: int) -> int:
        threads = self.tile.core.threads if self.tile is not None else []
        busy = [not t.idle for t in threads]
        own = self.name.startswith("trisc") and busy[int(self.name[-1])]
        shift = 13 if number == QSTATUS else 11
        return (ALL_TYPES if own else 0) | ((ALL_TYPES << shift) if any(busy) else 0)
