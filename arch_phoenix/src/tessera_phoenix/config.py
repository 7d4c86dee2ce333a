"""Configuration of an rfPhoenix machine: every place the spec leaves a choice.

Values come from ``Machine(config=...)`` / ``tessera run --set key=value``.  Each key
is documented in ``docs/phoenix.md`` with the spec section that motivates it.
"""

from __future__ import annotations

import numbers
from typing import Any

import attrs

from tessera.errors import ConfigError

MIB = 1 << 20


@attrs.frozen
class PhoenixConfig:
    threads: int = 4                 # NTHREADS (1..16; CR0 has 16 enable bits)
    lanes: int = 16                  # NLANES (1..32; masks are 32-bit)
    pma: bool = True                 # check the PMA region table on every physical access
    lenient: bool = False            # undefined opcodes execute as NOP (HDL) instead of UNIMP
    vector_offset: bool = True       # exception vector TVEC3 + 0x20 * previous mode (doc); else TVEC3
    rex_mode_offset: bool = False    # REX jumps to TVEC[tm] + 64 * current mode (HDL) instead of TVEC[tm]
    eip_writable: bool = True        # machine mode may write EIP (so reset code can RTI anywhere)
    csr_machine_only: bool = False   # HDL: every CSR instruction outside machine mode traps (CSR)
    halt_on_self_loop: bool = True   # an unconditional branch to itself halts the thread
    double_fault_halts: bool = True  # an exception at nesting depth 7 stops the run (unhandled trap)
    dram: int = 512 * MIB            # DRAM size at address 0 (spec 1.8: 512 MiB)
    hartid: int = 0                  # external core id (HARTID = hartid << 4 | thread)
    reset_cr0: int = 1               # thread enables at reset
    # system instructions, interrupts, clocks (docs/phoenix-decisions.md "System")
    cr0_bit_ops: bool = False        # HDL: CSRRS/CSRRC on CR0 set/clear the bit numbered Ra[5:0]
    rti_machine_only: bool = False   # RTI outside machine mode raises PRIV (spec 1.6 proposal list)
    irq: str = ""                    # scheduled interrupts "t0:5@1000,t1:3@2000" (thread:level@step)
    time_hz: int = 100_000_000       # TIME counts machine cycles and wraps into TIMESEC at this rate
    # floating point (docs/phoenix-decisions.md "Floating point")
    itof_use_rm: bool = False        # ITOF honours RM (default: always truncates, as the HDL's rm = 1)

    @classmethod
    def from_machine(cls, config: dict[str, Any]) -> PhoenixConfig:
        known = {f.name for f in attrs.fields(cls)}
        unknown = sorted(set(config) - known - {"echo"})
        if unknown:
            raise ConfigError(f"unknown rfPhoenix setting(s): {', '.join(unknown)} "
                              f"(known: {', '.join(sorted(known))})")
        values = {k: _typed(k, v) for k, v in config.items() if k in known}
        try:
            cfg = cls(**values)
        except TypeError as exc:
            raise ConfigError(f"bad rfPhoenix setting: {exc}") from None
        cfg.validate()
        return cfg

    def validate(self) -> None:
        if not 1 <= self.threads <= 16:
            raise ConfigError("threads must be 1..16")
        if not 1 <= self.lanes <= 32:
            raise ConfigError("lanes must be 1..32")
        if self.dram <= 0 or self.dram > 512 * MIB:
            raise ConfigError("dram must be 1 .. 512 MiB")
        if not 0 <= self.reset_cr0 <= 0xFFFF:
            raise ConfigError("reset_cr0 must be 0..0xFFFF (CR0 has 16 thread-enable bits)")
        if not 0 <= self.hartid <= 0x0FFF_FFFF:
            raise ConfigError("hartid must be 0..0x0FFFFFFF (HARTID = hartid << 4 | thread, 32 bits)")
        if not isinstance(self.time_hz, int) or self.time_hz <= 0:
            raise ConfigError("time_hz must be a positive integer")
        if not isinstance(self.irq, str):
            raise ConfigError("irq must be a schedule like 't0:5@1000,t1:3@2000'")


def _typed(name: str, value: Any) -> Any:
    """``value`` checked against the type of the setting's default (``--set`` gives str/int/bool).

    Booleans also accept 0 and 1; integers refuse booleans.
    """
    default = attrs.fields_dict(PhoenixConfig)[name].default
    if isinstance(default, bool):
        if isinstance(value, bool) or (isinstance(value, numbers.Integral) and value in (0, 1)):
            return bool(value)
        raise ConfigError(f"rfPhoenix setting {name} must be true or false, got {value!r}")
    if isinstance(default, int):
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return int(value)
        raise ConfigError(f"rfPhoenix setting {name} must be an integer, got {value!r}")
    if not isinstance(value, str):
        raise ConfigError(f"rfPhoenix setting {name} must be a string, got {value!r}")
    return value
