"""Tessera architecture plugin: RISC-V host cores RV32IM / RV64IM (+ Zicsr, Zba, Zbb, Zaamo).

``RV32IM`` and ``RV64IM`` are the architecture records the plugin registers;
``make_arch`` and ``RiscvExtension`` are the extension point (see ``docs/riscv.md``);
a board of its own (several harts, per-hart address maps: the Tensix tile) builds
``RiscvHart`` agents and declares ``machine.ext["riscv_io"]`` as a ``RiscvIO`` for
their system calls.
"""

from tessera_riscv.arch import RV32IM, RV64IM
from tessera_riscv.extension import RiscvExtension, make_arch
from tessera_riscv.hart import RiscvHart
from tessera_riscv.syscalls import RiscvIO

__all__ = ["RV32IM", "RV64IM", "RiscvExtension", "RiscvHart", "RiscvIO", "make_arch"]
