"""Building a RISC-V machine: RAM, the hart, the initial stack, the system-call output.

The board is deliberately plain — what a bare-metal ELF for ``riscv*-unknown-elf``
needs and what qemu's user mode gives it:

* RAM at address 0, ``ram`` bytes (default 256 MiB), covering the toolchain's default
  link address 0x10000 and a stack at the top;
* one hart, ``hart0`` (:class:`~tessera_riscv.hart.RiscvHart`);
* ``sp`` just below ``stack_top`` (default: the top of RAM), 16-byte aligned, pointing at
  the words qemu-user puts there for a program started without arguments:
  ``argc = 0``, ``argv[0] = NULL``, ``envp[0] = NULL``, ``auxv = AT_NULL`` (two words);
* ``machine.ext["riscv_io"]``: what the program wrote with the ``write`` system call;
* ``machine.ext["riscv_config"]``: the validated :class:`~tessera_riscv.config.RiscvConfig`.

Extensions (:mod:`tessera_riscv.extension`) then map their MMIO devices and run their
own ``build`` hooks, in the order given to ``make_arch``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from tessera_riscv.config import RiscvConfig
from tessera_riscv.hart import RiscvHart
from tessera_riscv.syscalls import RiscvIO

#: argc, argv[0], envp[0], auxv AT_NULL (type, value)
INITIAL_STACK_WORDS = 5


def xlen_of(arch: Any) -> int:
    return arch.register_file_map["x"].width


def build_board(machine: Any, extensions: Sequence[Any] = ()) -> RiscvHart:
    arch = machine.arch
    xlen = xlen_of(arch)
    cfg = RiscvConfig.from_mapping(machine.config, xlen, [ext.name for ext in extensions])
    machine.ext.declare("riscv_config", cfg)
    machine.ext.declare("riscv_io", RiscvIO(echo=cfg.echo))
    space = machine.space
    space.add_ram("ram", 0, cfg.ram)
    hart = RiscvHart("hart0", arch, space, xlen=xlen, hartid=cfg.hartid, misaligned=cfg.misaligned,
                     syscalls=cfg.syscalls)
    machine.add_agent(hart)
    size = INITIAL_STACK_WORDS * xlen // 8
    sp = (cfg.initial_sp - size) & ~15
    space.write_bytes(sp, bytes(size), force=True)
    hart.x[2] = sp
    for ext in extensions:
        for name, start, length, device in ext.devices:
            space.add_mmio(name, start, length, instantiate(device, machine))
        if ext.build is not None:
            ext.build(machine)
    return hart


def instantiate(device: Any, machine: Any) -> Any:
    """A fresh device for this machine: a copy of a device object, or ``factory(machine)``."""
    if not isinstance(device, type) and hasattr(device, "read") and hasattr(device, "write"):
        return copy.deepcopy(device)
    return device(machine)


def build(machine: Any) -> None:
    """``Architecture.build`` of the plain RV32IM / RV64IM machines."""
    build_board(machine)
