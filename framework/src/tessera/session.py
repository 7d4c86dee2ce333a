"""Glue used by the command line (and handy for scripts): arch choice, machine set-up, state text."""

from __future__ import annotations

from typing import Any

from tessera.errors import ConfigError
from tessera.loaders import detect_format, read_file
from tessera.loaders.elf import choose_architecture


def resolve_arch(host: Any, name: str | None, path: str | None = None, cap: int = 1 << 30) -> Any:
    """The architecture named ``name``, or the one the ELF at ``path`` asks for."""
    if name:
        return host.architecture(name)
    if path is None:
        raise ConfigError("--arch is required")
    data = read_file(path, cap)
    if detect_format(path, data[:4]) == "elf":
        return choose_architecture(host, data, path)
    known = ", ".join(sorted(host.architectures())) or "none installed"
    raise ConfigError(f"{path} is not an ELF file, so --arch is required (installed: {known})")


def _hex(value: int, width: int) -> str:
    return f"{value:#0{2 + (width + 3) // 4}x}"


def state_text(machine: Any, state: dict[str, Any] | None = None) -> str:
    """A readable rendering of :meth:`Machine.state` (``--dump-state text``)."""
    st = state or machine.state()
    files = {rf.name: rf for rf in machine.arch.register_files}
    lines = [f"arch {st['arch']}  clock {st['clock']} cycles  steps {st['steps']}"]
    for name, agent in st["agents"].items():
        head = f"{name:<8} {agent['kind']:<7} {agent['status']:<9}"
        if "pc" in agent:
            head += f" pc {_hex(agent['pc'], machine.arch.address_bits)}"
        head += f"  instret {agent['instret']}  cycles {agent['cycles']}"
        if agent.get("traps"):
            head += f"  traps {agent['traps']}"
        if agent.get("exit_code") is not None:
            head += f"  exit {agent['exit_code']}"
        if agent.get("waiting_for"):
            head += f"  waiting for {agent['waiting_for']}"
        lines.append(head)
        for rfname, values in agent.get("registers", {}).items():
            rf = files.get(rfname)
            names = rf.names if rf else [f"{rfname}{i}" for i in range(len(values))]
            width = rf.width if rf else 32
            cells = [f"{names[i]:>5}={_hex(v, width)}" for i, v in enumerate(values)]
            for i in range(0, len(cells), 4):
                lines.append("    " + "  ".join(cells[i:i + 4]))
    for name, obj in st.get("sync", {}).items():
        desc = ", ".join(f"{k}={v}" for k, v in obj.items() if k != "kind")
        lines.append(f"sync {name} ({obj['kind']}): {desc}")
    return "\n".join(lines)
