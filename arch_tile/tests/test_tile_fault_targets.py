"""The tile extension's state as fault targets (tile.md 9.2): each hart's tile register
file (``hartN.tiles``, or ``peN.tiles`` when a PE shares one) and tile CSRs
(``hartN.tcsr``, 5.4), next to the RISC-V plugin's ``hartN.csr``."""

from __future__ import annotations

from tile_support import EXIT, machine

import tessera_faults
import tessera_faults.plugin
import tessera_riscv.plugin
import tessera_tile.plugin
from tessera.plugins import PluginHost
from tessera_faults.targets import resolve, targets_of
from tessera_tile.exec_control import csr_value


def host() -> PluginHost:
    h = PluginHost(load_entry_points=False, use_environment=False)
    for module, name in ((tessera_tile.plugin, "tile"), (tessera_riscv.plugin, "riscv"),
                         (tessera_faults.plugin, "faults")):
        h.register(module, name)
    return h


def test_every_hart_has_its_tile_file_tile_csrs_and_csrs_once():
    m = machine(EXIT, config={"tile.threads_per_pe": 2}, host=host())
    system = m.ext["tile"]
    cfg = system.cfg
    targets = targets_of(m)                                  # a name supplied twice would raise
    for name in system.threads:
        tiles, tcsr = targets[f"{name}.tiles"], targets[f"{name}.tcsr"]
        assert (tiles.shape, tiles.bits, tiles.agent) == ((cfg.num_tiles, cfg.tile_bytes), 8, name)
        assert set(tcsr.names) == set(system.tables.csr_map()) and tcsr.agent == name
        readonly = {n for n, e in system.tables.csr_map().items() if e["access"] != "rw"}
        assert {tcsr.names[i] for i in tcsr.exclude} == readonly | {"tmode"}
        assert targets[f"{name}.csr"].plugin == "riscv"
    assert [t for t in targets if t.endswith(".csr")] == [f"{n}.csr" for n in system.threads]


def test_a_shared_tile_file_is_one_target_of_its_pe():
    m = machine(EXIT, config={"tile.threads_per_pe": 2, "tile.tile_rf_scope": "pe"}, host=host())
    targets = targets_of(m)
    assert "pe0.tiles" in targets and not any(n.startswith("hart") and n.endswith(".tiles") for n in targets)
    entry = resolve(m, "pe0.tiles[3,5]")
    entry.target.write(entry.index, 0x5A)
    for thread in m.ext["tile"].threads.values():            # both harts see it
        assert thread.tile(3)[5] == 0x5A


def test_writes_reach_the_live_tile_file_and_csrs():
    m = machine(EXIT, host=host())
    thread = m.ext["tile"].threads["hart0"]
    tiles = targets_of(m)["hart0.tiles"]
    assert tiles.read(7) == 0 and thread._tiles is None      # untouched: read without allocating
    entry = resolve(m, "hart0.tiles[2,9]")
    tiles.write(entry.index, 0x1FF)
    assert thread.tile(2)[9] == 0xFF and tiles.read(entry.index) == 0xFF
    mask = resolve(m, "hart0.tmask")                         # a tile CSR, by name
    mask.target.write(mask.index, 0xF0F0)
    assert csr_value(m.ext["tile"], thread, "tmask") == 0xF0F0
    fmt = resolve(m, "hart0.tfmt")
    fmt.target.write(fmt.index, 0xFF)                        # tfmt is 3 bits wide
    assert thread.csr["tfmt"] == 7


PROGRAM = """
        li   t0, 0x30
        tcsrw zero, tmask, t0
        nop
        tcsrr a0, tmask
""" + EXIT


def test_a_fault_in_a_tile_csr_changes_the_exit_status():
    clean = machine(PROGRAM, host=host())
    assert clean.run(max_steps=1000).exit_code == 0x30
    m = machine(PROGRAM, host=host())
    record = tessera_faults.inject(m, "target=hart0.tmask,bit=2,at=step:3")
    assert m.run(max_steps=1000).exit_code == 0x34
    assert record["status"] == "injected" and record["name"] == "hart0.tcsr"
