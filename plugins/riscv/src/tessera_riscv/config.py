"""Configuration of a RISC-V machine (``Machine(config=...)``, ``tessera run --set KEY=VALUE``).

Every key is documented in ``docs/riscv.md``.  Unknown keys are refused (a typo
should not silently run a different machine), except keys an extension owns: those
start with the extension's name and a dot (``acc.depth=4`` for extension ``acc``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from tessera.errors import ConfigError

MIB = 1 << 20
DEFAULT_RAM = 256 * MIB
MISALIGNED_POLICIES = ("allow", "trap")


def _flag(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in ("true", "yes", "on", "1", "false", "no", "off", "0"):
        return value.lower() in ("true", "yes", "on", "1")
    raise ConfigError(f"RISC-V setting {name} must be true or false, not {value!r}")


def _int(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ConfigError(f"RISC-V setting {name} must be a number, not {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip().lower().replace("_", "")
        mult = 1
        for suffix, m in (("k", 1 << 10), ("m", MIB), ("g", 1 << 30)):
            if text.endswith(suffix):
                text, mult = text[:-1], m
                break
        try:
            return int(text, 0) * mult
        except ValueError:
            pass
    raise ConfigError(f"RISC-V setting {name} must be a number (e.g. 0x1000, 64M), not {value!r}")


@attrs.frozen
class RiscvConfig:
    """The validated settings of one machine."""

    ram: int = DEFAULT_RAM          # bytes of RAM at address 0
    syscalls: bool = True           # ecall is a Linux-numbered system call (write, exit, exit_group)
    misaligned: str = "allow"       # misaligned loads/stores: "allow" or "trap" (mcause 4/6)
    stack_top: int | None = None    # initial sp (16-byte aligned); default: the top of RAM
    echo: bool = True               # write() also goes to this process's stdout/stderr
    hartid: int = 0                 # mhartid

    KEYS = ("ram", "syscalls", "misaligned", "stack_top", "echo", "hartid")

    @classmethod
    def from_mapping(cls, config: Mapping[str, Any], xlen: int,
                     extensions: Iterable[str] = ()) -> RiscvConfig:
        prefixes = tuple(f"{name}." for name in extensions)
        unknown = sorted(k for k in config if k not in cls.KEYS and not k.startswith(prefixes))
        if unknown:
            owned = f"; extension settings start with {', '.join(p + '…' for p in prefixes)}" if prefixes else ""
            raise ConfigError(f"unknown RISC-V setting(s): {', '.join(unknown)} "
                              f"(known: {', '.join(cls.KEYS)}{owned})")
        values: dict[str, Any] = {}
        if "ram" in config:
            values["ram"] = _int("ram", config["ram"])
        for key in ("syscalls", "echo"):
            if key in config:
                values[key] = _flag(key, config[key])
        if "misaligned" in config:
            values["misaligned"] = str(config["misaligned"]).lower()
        if config.get("stack_top") is not None:
            values["stack_top"] = _int("stack_top", config["stack_top"])
        if "hartid" in config:
            values["hartid"] = _int("hartid", config["hartid"])
        cfg = cls(**values)
        cfg.validate(xlen)
        return cfg

    def validate(self, xlen: int) -> None:
        if self.ram <= 0 or self.ram % 16:
            raise ConfigError(f"RISC-V setting ram must be a positive multiple of 16 bytes, not {self.ram:#x}")
        if self.ram > 1 << xlen:
            raise ConfigError(f"RISC-V setting ram={self.ram:#x} does not fit the {xlen}-bit address space")
        if self.misaligned not in MISALIGNED_POLICIES:
            raise ConfigError(f"RISC-V setting misaligned must be one of {', '.join(MISALIGNED_POLICIES)}, "
                              f"not {self.misaligned!r}")
        if self.stack_top is not None and not 64 <= self.stack_top <= self.ram:
            raise ConfigError(f"RISC-V setting stack_top={self.stack_top:#x} must lie in RAM "
                              f"(64 .. {self.ram:#x})")
        if not 0 <= self.hartid < 1 << xlen:
            raise ConfigError(f"RISC-V setting hartid={self.hartid} does not fit {xlen} bits")

    @property
    def initial_sp(self) -> int:
        return (self.ram if self.stack_top is None else self.stack_top) & ~15
