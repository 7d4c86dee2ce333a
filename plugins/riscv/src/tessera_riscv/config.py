"""Configuration of a RISC-V machine (``Machine(config=...)``, ``tessera run --set KEY=VALUE``).

Every key is declared here — kind, default, range and help, with :func:`tessera.settings.setting`
— and documented in ``docs/riscv.md``; the core checks a configuration against
:func:`riscv_settings` before the board is built.  Unknown keys are refused (a typo
should not silently run a different machine), except keys an extension owns: those
start with the extension's name and a dot (``acc.depth=4`` for extension ``acc``) and
are the extension's to declare (``RiscvExtension.settings``) or to check.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from tessera.errors import ConfigError
from tessera.settings import SettingFamily, Settings, setting

MIB = 1 << 20
DEFAULT_RAM = 256 * MIB
MISALIGNED_POLICIES = ("allow", "trap")
#: Largest RV64 RAM: the privileged specification's widest physical address (56 bits).
RV64_PHYSICAL_BITS = 56


@attrs.frozen
class RiscvConfig:
    """The validated settings of one machine."""

    ram: int = setting(DEFAULT_RAM, "size", min=16,
                       help="bytes of RAM at address 0 (a multiple of 16)")
    syscalls: bool = setting(True, help="ecall is a Linux-numbered system call (write, exit, exit_group); "
                                        "false: it takes the environment-call trap (mcause 11)")
    misaligned: str = setting("allow", choices=MISALIGNED_POLICIES,
                              help="misaligned loads/stores: allow, or trap (mcause 4/6)")
    stack_top: int | None = setting(None, "size", min=64,
                                    help="initial sp (16-byte aligned); default: the top of RAM")
    echo: bool = setting(True, help="write() also goes to this process's stdout/stderr")
    hartid: int = setting(0, min=0, help="the value of mhartid")

    KEYS = ("ram", "syscalls", "misaligned", "stack_top", "echo", "hartid")

    @classmethod
    def from_mapping(cls, config: Mapping[str, Any], xlen: int,
                     extensions: Iterable[Any] = ()) -> RiscvConfig:
        """The settings of ``config`` (checked against :func:`riscv_settings`; defaults filled).

        ``extensions`` are :class:`~tessera_riscv.RiscvExtension` records or their names:
        keys under their prefixes are theirs.
        """
        declared = riscv_settings(xlen, extensions)
        cfg = cls(**declared.resolve(config))
        cfg.validate(xlen)
        return cfg

    def validate(self, xlen: int) -> None:
        """What the declaration cannot say: checks across settings and the variant's XLEN."""
        if self.ram % 16:
            raise ConfigError(f"RISC-V setting ram must be a multiple of 16 bytes, not {self.ram:#x}")
        if self.stack_top is not None and not 64 <= self.stack_top <= self.ram:
            raise ConfigError(f"RISC-V setting stack_top={self.stack_top:#x} must lie in RAM "
                              f"(64 .. {self.ram:#x})")

    @property
    def initial_sp(self) -> int:
        return (self.ram if self.stack_top is None else self.stack_top) & ~15


def riscv_settings(xlen: int, extensions: Iterable[Any] = ()) -> Settings:
    """The declared settings of an RV32/RV64 machine with ``extensions``.

    The bounds that depend on XLEN: RAM up to the whole 32-bit space on RV32 and up
    to 2**56 bytes (the widest physical address of the privileged specification) on
    RV64; ``mhartid`` up to XLEN bits.  An extension that declares settings
    (:class:`~tessera.settings.Settings` in ``RiscvExtension.settings``) gets a closed
    family ``<name>.*``; one that declares none gets its prefix passed through for
    its own ``build`` to check.
    """
    top = 1 << (32 if xlen == 32 else RV64_PHYSICAL_BITS)
    space = f"the {xlen}-bit address space" if xlen == 32 else "RV64's 56-bit physical addresses"
    base = Settings.from_attrs(
        RiscvConfig, label="RISC-V",
        ram={"max": top, "note": space}, stack_top={"max": top, "note": "inside RAM, at most ram"},
        hartid={"max": (1 << xlen) - 1, "note": f"an XLEN ({xlen}-bit) value"})
    families = []
    for ext in extensions:
        name = ext if isinstance(ext, str) else ext.name
        declared = None if isinstance(ext, str) else getattr(ext, "settings", None)
        if declared is not None:
            families.append(SettingFamily(f"{name}.", help=f"settings of extension {name}",
                                          settings=declared.all_settings(), label=declared.label or name))
        else:
            families.append(SettingFamily(f"{name}.", help=f"settings of extension {name} "
                                          "(checked by the extension)"))
    return Settings(base.items, tuple(families), base.label)
