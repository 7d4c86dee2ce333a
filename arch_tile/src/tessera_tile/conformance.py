"""Conformance cases of the tile architecture (``tessera_conformance_cases``, docs/conformance.md).

Small programs with what they must leave behind — a load/store round trip, the
placeholder mbarrier instructions, timed mode, a barrier deadlock, an endless loop of
tile operations (for the budget check) — and the documented way bad sequences end a run:
one illegal-instruction line naming the hart, the PC and the word.  Machines get 1 MiB
of RAM so the suite's snapshots stay small.
"""

from __future__ import annotations

from typing import Any

SMALL = {"ram": 0x100000, "echo": False}
ONE = {**SMALL, "tile.threads_per_pe": 1}

ROUND_TRIP = """
        la    a0, src
        la    a1, dst
        li    t0, 0x0000ffff
        tcsrw zero, tmask, t0
        tld.g.us t2, (a0), ts=2
        tst.g.us t2, (a1), ts=2, tmask
        twait.mem ld=0, st=0
        tmv.xt a2, t3, 0, ew=w        # first word of the second register
        li    a7, 93
        mv    a0, zero
        ecall
        .data
        .align 6
src:    .word 0x11111111
        .space 1020
        .word 0x22222222
        .space 1020
dst:    .space 2048
"""

MBARRIER = """
        li    s1, 0x100
        li    s2, 1
        tmbar.init s1, s2
        li    s3, 64
        tmbar.arrive_tx s4, s1, s3      # s4 = phase 0
        tmv.tx t8, s3, 0, ew=w          # linear TMA of 64 bytes, completing on the mbarrier
        tmv.vt v1, t8, 0
        la    a0, src
        li    a1, 0x200
        tma.linear a1, a0, v1, dst=shared, mbar=s1
        tmbar.try_wait s5, s1, zero     # 1: phase 0 completed
        tld.s.us t1, (a1)
        tmv.xt s6, t1, 0, ew=d
        li    a7, 93
        li    a0, 0
        ecall
        .data
        .align 6
src:    .quad 0x0123456789abcdef
        .space 56
"""

TIMED = """
        la    a0, src
        tld.g.us t1, (a0)
        tcsrr s1, tgld_cnt              # 1: the LSU has not run yet
        twait.mem ld=0
        tmv.xt s2, t1, 0, ew=d
        li    a7, 93
        li    a0, 0
        ecall
        .data
        .align 6
src:    .quad 77
        .space 1016
"""

DEADLOCK = """
        tcsrr s0, tid
        bnez  s0, quit
        tsync 1, 0b11                   # thread 1 never arrives
quit:   li    a7, 93
        ecall
"""

ENDLESS = """
        la    a0, buf
loop:   tld.g.us t1, (a0)
        tst.g.us t1, (a0)
        j     loop
        .data
        .align 6
buf:    .space 1024
"""


def _round_trip(machine: Any, outcome: Any) -> str | None:
    dst = machine.symbols["dst"]
    got = machine.space.read_bytes(dst, 2048)
    want = (b"\x11" * 4 + bytes(508) + bytes(512) + b"\x22" * 4 + bytes(508) + bytes(512))
    return None if got == want else "dst differs from src under the tmask of its first 16 granules"


CASES: list[dict[str, Any]] = [
    {"name": "tmask-round-trip", "description": "a two-register load, a masked store, a move out",
     "source": ROUND_TRIP, "config": ONE, "max_steps": 1000,
     "expect": {"exit_code": 0, "registers": {"hart0": {"x": {"a2": 0x22222222}}}}, "check": _round_trip},
    {"name": "mbarrier-placeholders", "description": "Appendix B mbarrier ops with a TMA completing on it",
     "source": MBARRIER, "config": {**ONE, "tile.mbar_instructions": True}, "max_steps": 1000,
     "expect": {"exit_code": 0, "registers": {"hart0": {"x": {"s4": 0, "s5": 1, "s6": 0x0123456789ABCDEF}}}}},
    {"name": "timed-mode", "description": "an outstanding load in timed mode and the t_wait for it",
     "source": TIMED, "config": {**ONE, "tile.mode": "timed"}, "max_steps": 1000,
     "expect": {"exit_code": 0, "registers": {"hart0": {"x": {"s1": 1, "s2": 77}}}}},
    {"name": "tsync-deadlock", "description": "a barrier one thread never reaches",
     "source": DEADLOCK, "config": SMALL, "max_steps": 1000, "expect": {"reason": "deadlock"}},
    {"name": "endless-tile-loop", "description": "loads and stores for ever", "source": ENDLESS,
     "config": ONE, "max_steps": 1000, "expect": {"reason": "budget"}},
    {"name": "w0-nothing-staged", "description": "a W0 alone is an illegal instruction",
     "words": [0x0000607B], "config": ONE, "max_steps": 10,
     "expect": {"reason": "unhandled trap", "error": {"agent": "hart0", "pc": 0x10000, "cause": 2}}},
    {"name": "second-w1", "description": "a W1 while another is staged",
     "words": [0x8205807B, 0x8205807B], "config": ONE, "max_steps": 10,
     "expect": {"reason": "unhandled trap", "error": {"agent": "hart0", "pc": 0x10004, "cause": 2}}},
]


def cases(arch: Any) -> list[dict[str, Any]] | None:
    return CASES if arch.name == "tile" else None
