"""The harts' CSRs as fault targets (``HART.csr``): listed by name, written into the hart's
live state, and a fault in one changes what a program computes.

An entry is named like a register (``hart0.mscratch``, ``mstatus``) or by index
(``hart0.csr[5]``)."""

from __future__ import annotations

import pytest
from rvcore_support import load

import tessera_faults
import tessera_faults.plugin
import tessera_riscv.plugin
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_faults.targets import resolve, targets_of
from tessera_riscv import RV32IM, RV64IM, csrs


def host() -> PluginHost:
    h = PluginHost(load_entry_points=False, use_environment=False)
    h.register(tessera_riscv.plugin, "riscv")
    h.register(tessera_faults.plugin, "faults")
    return h


def make(arch=RV32IM, source: str | None = None) -> Machine:
    m = Machine(arch, host=host(), config={"echo": False, "ram": 1 << 20})
    if source is not None:
        load(m, source)
    return m


@pytest.mark.parametrize("arch", [RV32IM, RV64IM])
def test_the_csr_target_lists_every_implemented_csr_by_name(arch):
    m = make(arch)
    hart = m.agent("hart0")
    target = targets_of(m)["hart0.csr"]
    implemented = [n for n in sorted(csrs.names(hart.xlen)) if hart.csr_exists(n)]
    assert target.entries == len(implemented) and target.bits == hart.xlen and target.kind == "csr"
    assert [target.entry_index(csrs.names(hart.xlen)[n]) for n in implemented] == list(range(len(implemented)))
    excluded = {target.names[i] for i in target.exclude}
    assert {"mhartid", "cycle", "mvendorid", "misa"} <= excluded
    assert not {"mstatus", "mepc", "mscratch", "mip"} & excluded
    assert {"mcycle", "minstret"} <= excluded  # free-running counts, not stored words
    assert ("mstatush" in target.names) == (hart.xlen == 32)


def test_writing_an_entry_changes_the_live_csr_within_the_bits_it_stores():
    m = make()
    hart = m.agent("hart0")
    targets = targets_of(m)
    scratch = resolve(m, "hart0.mscratch", targets=targets)
    assert resolve(m, "hart0.csr[mscratch]", targets=targets) == scratch   # the entry's name as its index
    scratch.target.write(scratch.index, 0x1234_5678)
    assert hart.csr_read(csrs.MSCRATCH) == 0x1234_5678 == scratch.target.read(scratch.index)
    status = resolve(m, "mstatus", targets=targets)          # the first hart's, by default
    status.target.write(status.index, 0xFFFF_FFFF)
    assert hart.mstatus == csrs.MSTATUS_MIE | csrs.MSTATUS_MPIE   # only the bits the hart keeps
    pending = resolve(m, "hart0.mip", targets=targets)
    pending.target.write(pending.index, 1 << csrs.MTI)
    assert hart.csr_read(csrs.MIP) == 1 << csrs.MTI
    before = hart.hartid
    ident = resolve(m, "hart0.mhartid", targets=targets)
    assert ident.index in ident.target.exclude
    ident.target.write(ident.index, 7)
    assert hart.hartid == before


PROGRAM = """
    li   t0, 40
    csrw mscratch, t0
    nop
    nop
    csrr a0, mscratch
    li   a7, 93
    ecall
"""


def test_a_fault_in_mscratch_changes_the_exit_status():
    clean = make(source=PROGRAM)
    assert clean.run(max_steps=100).exit_code == 40
    m = make(source=PROGRAM)
    record = tessera_faults.inject(m, "target=hart0.mscratch,bit=0,at=step:3")
    assert m.run(max_steps=100).exit_code == 41
    assert record["status"] == "injected" and record["target"] == "hart0.csr[{}]".format(
        targets_of(m)["hart0.csr"].entry_index("mscratch"))
