"""The tile extension's declared settings (ranges from config.toml) and the tables file checks."""

from __future__ import annotations

import os

import pytest

from tessera.cli.main import main
from tessera.errors import ConfigError
from tessera.machine import Machine
from tessera_tile import TILE
from tessera_tile.config import TileConfig, schema, tile_settings

BASE = {"ram": "4M", "echo": False, "tile.threads_per_pe": 1}


def test_the_extension_declares_every_schema_key():
    family = TILE.settings.family_of("tile.vlen")
    assert family is not None and family.closed and family.label == "tile"
    assert [s.name for s in family.settings] == [f"tile.{k}" for k in schema()]
    assert [s.name for s in TILE.settings.items][:2] == ["ram", "syscalls"]  # the RISC-V host's keys
    bounded = {s.name: (s.min, s.max) for s in tile_settings().items if s.kind in ("int", "size")}
    assert all(lo is not None and hi is not None for lo, hi in bounded.values()), bounded
    assert bounded["tile.clusters"] == (1, 64) and bounded["tile.threads_per_pe"] == (1, 8)


@pytest.mark.parametrize(("config", "message"), [
    ({"tile.clusters": 100000}, r"tile setting tile\.clusters=100000 is out of range \(1\.\.64\)"),
    ({"tile.shmem_bytes": "2G"}, r"tile\.shmem_bytes=2G is out of range \(64\.\.1G\)"),
    ({"tile.lat_tma": 0}, r"tile\.lat_tma=0 is out of range \(1\.\."),
    ({"tile.stride_unit": 3}, "stride_unit must be one of 1, 32"),
    ({"tile.talu_ternary_flags": True}, "only False is implemented"),
    ({"tile.nope": 1}, r"unknown tile setting\(s\): tile\.nope \("),
    ({"tile.tables": 5}, r"tile setting tile\.tables must be a file name"),
])
def test_refused_before_the_board_is_built(config, message):
    with pytest.raises(ConfigError, match=message):
        Machine(TILE, config={**BASE, **config})


def test_values_keep_their_spelling_rules():
    cfg = TileConfig.from_mapping({"tile.shmem_bytes": "128K", "tile.opcodes": "CUSTOM-3",
                                   "tile.strict_sequencing": True, "tile.talu_ternary_flags": "no",
                                   "tile.stride_unit": "0x20"})
    assert (cfg.shmem_bytes, cfg.opcode_names, cfg.strict_sequencing, cfg.talu_ternary_flags,
            cfg.stride_unit) == (128 << 10, ["custom-3"], "true", False, 32)


@pytest.mark.parametrize(("content", "message"), [
    (bytes(range(128, 256)), r"tile\.tables: .*rand\.bin is not a UTF-8 text \(TOML\) file: byte 0x80 at "
                             "offset 0 is not UTF-8"),
    (b"x = = 1\n", r"tile\.tables: .*rand\.bin is not TOML"),
    (b"[nope]\n", r"unknown section\(s\) nope"),
])
def test_a_tables_file_that_is_not_toml_is_one_config_error(tmp_path, content, message):
    path = tmp_path / "rand.bin"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=message):
        Machine(TILE, config={**BASE, "tile.tables": str(path)})


def test_cli_binary_tables_file_exits_64(capsys, monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("TESSERA_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("TESSERA_PLUGINS", "riscv,tile")
    (tmp_path / "rand.bin").write_bytes(os.urandom(64) + b"\xff")
    src = tmp_path / "exit.s"
    src.write_text("li a0, 0\nli a7, 93\necall\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["run", "--arch", "tile", str(src), "--set", "ram=4M", "--set", "tile.tables=rand.bin"])
    _out, err = capsys.readouterr()
    assert exc.value.code == 64 and "Traceback" not in err
    (line,) = err.splitlines()
    assert line.startswith("tessera: configuration error: tile.tables: rand.bin is not a UTF-8 text (TOML) file")
