"""The two architectures the plugin registers: ``rv32im`` and ``rv64im``."""

from __future__ import annotations

from tessera_riscv.examples import examples
from tessera_riscv.extension import make_arch

RV32IM = make_arch("rv32im", 32, examples=examples(32))
RV64IM = make_arch("rv64im", 64, examples=examples(64))
