"""Tables, settings, the board, the documentation of every setting, snapshots and both engines."""

from __future__ import annotations

from pathlib import Path

import pytest
from tile_support import EXIT, RAM, machine

from tessera.errors import ConfigError, UnhandledTrap
from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera_tile import TILE, make_tile_arch
from tessera_tile.config import TileConfig, schema
from tessera_tile.tables import builtin, load_overrides

DOC = Path(__file__).resolve().parents[2] / "docs" / "tile.md"


def test_every_setting_is_documented_with_its_default():
    rows = {line.split("|")[1].strip(): line for line in DOC.read_text(encoding="utf-8").splitlines()
            if line.startswith("| `tile.")}
    for key, entry in schema().items():
        row = rows.get(f"`tile.{key}`")
        assert row is not None, f"docs/tile.md does not list tile.{key}"
        default = entry["default"]
        spellings = {str(default).lower(), hex(default)} if isinstance(default, int) else {str(default)}
        assert any(f"`{s}`" in row for s in spellings) or default == "", f"tile.{key}: default not in {row}"
    assert len(schema()) >= 50


def test_settings_defaults_and_refusals():
    cfg = TileConfig.from_mapping({})
    assert (cfg.tile_bytes, cfg.row_bytes, cfg.granule, cfg.num_tiles, cfg.vlen) == (1024, 64, 32, 256, 512)
    assert TileConfig.from_mapping({"tile.shmem_bytes": "64K"}).shmem_bytes == 65536
    for bad, message in (({"tile.mode": "fast"}, "must be one of eager, checker, timed"),
                         ({"tile.multicast": "mask"}, "only 'cluster' is implemented"),
                         ({"tile.threads_per_pe": 9}, r"threads_per_pe=9 is out of range \(1\.\.8"),
                         ({"tile.strict_reserved": "maybe"}, "must be true or false"),
                         ({"tile.tile_bytes": 1000}, "tile_bytes must be a multiple")):
        with pytest.raises(ConfigError, match=message):
            TileConfig.from_mapping(bad)


def test_board_geometry():
    m = Machine(TILE, config={"ram": RAM, "echo": False, "tile.threads_per_pe": 2, "tile.pes_per_cluster": 2,
                              "tile.clusters": 2})
    harts = [a.name for a in m.cpus]
    assert harts == [f"hart{i}" for i in range(8)]
    t = m.tile.threads["hart5"]
    assert (t.tid, t.pe.index, t.pe.local, t.cluster.index) == (1, 2, 0, 1)
    assert m.agent("hart5").hartid == 5 and m.agent("hart5").x[2] == m.agent("hart0").x[2] - 5 * 0x10000
    assert sorted(m.spaces) == ["cluster0.l2b", "cluster1.l2b", "main", "pe0.shmem", "pe1.shmem", "pe2.shmem",
                                "pe3.shmem"]
    assert {a.name for a in m.agents if a.kind == "engine"} >= {"hart7.lsu", "hart7.tma", "hart7.mma", "hart7.alu"}


def test_tables_validate_and_can_be_overridden(tmp_path):
    t = builtin()
    for layout in t.layouts.values():
        assert layout.reserved & ~t.payload_mask == 0
    path = tmp_path / "real.toml"
    path.write_text('[encoding.tuop]\ntalu = 4\n[codes.atomic]\nadd = 0b11111\n')
    moved = load_overrides(str(path))
    assert moved.code("atomic", "add") == 0b11111 and builtin().code("atomic", "add") == 0
    path.write_text('[encoding.layouts."W1.mem".fields]\ntd = "30:22"\n')
    with pytest.raises(ConfigError, match="layout W1.mem: field .* overlaps"):
        load_overrides(str(path))
    path.write_text("[nonsense]\n")
    with pytest.raises(ConfigError, match="unknown section"):
        load_overrides(str(path))


def test_a_machine_can_decode_with_other_tables(tmp_path):
    # swap the atomic op codes of ADD and SWAP: the same words now do the other operation
    path = tmp_path / "swap.toml"
    path.write_text("[codes.atomic]\nadd = 0b00001\nswap = 0b00000\n")
    src = f"_start:\n        li a0, 0x40\n        li a1, 5\n        tsamo.add a2, a1, (a0), ew=64\n" \
          f"        tsamo.add a2, a1, (a0), ew=64\n{EXIT}"
    m = machine(src, config={"tile.tables": str(path)})
    m.run(max_steps=100)
    assert m.tile.pes[0].shmem.read(0x40, 8) == 5          # swap, swap (the assembler wrote add = 0)
    m = machine(src)
    m.run(max_steps=100)
    assert m.tile.pes[0].shmem.read(0x40, 8) == 10


def test_mma_b_register_can_move_with_a_tables_file(tmp_path):
    src = f"_start:\n        li a0, 0x1000\n        .ace W1.mma.mma_t{{td=0, ts1=1, memmatb=1}}\n" \
          f"        .ace W0.mma_m{{rs2=10, mmauop=9}}\n{EXIT}"        # rs2 at [27:23]
    assert machine(src).run(max_steps=100).reason == "halted"
    path = tmp_path / "rs2.toml"
    path.write_text('[encoding.layouts."W0.mma_m".fields]\nrs2 = "30:26"\n')
    with pytest.raises(UnhandledTrap, match=r"reserved bits 0x01000000 set in the W0 \(W0.mma_m\)"):
        machine(src, config={"tile.tables": str(path)}).run(max_steps=100)


def test_other_opcodes():
    arch = make_tile_arch("tile-ace4", opcodes=("custom-0", "custom-3"))
    m = machine(f"_start:\n        .ace W1.tcsr.csrr{{csr=48, rd=10, op=custom-0}}\n{EXIT}", arch=arch,
                config={"tile.opcodes": "custom-0,custom-3"})
    m.run(max_steps=100)
    assert m.agent("hart0").exit_code == 0
    program = assemble(arch, "tcsrr a0, tid")
    assert program.segments[0][1][0] & 0x7F == 0x7B


def _snapshot_equivalence(source: str, config: dict, engine: str) -> None:
    ref = machine(source, config=config, engine=engine)
    ref.run(max_steps=100_000)
    half = machine(source, config=config, engine=engine)
    half.run(max_steps=ref.total_steps // 2, raise_on_budget=False)
    again = Machine.restore(half.snapshot())
    again.set_engine(engine)
    again.run(max_steps=100_000)
    assert again.state_hash() == ref.state_hash()
    assert [r.pc for r in again.tile.races] == [r.pc for r in ref.tile.races]


@pytest.mark.parametrize("engine", ["fast", "step"])
def test_examples_run_on_both_engines_and_snapshot_in_timed_mode(engine):
    from tessera_tile.examples import matmul_source

    for ex in TILE.examples:
        m = Machine(TILE, engine=engine, config={"ram": 1 << 20, "echo": False, "tile.threads_per_pe": 2})
        program = assemble(TILE, ex.source, base=ex.load_address)
        for address, blob in program.segments:
            m.space.write_bytes(address, blob)
        m.symbols.update(program.symbols)
        m.set_entry(ex.load_address)
        assert ex.check(m, m.run(max_steps=ex.max_steps)) is None
    _snapshot_equivalence(matmul_source(), {"tile.threads_per_pe": 2, "tile.mode": "timed"}, engine)
