"""Glue used by the command line (and handy for scripts): arch choice, machine set-up, state text."""

from __future__ import annotations

from typing import Any

from tessera.dumptext import machine_lines
from tessera.errors import ConfigError
from tessera.loaders import detect_format, read_file
from tessera.loaders.elf import choose_architecture
from tessera.loaders.formats import call_format, claiming


def resolve_arch(host: Any, name: str | None, path: str | None = None, cap: int = 1 << 30) -> Any:
    """The architecture named ``name``, or the one the ELF at ``path`` asks for."""
    if name:
        return host.architecture(name)
    if path is None:
        raise ConfigError("--arch is required")
    data = read_file(path, cap)
    if detect_format(path, data[:4]) == "elf":
        return choose_architecture(host, data, path)
    claimed = claiming(host, path, data)
    if claimed is not None:
        return host.architecture(call_format(*claimed, "architecture", path, data))
    known = ", ".join(sorted(host.architectures())) or "none installed"
    raise ConfigError(f"{path} is not an ELF file, so --arch is required (installed: {known})")


def state_text(machine: Any, state: dict[str, Any] | None = None) -> str:
    """A readable rendering of :meth:`Machine.state` (``--dump-state text``).

    The layout and the generic rule for plugin state are :mod:`tessera.dumptext`'s;
    the architecture's ``dump_text`` renders what shape alone cannot.
    """
    return "\n".join(machine_lines(machine.arch, state or machine.state()))
