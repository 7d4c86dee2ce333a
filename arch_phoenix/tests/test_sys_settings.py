"""rfPhoenix's declared settings: every field of PhoenixConfig, bounded by the spec, documented."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from tessera.errors import ConfigError
from tessera.machine import Machine
from tessera_phoenix.arch import PHOENIX
from tessera_phoenix.config import PhoenixConfig, settings

DOC = Path(__file__).resolve().parents[2] / "docs" / "phoenix.md"
SMALL = {"dram": "1M"}


def test_the_declaration_is_the_config_class():
    declared = PHOENIX.settings
    assert declared is settings()
    assert [s.name for s in declared.items] == [f.name for f in attrs.fields(PhoenixConfig)]
    for s in declared.items:
        assert s.default == attrs.fields_dict(PhoenixConfig)[s.name].default
        assert s.help, f"setting {s.name} has no help text"


@pytest.mark.parametrize(("config", "message"), [
    ({"threads": 17}, r"rfPhoenix setting threads=17 is out of range \(1\.\.16: CR0 has 16 thread-enable bits\)"),
    ({"lanes": 33}, r"lanes=33 is out of range \(1\.\.32: vector masks are 32 bits\)"),
    ({"dram": "1G"}, r"dram=1G is out of range \(1\.\.512M: spec 1\.8: 512 MiB of DRAM\)"),
    ({"time_hz": 0}, r"time_hz=0 is out of range \(1\.\.0x100000000: TIME is a 32-bit CSR\)"),
    ({"reset_cr0": "0x10000"}, r"reset_cr0=65536 is out of range \(0\.\.65535"),
    ({"threds": 2}, r"unknown rfPhoenix setting\(s\): threds \(did you mean threads\?"),
])
def test_out_of_range_is_one_config_error(config, message):
    with pytest.raises(ConfigError, match=message):
        Machine(PHOENIX, config={**SMALL, **config})


def test_values_arrive_typed():
    m = Machine(PHOENIX, config={"dram": "0x100000", "threads": "2", "pma": "off", "time_hz": "1_000"})
    cfg = m.phoenix.config
    assert (cfg.dram, cfg.threads, cfg.pma, cfg.time_hz) == (1 << 20, 2, False, 1000)


def test_every_setting_is_documented():
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Configuration keys"):]
    section = section[:section.index("\n## ")]
    for s in PHOENIX.settings.items:
        assert f"| `{s.name}` |" in section, f"docs/phoenix.md does not list {s.name}"
