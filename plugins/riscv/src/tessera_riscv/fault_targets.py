"""RISC-V fault targets beyond the ``x`` registers (the ``tessera_fault_targets`` hook).

One ``csr`` target per hart, ``HART.csr``: its entries are the CSRs the hart implements
(:func:`tessera_riscv.csrs.names` less those :meth:`RiscvHart.csr_exists` refuses),
ordered by CSR number and named, so ``hart0.csr[mstatus]`` is one entry.  Which CSRs
exist and what each stores follows the privileged spec's machine-mode CSR list
(riscv-privileged "Machine-Level CSRs", 3.1; read-only numbers are those whose bits
11:10 are ``11``, 2.1) as :mod:`tessera_riscv.csrs` implements it.

Entries that hold no state a fault could change are in ``exclude``: the read-only CSRs
(``mhartid``, ``cycle``, ``time`` …: they show other state, or a constant) and the
writable ones that read as a constant (``misa``, ``mstatush``, ``mcountinhibit``, the
HPM counters and events).  ``mcycle`` and ``minstret`` are excluded too: they are not
stored words but the engine's cycle and retired counts plus an offset, which inside a
slice read the counts committed when it began — a flip there is a timing fault this
target does not model.  (They are still *read* by ``values()``, so a campaign's final
state includes them: a fault that changes how many instructions ran is visible.)

A write goes where the hart keeps the CSR, keeping only the bits it stores (``mstatus``
keeps MIE and MPIE, ``mepc`` drops bits 1:0 …), so a flip of a bit the hart does not
implement is no change; ``mip`` — which CSR instructions cannot
write — takes the bits as written, since its pending bits are state.

Any machine whose agents include :class:`~tessera_riscv.hart.RiscvHart` harts gets
these — the plain RISC-V board and the boards that run harts of this class (the tile
architecture's harts, the Tensix tile's baby cores), once each.
"""

from __future__ import annotations

from typing import Any

from tessera_riscv import csrs
from tessera_riscv.hart import _ZERO, RiscvHart

#: writable CSRs that read as zero and ignore writes (HPM counters and events, mcountinhibit ...)
CONSTANT_ZERO = _ZERO


def fault_targets(machine: Any) -> list[dict[str, Any]]:
    return [csr_target(a) for a in machine.agents if isinstance(a, RiscvHart)]


def implemented(hart: RiscvHart) -> list[tuple[int, str]]:
    """(number, name) of every CSR ``hart`` implements, by number."""
    return [(n, name) for n, name in sorted(csrs.names(hart.xlen).items()) if hart.csr_exists(n)]


#: the free-running counters (the engine's counts plus an offset, not stored words): not
#: faultable (module doc)
COUNTERS = frozenset(n for n, name in csrs.names(64).items() | csrs.names(32).items()
                     if name in ("mcycle", "minstret", "mcycleh", "minstreth"))


def stateless(number: int) -> bool:
    """A CSR no fault can change: read-only, a constant that ignores writes, or (left out
    on purpose) a free-running counter."""
    return csrs.read_only(number) or number == csrs.MISA or number in CONSTANT_ZERO or number in COUNTERS


def csr_target(hart: RiscvHart) -> dict[str, Any]:
    table = implemented(hart)
    numbers = [n for n, _ in table]
    exclude = [i for i, n in enumerate(numbers) if stateless(n)]

    def read(index: int) -> int:
        return hart.csr_read(numbers[index])

    def write(index: int, value: int) -> None:
        number = numbers[index]
        if number == csrs.MIP:
            hart.mip = value & hart.mask
            hart._update_irq()
        elif not stateless(number):
            hart._csr_set(number, value & hart.mask, retiring=None)

    def values() -> list[int]:
        return [hart.csr_read(n) for n in numbers]

    return {"name": f"{hart.name}.csr", "kind": "csr", "entries": len(numbers), "bits": hart.xlen,
            "agent": hart.name, "read": read, "write": write, "values": values,
            "names": tuple(name for _, name in table), "exclude": exclude,
            "doc": f"the {len(numbers)} implemented machine-mode CSRs of {hart.name} "
                   f"(read-only and constant ones excluded)"}
