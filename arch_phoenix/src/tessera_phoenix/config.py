"""Configuration of an rfPhoenix machine: every place the spec leaves a choice.

Values come from ``Machine(config=...)`` / ``tessera run --set key=value``.  Each key
is declared here (kind, default, range, help: :func:`tessera.settings.setting`), checked
by the core before the board is built (:func:`settings`), and documented in
``docs/phoenix.md`` with the spec section that motivates it.  A new key is one more
field: ``name: type = setting(default, ..., help="...")``.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs

from tessera.settings import Settings, setting

MIB = 1 << 20


@attrs.frozen
class PhoenixConfig:
    threads: int = setting(4, min=1, max=16, help="NTHREADS, hardware threads",
                           note="CR0 has 16 thread-enable bits")
    lanes: int = setting(16, min=1, max=32, help="NLANES, 32-bit lanes per vector register",
                         note="vector masks are 32 bits")
    pma: bool = setting(True, help="check the PMA region table on every physical access")
    lenient: bool = setting(False, help="undefined opcodes execute as NOP (HDL) instead of raising UNIMP")
    vector_offset: bool = setting(True, help="exception vector TVEC3 + 0x20 * previous mode (doc); "
                                             "false: TVEC3 (HDL)")
    rex_mode_offset: bool = setting(False, help="REX jumps to TVEC[tm] + 64 * current mode (HDL) "
                                                "instead of TVEC[tm]")
    eip_writable: bool = setting(True, help="machine mode may write EIP (so reset code can RTI anywhere)")
    csr_machine_only: bool = setting(False, help="HDL: every CSR instruction outside machine mode traps (CSR)")
    halt_on_self_loop: bool = setting(True, help="an unconditional branch to itself halts the thread")
    double_fault_halts: bool = setting(True, help="an exception at nesting depth 7 stops the run "
                                                  "(unhandled trap)")
    memory: str = setting("spec", choices=("spec", "testbench"),
                          help="memory model: spec = the memory map of spec 1.8; testbench = the "
                               "HDL test bench's one 256 KiB memory aliased over the whole address "
                               "space (physical address & 0x3FFFF), no PMA",
                          note="spec 1.8")
    dram: int = setting(512 * MIB, "size", min=1, max=512 * MIB, help="DRAM size at address 0",
                        note="spec 1.8: 512 MiB of DRAM")
    hartid: int = setting(0, min=0, max=0x0FFF_FFFF, help="external core id (HARTID = hartid << 4 | thread)",
                          note="HARTID is 32 bits")
    reset_cr0: int = setting(1, min=0, max=0xFFFF, help="thread enables at reset",
                             note="CR0 has 16 thread-enable bits")
    # system instructions, interrupts, clocks (docs/phoenix-decisions.md "System")
    cr0_bit_ops: bool = setting(False, help="HDL: CSRRS/CSRRC on CR0 set/clear the bit numbered Ra[5:0]")
    rti_machine_only: bool = setting(False, help="RTI outside machine mode raises PRIV (spec 1.6 proposal list)")
    irq: str = setting("", help="scheduled interrupts 't0:5@1000,t1:3@2000' (thread:level@step)")
    time_hz: int = setting(100_000_000, min=1, max=1 << 32,
                           help="TIME counts machine cycles and wraps into TIMESEC at this rate",
                           note="TIME is a 32-bit CSR")
    # floating point (docs/phoenix-decisions.md "Floating point")
    itof_use_rm: bool = setting(False, help="ITOF honours RM (default: always truncates, as the HDL's rm = 1)")
    echo: bool = setting(True, help="no effect (rfPhoenix has no console to echo; accepted so a tool "
                                    "can pass echo=false to any architecture)")

    @classmethod
    def from_machine(cls, config: dict[str, Any]) -> PhoenixConfig:
        """The settings of ``config``, checked against :func:`settings` (defaults filled)."""
        cfg = cls(**settings().resolve(config))
        cfg.validate()
        return cfg

    def validate(self) -> None:
        """What the declaration cannot say (nothing yet: every bound is declared)."""


@functools.cache
def settings() -> Settings:
    """The declared settings (built from the fields, so a new field is a new setting)."""
    return Settings.from_attrs(PhoenixConfig, label="rfPhoenix")
