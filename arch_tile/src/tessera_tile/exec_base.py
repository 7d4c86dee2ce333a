"""What every executor shares: the executor interface and the common operand checks.

An executor handles one ``kind`` of operation (tables: ``[[ops]] kind``):

* ``prepare(system, thread, op, hart)`` runs at dispatch.  It validates everything
  (register groups, codes, address ranges, alignment) and raises the trap a bad
  operand takes *before anything changes* — tile.md E1: faults are precise, at the
  dispatching word's PC — and records what the operation will do in ``op.plan``, its
  byte ranges in ``op.reads``/``op.writes`` (for the race checker) and its completion
  counters in ``op.keys``;
* ``perform(system, thread, op) -> cycles`` does the work: at once in eager and checker
  mode, when its engine gets to it in timed mode (the cycles are the timed-mode cost);
* front-end operations (``unit == ""``: TCSR, Tile Move, t_sync, t_wait, mbarrier,
  semaphore) have ``run(system, thread, op, hart)`` instead, executed by the hart itself.
"""

from __future__ import annotations

from typing import Any

from tessera_tile import faults

M64 = (1 << 64) - 1


class Executor:
    unit = ""

    def prepare(self, system: Any, thread: Any, op: Any, hart: Any) -> None:
        pass

    def perform(self, system: Any, thread: Any, op: Any) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def run(self, system: Any, thread: Any, op: Any, hart: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


def mask_bit(mask: bytes | None, i: int) -> bool:
    """Bit ``i`` of a captured ``v0`` (RVV mask layout, LSB first); no mask means all set."""
    if mask is None:
        return True
    return i >> 3 < len(mask) and bool(mask[i >> 3] >> (i & 7) & 1)


def sext(value: int, bits: int) -> int:
    sign = 1 << (bits - 1)
    return (value & (sign - 1)) - (value & sign)


def signed64(value: int) -> int:
    return sext(value & M64, 64)


def tilesize(system: Any, code: int, word: int) -> int:
    """Registers in a group (1/2/4/8) for a tilesize code; other codes are illegal (G4)."""
    for n, c in system.tables.table("tilesize").items():
        if c == code:
            return int(n)
    raise faults.illegal(word, f"tilesize code {code} is reserved")


def check_group(system: Any, first: int, count: int, word: int, what: str) -> None:
    """A group of ``count`` tile registers from ``first``: inside the file and aligned (G4)."""
    cfg = system.cfg
    if first + count > cfg.num_tiles:
        raise faults.illegal(word, f"{what} t{first}..t{first + count - 1} is beyond the "
                             f"{cfg.num_tiles} tile registers")
    if cfg.tilesize_align and first % count:
        raise faults.illegal(word, f"{what} group t{first} of {count} registers is not aligned to {count}")


def tile_range(thread: Any, first: int, count: int) -> tuple[str, int, int, int]:
    """The byte range of tiles ``first..first+count-1`` in the checker's terms."""
    kind, index = thread.rf_key
    start = first * thread.tile_bytes
    return (kind, index, start, start + count * thread.tile_bytes)


def granule_on(op: Any, thread: Any, g: int) -> bool:
    """Is granule ``g`` selected (tmask=1 uses CSR tmask bit g mod 32, tile.md G5)?"""
    return not op.f("W0.tmask") or bool(thread.csr["tmask"] >> (g % 32) & 1)


def merge_ranges(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def offset(system: Any, op: Any, wide: bool) -> int:
    """The W0 address offset: GPR rs3 (offseten=1) or the sign-extended immediate (G6).

    ``wide``: the 10-bit ``{W0[19:15], W0[24:20]}`` immediate of unit-stride and tile
    atomic forms; otherwise the 5-bit ``W0[24:20]``.
    """
    if op.f("W0.offseten"):
        return op.gpr("W0", "lo5")
    if wide:
        imm, bits = op.f("W0.hi5") << 5 | op.f("W0.lo5"), 10
    else:
        imm, bits = op.f("W0.lo5"), 5
    return sext(imm, bits) if system.cfg.imm_signed else imm


def check_aligned(system: Any, address: int, align: int, write: bool, word: int, rule: str) -> None:
    if address % align and system.cfg.misaligned == "trap":
        cause = faults.STORE_MISALIGNED if write else faults.LOAD_MISALIGNED
        raise faults.access(cause, address, word, f"{rule}: address {address:#x} is not "
                            f"{align}-byte aligned")


def element_size(system: Any, table: str, direction: str | None, code: int) -> dict[str, Any] | None:
    """The entry of a func6 table (``func6_vector`` ...) with this code, by direction or either."""
    groups = system.tables.table(table)
    for d in ([direction] if direction else list(groups)):
        for name, entry in groups[d].items():
            if entry["code"] == code:
                return {"name": name, **entry}
    return None
