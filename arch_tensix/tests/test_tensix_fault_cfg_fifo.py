"""Tensix configuration registers (``cfg``, ``tN.tcfg``; BackendConfiguration.md) and the
tile's per-thread instruction FIFOs (``tN.fifo``; PushTensixInstruction.md) as fault
targets: listed with their sizes, written into the live state, and a fault in a queued
instruction reaches the Tensix thread that issues it."""

from __future__ import annotations

import pytest
from tensix_tile_support import EXIT, arch_of, boot_bh, manifest

import tessera_faults
import tessera_faults.plugin
import tessera_riscv.plugin
import tessera_tensix.plugin
from tessera.errors import UnhandledTrap
from tessera.loaders import load_program
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_faults.targets import resolve, targets_of
from tessera_tensix import cfgregs
from tessera_tensix.fault_targets import FIFO_SLOTS

NOP = 0x0200_0000


def host() -> PluginHost:
    h = PluginHost(load_entry_points=False, use_environment=False)
    for module, name in ((tessera_tensix.plugin, "tensix"), (tessera_riscv.plugin, "riscv"),
                         (tessera_faults.plugin, "faults")):
        h.register(module, name)
    return h


def direct() -> Machine:
    h = host()
    return Machine(h.architecture("tensix"), host=h)


def ttinsn(word: int) -> str:
    return f".word {((word << 2) | (word >> 30)) & 0xFFFF_FFFF:#x}\n"


def tile(tmp_path, trisc0: str) -> Machine:
    path = manifest(tmp_path, "bh", {"brisc": boot_bh(0) + EXIT, "trisc0": trisc0})
    m = Machine(arch_of("bh"), host=host())
    load_program(m, str(path))
    return m


def test_config_targets_have_the_register_maps_sizes():
    m = direct()
    core = m.ext["tensix"]
    rmap = cfgregs.register_map(core.chip)
    targets = targets_of(m)
    cfg = targets["cfg"]
    assert (cfg.shape, cfg.bits, cfg.agent) == ((2, rmap.cfg_words), 32, None)
    # bank 1's global registers are bank 0's: listed once
    assert cfg.exclude == frozenset(rmap.cfg_words + i for i in range(rmap.global_base, rmap.cfg_words))
    for thread in core.threads:
        tcfg = targets[f"{thread.name}.tcfg"]
        assert (tcfg.shape, tcfg.bits, tcfg.agent) == ((rmap.tcfg_words,), 16, thread.name)
    assert not any(name.endswith(".fifo") for name in targets)      # direct mode has no FIFOs


def test_writing_config_entries_changes_the_live_registers_without_write_effects():
    m = direct()
    core = m.ext["tensix"]
    rmap = cfgregs.register_map(core.chip)
    index = next(i for n, i in rmap.cfg_index.items() if i < rmap.global_base and n != "STATE_RESET_EN")
    entry = resolve(m, f"cfg[1,{index}]")
    entry.target.write(entry.index, 0xFFFF_FFFF)
    assert cfgregs.read_cfg(core, 1, index) == 0xFFFF_FFFF == entry.target.read(entry.index)
    assert cfgregs.read_cfg(core, 0, index) == 0                   # bank 0 untouched
    reset = rmap.cfg_index["STATE_RESET_EN"]
    entry.target.write(1 * rmap.cfg_words + reset, 0xFFFF_FFFF)     # a WRCFG here would zero bank 1
    assert cfgregs.read_cfg(core, 1, index) == 0xFFFF_FFFF
    thread = core.threads[0]
    tcfg = resolve(m, "t0.tcfg[3]")
    tcfg.target.write(tcfg.index, 0xBEEF)
    assert cfgregs.read_tcfg(thread, 3) == 0xBEEF == tcfg.target.read(tcfg.index)


def test_fifo_targets_write_queued_instructions_and_ignore_empty_slots(tmp_path):
    m = tile(tmp_path, EXIT)
    targets = targets_of(m)
    fifos = m.ext["tensix_tile"].fifos
    for fifo in fifos:
        target = targets[f"{fifo.thread.name}.fifo"]
        assert (target.entries, target.bits, target.agent) == (FIFO_SLOTS, 32, fifo.thread.name)
    fifo, target = fifos[0], targets["t0.fifo"]
    fifo.push(m.agent("trisc0"), NOP, 0x8000)
    fifo.push(m.agent("trisc0"), NOP, 0x8004)
    target.write(1, 0x1234_5678)
    assert list(fifo.items) == [(NOP, 0x8000, "trisc0"), (0x1234_5678, 0x8004, "trisc0")]
    target.write(5, 0xFFFF_FFFF)                                     # no instruction there: no change
    assert len(fifo) == 2 and target.read(5) == 0
    assert target.snapshot() == [NOP, 0x1234_5678] + [0] * (FIFO_SLOTS - 2)


def test_a_zeroed_queued_instruction_is_issued_as_the_all_zero_word(tmp_path):
    program = ttinsn(NOP) * 10 + EXIT
    tile(tmp_path, program).run(max_steps=100_000)                  # clean: ten NOPs, no trap
    m = tile(tmp_path, program)
    # before trisc0's 7th push, the first NOP it pushed is still queued for T0
    record = tessera_faults.inject(m, "target=t0.fifo[0],model=zero,at=pc:0x8018@trisc0")
    with pytest.raises(UnhandledTrap, match="all-zero word"):
        m.run(max_steps=100_000)
    assert (record["status"], record["old"], record["new"]) == ("injected", NOP, 0)
