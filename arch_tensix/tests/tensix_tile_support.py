"""Helpers for the tile tests: assemble a core's program, write it as an ELF, run a tile."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_tensix.tile.arch import TILE_BH, TILE_WH


def boot_bh(*triscs: int) -> str:
    """RISCV B's code that releases T<i> for each i in ``triscs`` (default all three) with
    their reset pcs overridden (Blackhole tile-control registers): 0x8000 / 0x9000 / 0xA000."""
    triscs = triscs or (0, 1, 2)
    held = sum(1 << (12 + i) for i in range(3) if i not in triscs)
    return f"""
    li t0, 0xFFB12000
    li t1, 0x8000
    sw t1, 0x228(t0)
    li t1, 0x9000
    sw t1, 0x22C(t0)
    li t1, 0xA000
    sw t1, 0x230(t0)
    li t1, 7
    sw t1, 0x234(t0)
    li t1, {held:#x}
    sw t1, 0x1B0(t0)
"""


BOOT_BH = boot_bh()
EXIT = """
    li a7, 93
    li a0, 0
    ecall
"""


def host() -> PluginHost:
    """A host with the Tensix plugin (its hooks: program formats, kernel checks)."""
    import tessera_tensix.plugin as plugin

    h = PluginHost()
    h.register(plugin, "tensix")
    return h


def arch_of(chip: str) -> Any:
    return TILE_WH if chip == "wh" else TILE_BH


def image(chip: str, source: str, base: int) -> list[tuple[int, bytes]]:
    """``source`` assembled for the tile's cores at ``base``: its segments."""
    return assemble(arch_of(chip), f".org {base:#x}\n{source}", file="core.s").segments


def write_elf(path: Path, segments: list[tuple[int, bytes]], entry: int) -> Path:
    """A minimal little-endian ELF32 RISC-V executable with one PT_LOAD per segment."""
    header_size, ph_size = 52, 32
    offset = header_size + ph_size * len(segments)
    headers, blobs = b"", b""
    for address, blob in segments:
        headers += struct.pack("<8I", 1, offset + len(blobs), address, address, len(blob), len(blob), 7, 4)
        blobs += blob
    ident = b"\x7fELF" + bytes([1, 1, 1]) + bytes(9)
    head = ident + struct.pack("<HHIIIIIHHHHHH", 2, 0xF3, 1, entry, header_size, 0, 0, header_size,
                               ph_size, len(segments), 40, 0, 0)
    path.write_bytes(head + headers + blobs)
    return path


def core_elf(tmp: Path, name: str, chip: str, source: str, base: int) -> Path:
    return write_elf(tmp / f"{name}.elf", image(chip, source, base), base)


def manifest(tmp: Path, chip: str, cores: dict[str, str], extra: str = "") -> Path:
    """A kernel manifest naming ``cores`` (core -> assembly source at its start address)."""
    starts = {"brisc": 0x0, "trisc0": 0x8000, "trisc1": 0x9000, "trisc2": 0xA000}
    lines = [f'chip = "{"wormhole_b0" if chip == "wh" else "blackhole"}"', 'kernel = "test"', "[cores]"]
    for core, source in cores.items():
        core_elf(tmp, core, chip, source, starts[core])
        lines.append(f'{core} = "{core}.elf"')
    path = tmp / "kernel.toml"
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


def run_kernel(path: Path, **run: Any) -> tuple[Machine, Any]:
    """Build the manifest's tile, load it and run it."""
    from tessera.loaders import load_program
    from tessera_tensix.tile import kernel

    data = path.read_bytes()
    m = Machine(arch_of(kernel.parse(str(path), data).chip), host=host())
    load_program(m, str(path))
    run.setdefault("max_steps", 100_000)
    return m, m.run(**run)
