"""The generated table modules are current, and the generator reads its inputs right."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from tensix_table_support import ARCHS, shared

from tessera_tensix.isa import tables
from tessera_tensix.timing import TIMING, timing_class

TOOL = Path(__file__).resolve().parents[1] / "tools" / "gen_tables.py"
DATA = Path(__file__).resolve().parents[1] / "src" / "tessera_tensix" / "data"


def _gen():
    spec = importlib.util.spec_from_file_location("tensix_gen_tables", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("chip", ["bh", "wh"])
def test_table_generated_module_is_up_to_date(chip):
    gen = _gen()
    table = gen.build(shared(), chip)
    assert gen.target(chip).read_text(encoding="utf-8") == gen.render(chip, table, shared()), \
        "run: python arch_tensix/tools/gen_tables.py"


@pytest.mark.parametrize("chip, yaml_dir, count", [("bh", "blackhole", 137), ("wh", "wormhole_b0", 128)])
def test_table_yaml_reader_matches_the_json_opcodes(chip, yaml_dir, count):
    gen = _gen()
    yml = gen.read_assembly_yaml(shared("reference", "tt-llk", yaml_dir, "assembly.yaml"))
    js = json.loads(shared("reference", "ttsim", chip, "tensix_isa.json").read_text())
    assert len(yml) == count and set(yml) == set(js)
    assert {n: y["op_binary"] for n, y in yml.items()} == {n: j["opcode"] for n, j in js.items()}
    assert [a["name"] for a in yml["SFPSTORE"]["arguments"]] == \
        ["dest_reg_addr", "sfpu_addr_mode", "instr_mod0", "lreg_ind"]       # through a YAML alias
    assert all("start_bit" in a for y in yml.values() for a in y["arguments"])
    try:
        import yaml
    except ImportError:
        return
    ref = yaml.safe_load(shared("reference", "tt-llk", yaml_dir, "assembly.yaml").read_text())
    for name, rec in ref.items():
        assert [(a["name"], a["start_bit"]) for a in rec.get("arguments") or []] == \
            [(a["name"], a["start_bit"]) for a in yml[name]["arguments"]], name


def test_table_snake_case_names_match_the_json_where_both_exist():
    gen = _gen()
    assert gen.snake("OpARegIndex") == "op_a_reg_index"
    assert gen.snake("AutoIncContextID") == "auto_inc_context_id"
    assert gen.snake("reset srca gate control") == "reset_srca_gate_control"
    assert gen.snake("Ch0_X") == "ch0_x"
    assert gen.mnemonic_of("SFP_STOCH_RND") == "sfpstochrnd"
    assert gen.mnemonic_of("MOP_CFG") == "ttmopcfg"
    assert gen.mnemonic_of("UNPACR_NOP") == "ttunpacrnop"


def test_table_licences_of_the_derived_data_are_shipped():
    for name, text in (("LICENSE.tt-llk", "Apache License"), ("LICENSE.ttsim", "Apache License"),
                       ("NOTICE.ttsim", "Tenstorrent")):
        assert text in (DATA / name).read_text(encoding="utf-8")
    head = (Path(__file__).resolve().parents[1] / "src" / "tessera_tensix" / "isa" / "_bh.py").read_text()
    assert "GENERATED" in head and "LICENSE.tt-llk" in head


def test_table_package_does_not_read_shared_at_run_time():
    src = Path(__file__).resolve().parents[1] / "src" / "tessera_tensix" / "isa"
    for path in src.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "open(" not in text and "read_text" not in text and "SHARED" not in text, path


def test_table_timing_classes():
    assert {"default", "sfpu1", "sfpu2", "scalar", "sync", "end"} <= set(TIMING)
    assert (TIMING["sfpu1"], TIMING["sfpu2"], TIMING["scalar"], TIMING["end"]) == (1, 2, 3, 1)
    assert min(TIMING.values()) >= 1
    assert timing_class("SFPMAD", "SFPU") == "sfpu2" and timing_class("SFPLOAD", "SFPU") == "sfpu1"
    assert timing_class("ADDDMAREG", "THCON") == "scalar" and timing_class("STALLWAIT", "SYNC") == "sync"
    assert timing_class("MVMUL", "MATH") == "default"
    cycles = {e.mnemonic: ARCHS["bh"].cycles(e) for e in tables("bh").encodings}
    assert (cycles["sfpmad"], cycles["sfplutfp32"], cycles["sfpswap"], cycles["sfpload"]) == (2, 2, 2, 1)
    assert (cycles["ttadddmareg"], cycles["ttsetdmareg"], cycles["end"]) == (3, 3, 1)


def test_table_docs_show_the_current_syntax_table():
    from tensix_table_support import syntax_rows

    docs = Path(__file__).resolve().parents[2] / "docs" / "tensix.md"
    if not docs.exists():
        pytest.skip("docs/ is not beside the plugin")
    text = docs.read_text(encoding="utf-8")
    rows = syntax_rows()
    assert len(rows) == 51
    missing = [row for row in rows if row not in text]
    assert missing == []
