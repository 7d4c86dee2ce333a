"""Helpers of the sync-unit and wait-gate tests (test_syncunit.py, test_waitgate.py).

* An independent encoder of the sync-unit instructions, arguments in the order of
  tt-llk's ``TT_OP_<NAME>`` macros, bit positions from the vendor's encoding diagrams
  (STALLWAIT's condition mask is 15 bits on Wormhole B0, 13 on Blackhole).
* ``threads(chip, programs)`` — a direct-mode machine with one thread per program,
  thread ``t<i>`` starting at ``i * SPACING`` (the kernel file's per-thread sections
  are not there yet, so the tests place the programs and PCs themselves).
"""

from __future__ import annotations

from typing import Any

from tensix_table_support import ARCHS, words

from tessera.machine import Machine

SPACING = 0x1000


def _op(opcode: int, params: int) -> int:
    assert 0 <= params < (1 << 24)
    return opcode << 24 | params


def stallwait(block: int, conditions: int) -> int:
    return _op(0xA2, block << 15 | conditions)


def semwait(block: int, semaphores: int, conditions: int) -> int:
    return _op(0xA6, block << 15 | semaphores << 2 | conditions)


def seminit(top: int, value: int, semaphores: int) -> int:
    return _op(0xA3, top << 20 | value << 16 | semaphores << 2)


def sempost(semaphores: int) -> int:
    return _op(0xA4, semaphores << 2)


def semget(semaphores: int) -> int:
    return _op(0xA5, semaphores << 2)


def atgetm(index: int) -> int:
    return _op(0xA0, index)


def atrelm(index: int) -> int:
    return _op(0xA1, index)


def zeroacc(chip: str) -> int:
    """A harmless matrix-unit instruction (B6): ZEROACC of Dest row block 0."""
    return words("ttzeroacc 1,0,0,0,0" if chip == "bh" else "ttzeroacc 1,0,0,0", ARCHS[chip])[0]


def setdmareg(value: int, half: int) -> int:
    """A scalar-unit instruction (B0, B5): GPR half ``half`` = ``value``."""
    return _op(0x45, value << 8 | half)


SFPNOP = _op(0x8F, 0)                                      # a vector-unit instruction (B8)

#: the STALLWAIT condition bit of "SrcA[MatrixUnit.SrcABank] is not the matrix unit's"
SRCA_MATRIX = {"wh": 1 << 10, "bh": 1 << 7}
#: ... and of "SrcA[Unpackers[0].SrcBank] is not the unpackers'"
SRCA_UNPACK = {"wh": 1 << 8, "bh": 1 << 5}


def program(chip: str, items: list[int | str]) -> list[int]:
    """Words of a program written as words and/or assembly lines."""
    out: list[int] = []
    for item in items:
        out.extend(words(item, ARCHS[chip]) if isinstance(item, str) else [item])
    return out


def threads(chip: str, programs: list[list[int | str]], **config: Any) -> Machine:
    """A machine with one Tensix thread per program (each ends with the END word)."""
    m = Machine(ARCHS[chip], config={"threads": len(programs), **config})
    for tid, items in enumerate(programs):
        base = tid * SPACING
        data = program(chip, items) + [0]
        m.space.write_bytes(base, b"".join(w.to_bytes(4, "little") for w in data))
        agent = m.agent(f"t{tid}")
        agent.pc = agent.next_pc = base
    return m


def sync_state(m: Machine) -> dict[str, Any]:
    return m.agent("t0").core.units["sync"].state()
