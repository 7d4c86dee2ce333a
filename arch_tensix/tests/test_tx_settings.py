"""Tensix settings: threads bounded by the hardware, cfg.*/tcfg.* checked against the register map."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tessera.cli.main import main
from tessera.errors import ConfigError
from tessera.machine import Machine
from tessera_tensix.arch import TENSIX_BH, TENSIX_WH
from tessera_tensix.config import MAX_THREADS, field_widths

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "tensix.md"
#: The project's reference data (not shipped with a clone): the source of config_fields.json.
REFERENCE = Path("/work/shared/reference/ttsim")
#: Fields the semantics read (addressing.py, semantics/dest_ops.py, board.py).
READ_BY_THE_SEMANTICS = {
    "cfg": ["DEST_REGW_BASE_Base", "DEST_SP_BASE_Base", "DEST_ACCESS_CFG_remap_addrs",
            "DEST_ACCESS_CFG_swizzle_32b", "DEST_ACCESS_CFG_zeroacc_absolute_tile_mode",
            "ALU_ACC_CTRL_SFPU_Fp32_enabled", "ALU_ACC_CTRL_Fp32_enabled", "ALU_ACC_CTRL_INT8_math_enabled",
            "ALU_FORMAT_SPEC_REG_SrcB_override", "ALU_FORMAT_SPEC_REG_SrcB_val", "ALU_FORMAT_SPEC_REG1_SrcB",
            "PRNG_SEED_Seed_Val"],
    "tcfg": ["DEST_TARGET_REG_CFG_MATH_Offset", "SFPU_STACK_Incr", "ADDR_MOD_SET_Base", "SFPU_DEST_FMT_Enable",
             "SFPU_DEST_FMT_Base", "ADDR_MOD_DST_SEC1_DestIncr"],
}


@pytest.mark.parametrize("arch", [TENSIX_BH, TENSIX_WH], ids=["bh", "wh"])
def test_threads_are_bounded_by_the_three_tensix_threads(arch):
    assert MAX_THREADS == 3
    m = Machine(arch, config={"threads": "3"})
    assert [a.name for a in m.agents if a.name.startswith("t")] == ["t0", "t1", "t2"]
    for bad in (0, 4, 1_000_000):
        with pytest.raises(ConfigError, match=rf"Tensix setting threads={bad} is out of range \(1\.\.3: "):
            Machine(arch, config={"threads": bad})


def test_presets_reach_the_config_spaces_typed():
    m = Machine(TENSIX_BH, config={"cfg.DEST_REGW_BASE_Base": "0x40", "tcfg.ADDR_MOD_DST_SEC1_DestIncr": "2",
                                   "threads": 2})
    assert m.tensix.cfg.get("DEST_REGW_BASE_Base") == 64
    assert [m.agent(t).tcfg.get("ADDR_MOD_DST_SEC1_DestIncr") for t in ("t0", "t1")] == [2, 2]


@pytest.mark.parametrize(("arch", "config", "message"), [
    (TENSIX_BH, {"cfg.NOPE": 1}, "unknown Tensix backend-config field 'cfg.NOPE': not in the Blackhole"),
    (TENSIX_BH, {"tcfg.NOPE": 1}, "unknown Tensix thread-config field 'tcfg.NOPE'"),
    (TENSIX_WH, {"cfg.NOPE": 1}, "not in the Wormhole B0 register map"),
    (TENSIX_BH, {"cfg.DEST_REGW_BASE_Bas": 1}, r"did you mean cfg\.DEST_REGW_BASE_Base\?"),
    (TENSIX_BH, {"tcfg.ADDR_MOD_SET_Base": 1}, r"\(it is a Wormhole B0 field\)"),
    (TENSIX_BH, {"cfg.DEST_REGW_BASE_Base": 99999999999},
     r"cfg\.DEST_REGW_BASE_Base=99999999999 is out of range \(0\.\.65535: a 16-bit field\)"),
    (TENSIX_BH, {"tcfg.DEST_TARGET_REG_CFG_MATH_Offset": 1 << 12}, r"\(0\.\.4095: a 12-bit field\)"),
    (TENSIX_BH, {"cfg.ALU_ACC_CTRL_SFPU_Fp32_enabled": 2}, r"\(0\.\.1: a 1-bit field\)"),
    (TENSIX_BH, {"cfg.DEST_REGW_BASE_Base": -1}, "is out of range"),
    (TENSIX_BH, {"cfg.DEST_REGW_BASE_Base": "lots"}, "takes an integer"),
    (TENSIX_BH, {"cfg.DEST_REGW_BASE_Base": True}, "takes an integer"),
    (TENSIX_BH, {"dest_in": 5}, "dest_in must be a file name"),
    (TENSIX_BH, {"threds": 1}, r"unknown Tensix setting\(s\): threds \(did you mean threads\?"),
])
def test_bad_presets_are_refused(arch, config, message):
    with pytest.raises(ConfigError, match=message):
        Machine(arch, config=config)


def test_the_fields_the_semantics_read_exist():
    for section, names in READ_BY_THE_SEMANTICS.items():
        for name in names:
            assert any(name in field_widths(chip)[section] for chip in ("bh", "wh")), (section, name)


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="the project's reference data is not on this machine")
def test_the_shipped_map_is_the_reference_map():
    for chip in ("bh", "wh"):
        regs = json.loads((REFERENCE / chip / "tensix_regs.json").read_text(encoding="utf-8"))
        for section, key in (("cfg", "cfg"), ("thread_cfg", "tcfg")):
            want = {f["name"]: f["size"] for fields in regs[section].values() for f in fields}
            assert field_widths(chip)[key] == want, (chip, key)


def test_every_setting_is_documented():
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Configuration keys"):]
    section = section[:section.index("\n## ")]
    for s in TENSIX_BH.settings.items:
        assert f"`{s.name}`" in section, f"docs/tensix.md does not list {s.name}"
    for family in TENSIX_BH.settings.families:
        assert f"| `{family.prefix}NAME` |" in section


def test_cli_threads_out_of_range_is_immediate(capsys, monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("TESSERA_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("TESSERA_PLUGINS", "tensix")
    src = tmp_path / "x.s"
    src.write_text("end\n")
    with pytest.raises(SystemExit) as exc:
        main(["run", "--arch", "tensix", str(src), "--set", "threads=1000000"])
    _out, err = capsys.readouterr()
    assert exc.value.code == 64
    assert err.splitlines() == ["tessera: configuration error: Tensix setting threads=1000000 is out of range "
                                "(1..3: a Tensix core has three threads, T0..T2)"]
