"""Conformance cases of Tensix (``tessera_conformance_cases``, see docs/conformance.md).

Direct-mode kernels with what they must leave behind: a Dest slice written by the SFPU,
and the documented way bad words stop a run (one line, exit status 68).  Tensix threads
never branch, so there is no endless case: the suite's budget check cuts the longest
program in half instead.
"""

from __future__ import annotations

from typing import Any

HALF = """
        sfploadi L0,16128,0        # L0 = 0.5 (BF16 0x3F00)
        sfpstore 0,L0,3,7          # Dest[0:4, even columns] = 0.5 (FP32)
        end
"""


def _dest_half(machine: Any, outcome: Any) -> str | None:
    from tessera_tensix.examples import dest_fp32

    dest = machine.ext["tensix"].dest
    for row in range(4):
        for col in range(16):
            got = dest_fp32(dest, row, col)
            want = 0.5 if col % 2 == 0 else 0.0
            if got != want:
                return f"Dest[{row}][{col}] = {got!r}, expected {want!r}"
    return None


CASES: list[dict[str, Any]] = [
    {
        "name": "dest-half",
        "description": "SFPLOADI + SFPSTORE write 0.5 into the even columns of Dest rows 0..3",
        "source": HALF,
        "max_steps": 100,
        "expect": {"exit_code": 0, "pc": {"t0": 8}},
        "check": _dest_half,
    },
    {
        "name": "undefined-encoding",
        "description": "an unassigned opcode stops the run naming the thread and the address",
        "words": [0x06000000],
        "max_steps": 10,
        "expect": {"reason": "unhandled trap", "error": {"agent": "t0", "pc": 0}},
    },
    {
        "name": "reserved-bits",
        "description": "SFPNOP with a reserved bit set stops the run (strict mode)",
        "words": [0x8F000100],
        "max_steps": 10,
        "expect": {"reason": "unhandled trap", "error": {"agent": "t0", "pc": 0, "cause": 256}},
    },
]


def cases(arch: Any) -> list[dict[str, Any]] | None:
    return CASES if arch.name == "tensix" else None
