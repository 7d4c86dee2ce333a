"""RISC-V semantic functions with their encoding rows, one module per extension (as Sail lays them out).

=============  ==============================================================
``base``       RV32I/RV64I: upper immediates, jumps, branches, loads, stores,
               integer computation, RV64I's 32-bit word operations; ``nop``
``system``     ``fence``, ``fence.tso``, ``fence.i``, ``ecall``, ``ebreak``,
               ``mret``, ``wfi``
``misaligned`` the instruction-address-misaligned traps ``refine`` installs
``m``          M: multiplication and division
``zicsr``      Zicsr: the CSR instructions
``zba``        Zba: address generation (shift-and-add)
``zbb``        Zbb: basic bit manipulation
``zaamo``      Zaamo: atomic memory operations
=============  ==============================================================

Each module registers its functions in :data:`REGISTRY` by name and defines
``ROWS``, its encoding rows (:class:`tessera_riscv.formats.Row`), which name the
functions they run with ``REGISTRY.ref(name)``; :mod:`tessera_riscv.encoding`
assembles the rows into one table per XLEN, and the engine binds each row's
reference when it decodes.  A function is ``fn(hart, ins) -> next_pc | None``;
registers are the list ``hart.x`` of unsigned XLEN-bit ints.  One that depends on
XLEN is written once against the constants of :mod:`~tessera_riscv.semantics.xlen`
and registered per XLEN (``rv32_add``, ``rv64_add``); one that does not is registered
once under its mnemonic.

Conventions the decode-cache fill establishes (:func:`tessera_riscv.encoding.refine`,
through the variants the rows declare):

* rows flagged ``pure`` only write ``rd``: when ``rd`` is ``x0`` the fill installs their
  ``x0`` variant, :func:`~tessera_riscv.semantics.base.nop`, so these functions write
  ``x[ins.rd]`` unconditionally;
* ``ins.target`` (branches, ``jal``), ``ins.link`` (``jal``/``jalr``) and
  ``ins.value`` (``lui``, ``auipc``, ``li``) are precomputed there.

So execute instructions through a machine, not by calling these on bare decoder output.
"""

from __future__ import annotations

from tessera.isa import SemanticsRegistry

#: every RISC-V semantic function by name; rows hold ``REGISTRY.ref(name)``
REGISTRY = SemanticsRegistry(__name__, __path__, skip=("xlen",))

__all__ = ["REGISTRY"]
