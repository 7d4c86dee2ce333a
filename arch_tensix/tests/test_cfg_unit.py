"""The Configuration Unit (SETC16, WRCFG, RDCFG, RMWCIB, CFGSHIFTMASK, STREAMWRCFG) and the
register map it addresses configuration with (ConfigurationUnit.md, BackendConfiguration.md).

Field positions used as expectations are those of the vendor's ``cfg_defines.h`` (e.g.
register 0 = ALU_FORMAT_SPEC_REG: SrcA_val [3:0], SrcA_override [4], SrcB_val [8:5],
SrcB_override [9], Dstacc_val [13:10], Dstacc_override [14] on both chips)."""

from __future__ import annotations

import importlib.util
import json
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from tensix_unit_support import (
    CFGSHIFTMASK,
    CHIPS,
    M32,
    RDCFG,
    RMWCIB,
    SETC16,
    STREAMWRCFG,
    WRCFG,
    Thread,
    execute,
    machine,
    set_gpr,
)

from tessera.control import Trap
from tessera_tensix import cfgregs
from tessera_tensix.sfpu_state import SfpuState

TOOL = Path(__file__).resolve().parents[1] / "tools" / "gen_config_registers.py"
SHARED = Path(__file__).resolve().parents[3] / "shared"

#: CFG_STATE_SIZE*4, THD_STATE_SIZE, THCON_CFGREG_BASE_ADDR32, GLOBAL_CFGREG_BASE_ADDR32
#: of tt-metal's cfg_defines.h for each chip
SECTIONS = {"wh": (47 * 4, 57, 52, 152), "bh": (56 * 4, 68, 64, 180)}
#: PRNG_SEED_Seed_Val_ADDR32, ADDR_MOD_AB_SEC0_SrcAIncr_ADDR32 (ThreadConfig),
#: SRCA_SET_SetOvrdWithAddr_ADDR32 (ThreadConfig)
ADDR = {"wh": (164, 7, 3), "bh": (186, 12, 5)}


def alu_format_fields(word: int) -> dict[str, int]:
    return {"ALU_FORMAT_SPEC_REG_SrcA_val": word & 0xF, "ALU_FORMAT_SPEC_REG_SrcA_override": word >> 4 & 1,
            "ALU_FORMAT_SPEC_REG_SrcB_val": word >> 5 & 0xF, "ALU_FORMAT_SPEC_REG_SrcB_override": word >> 9 & 1,
            "ALU_FORMAT_SPEC_REG_Dstacc_val": word >> 10 & 0xF,
            "ALU_FORMAT_SPEC_REG_Dstacc_override": word >> 14 & 1}


# ---------------------------------------------------------------- the register map
@pytest.mark.parametrize("chip", CHIPS)
def test_register_map_sections_match_cfg_defines(chip):
    rmap = cfgregs.register_map(chip)
    assert (rmap.cfg_words, rmap.tcfg_words, rmap.thcon_base, rmap.global_base) == SECTIONS[chip]
    assert [f[0] for f in rmap.cfg[0]] == list(alu_format_fields(0))
    assert rmap.cfg[4] == (("STATE_RESET_EN", 0, 1),)
    assert rmap.cfg[ADDR[chip][0]] == (("PRNG_SEED_Seed_Val", 0, M32),)


@pytest.mark.parametrize("chip", CHIPS)
def test_register_map_agrees_with_the_field_widths(chip):
    """Every field of config_fields.json (the widths --set checks) is at exactly one index."""
    widths = json.loads(resources.files("tessera_tensix").joinpath("data", "config_fields.json")
                        .read_text())[chip]
    rmap = cfgregs.register_map(chip)
    for section, regs in (("cfg", rmap.cfg), ("tcfg", rmap.tcfg)):
        seen = {name: (mask + 1).bit_length() - 1 for fields in regs for name, _shift, mask in fields}
        assert seen == widths[section]


@pytest.mark.skipif(not (SHARED / "reference" / "ttsim").exists(), reason="shared/reference not present")
def test_committed_register_map_is_current():
    spec = importlib.util.spec_from_file_location("gen_config_registers", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.main(["--check", "--shared", str(SHARED)]) == 0


# ---------------------------------------------------------------- WRCFG / RDCFG
@pytest.mark.parametrize("chip", CHIPS)
def test_wrcfg_splits_the_word_into_fields_and_rdcfg_joins_them(chip):
    t = Thread(chip)
    word = 0xC0DE_5A5B
    t.gpr[9] = word
    execute(t, WRCFG(9, 0, 0))
    assert {k: t.core.cfg.get(k) for k in alu_format_fields(0)} == alu_format_fields(word)
    execute(t, RDCFG(10, 0))
    assert t.gpr[10] == word                       # bits no field covers read back too
    t.core.cfg.set("ALU_FORMAT_SPEC_REG_SrcB_val", 0x3)   # as a unit or --set would
    execute(t, RDCFG(11, 0))
    assert t.gpr[11] == (word & ~(0xF << 5)) | 3 << 5


@pytest.mark.parametrize("chip", CHIPS)
def test_wrcfg_128_bit_aligns_register_and_gprs(chip):
    t = Thread(chip)
    t.gpr[4:8] = [0x1111_0001, 0x2222_0002, 0x3333_0003, 0x4444_0004]
    t.gpr[8] = 0xFFFF_FFFF
    execute(t, WRCFG(7, 1, 38))                    # GPRs 4..7 -> registers 36..39
    for i in range(4):
        execute(t, RDCFG(20 + i, 36 + i))
    assert t.gpr[20:24] == [0x1111_0001, 0x2222_0002, 0x3333_0003, 0x4444_0004]
    execute(t, RDCFG(24, 40))
    assert t.gpr[24] == 0


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("byte", range(4))
def test_rmwcib_replaces_masked_bits_of_one_byte(chip, byte):
    t = Thread(chip)
    t.gpr[1] = 0x89AB_CDEF
    execute(t, WRCFG(1, 0, 40), RMWCIB(byte, 0x3C, 0xA5, 40), RDCFG(2, 40))
    old = 0x89AB_CDEF >> 8 * byte & 0xFF
    new = (old & ~0x3C) | (0xA5 & 0x3C)
    assert t.gpr[2] == (0x89AB_CDEF & ~(0xFF << 8 * byte)) | new << 8 * byte


@pytest.mark.parametrize("chip", CHIPS)
def test_a_write_to_state_reset_en_zeroes_the_bank_below_the_global_registers(chip):
    t = Thread(chip)
    glob = SECTIONS[chip][3]
    t.gpr[1] = 0x1234_5678
    t.gpr[2] = 1
    execute(t, WRCFG(1, 0, 0), WRCFG(1, 0, 60), WRCFG(1, 0, glob), RMWCIB(0, 1, 1, 4))
    execute(t, RDCFG(3, 0))
    assert t.gpr[3] == 0x1234_5678                 # RMWCIB does not trigger the reset
    execute(t, WRCFG(2, 0, 4))
    for reg, index in ((3, 0), (4, 4), (5, 60), (6, glob)):
        execute(t, RDCFG(reg, index))
    assert t.gpr[3:7] == [0, 0, 0, 0x1234_5678]    # the global register survives
    assert "ALU_FORMAT_SPEC_REG_SrcA_val" not in t.core.cfg.state()


@pytest.mark.parametrize("chip", CHIPS)
def test_writing_the_prng_seed_reseeds_the_vector_unit(chip):
    t = Thread(chip)
    t.gpr[1] = 0xC0FFEE
    before = t.core.sfpu.prng.copy()
    execute(t, WRCFG(1, 0, ADDR[chip][0]))
    from tessera_tensix.semantics.convert import seed_prng

    want = SfpuState()
    seed_prng(want, 0xC0FFEE)
    assert np.array_equal(t.core.sfpu.prng, want.prng) and not np.array_equal(before, want.prng)


# ---------------------------------------------------------------- the two Config banks
@pytest.mark.parametrize("chip", CHIPS)
def test_state_id_selects_the_bank_and_global_registers_are_shared(chip):
    t0 = Thread(chip)
    t1 = Thread(chip, tid=1, core=t0.core)
    glob = SECTIONS[chip][3]
    t0.gpr[1], t1.gpr[1] = 0x0000_0111, 0x0000_2222
    execute(t1, SETC16(0, 1))                      # CFG_STATE_ID_StateID of T1 = 1
    assert t1.tcfg.get("CFG_STATE_ID_StateID") == 1 and t0.tcfg.get("CFG_STATE_ID_StateID") == 0
    execute(t0, WRCFG(1, 0, 0))
    execute(t1, WRCFG(1, 0, 0), WRCFG(1, 0, glob))
    execute(t0, RDCFG(2, 0), RDCFG(3, glob))
    execute(t1, RDCFG(2, 0))
    assert (t0.gpr[2], t1.gpr[2], t0.gpr[3]) == (0x111, 0x2222, 0x2222)
    assert t0.core.cfg.get("ALU_FORMAT_SPEC_REG_SrcA_val") == 1       # bank 0 untouched by T1
    view = cfgregs.config_for(t1)
    assert view.get("ALU_FORMAT_SPEC_REG_SrcA_val") == 2
    assert view.get("DEST_TARGET_REG_CFG_PACK_SEC0_Offset") == 0x222
    assert view.fields["ALU_FORMAT_SPEC_REG_SrcB_val"] == 0x2222 >> 5 & 0xF
    assert cfgregs.config_for(t0) is t0.core.cfg


# ---------------------------------------------------------------- SETC16
@pytest.mark.parametrize("chip", CHIPS)
def test_setc16_splits_the_value_into_the_issuing_threads_fields(chip):
    t0 = Thread(chip)
    t1 = Thread(chip, tid=1, core=t0.core)
    index = ADDR[chip][1]                          # ADDR_MOD_AB_SEC0: SrcAIncr [5:0], SrcACR [6],
    execute(t1, SETC16(index, 0xB6E5))             # SrcAClear [7], SrcBIncr [13:8], SrcBCR [14], SrcBClear [15]
    got = {k: t1.tcfg.get("ADDR_MOD_AB_SEC0_" + k)
           for k in ("SrcAIncr", "SrcACR", "SrcAClear", "SrcBIncr", "SrcBCR", "SrcBClear")}
    assert got == {"SrcAIncr": 0x25, "SrcACR": 1, "SrcAClear": 1, "SrcBIncr": 0x36, "SrcBCR": 0,
                   "SrcBClear": 1}
    assert t0.tcfg.state() == {}
    assert cfgregs.read_tcfg(t1, index) == 0xB6E5
    execute(t1, SETC16(ADDR[chip][2], 0xFFFF))     # SRCA_SET: Base [1:0], SetOvrdWithAddr [2] ...
    assert t1.tcfg.get("SRCA_SET_SetOvrdWithAddr") == 1
    assert cfgregs.read_tcfg(t1, ADDR[chip][2]) == 0xFFFF   # unnamed bits are kept


@pytest.mark.parametrize("chip", CHIPS)
def test_setc16_context_count_reset_bits_reset_the_threads_unpacker_counters(chip):
    from tessera_tensix.unpack import unpackers

    t = Thread(chip, tid=2)
    rmap = cfgregs.register_map(chip)
    index = rmap.tcfg_index["UNPACK_MISC_CFG_CfgContextCntReset_0"]
    shifts = {name: shift for name, shift, _mask in rmap.tcfg[index]}
    counters = unpackers(t.core).context_counter
    counters[0][:] = [3, 3, 3]
    counters[1][:] = [5, 5, 5]
    execute(t, SETC16(index, 1 << shifts["UNPACK_MISC_CFG_CfgContextCntReset_1"]))
    assert counters == [[3, 3, 3], [5, 5, 0]]      # unpacker 1 of thread 2 only
    execute(t, SETC16(index, 1 << shifts["UNPACK_MISC_CFG_CfgContextCntReset_0"]))
    assert counters == [[3, 3, 0], [5, 5, 0]]
    counters[1][2] = 4
    execute(t, SETC16(index, 0))
    assert counters == [[3, 3, 0], [5, 5, 4]]      # a zero bit resets nothing


# ---------------------------------------------------------------- out of range
@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("kind", ["SETC16", "WRCFG", "RDCFG", "RMWCIB"])
def test_out_of_range_indices_break_the_rule(chip, kind):
    cfg_words, tcfg_words = SECTIONS[chip][:2]
    word = {"SETC16": SETC16(tcfg_words, 7), "WRCFG": WRCFG(1, 0, cfg_words),
            "RDCFG": RDCFG(1, cfg_words + 5), "RMWCIB": RMWCIB(2, 0xFF, 0xFF, cfg_words)}[kind]
    t = Thread(chip)
    t.gpr[1] = 0x55
    with pytest.raises(Trap, match="out of range"):
        execute(t, word)
    lenient = Thread(chip, lenient=True)
    lenient.gpr[1] = 0x55
    execute(lenient, word)
    assert lenient.gpr[1] == 0x55 and lenient.tcfg.state() == {} and lenient.core.cfg.state() == {}


# ---------------------------------------------------------------- Blackhole only
def rotr(x: int, n: int) -> int:
    return ((x >> n) | (x << (32 - n))) & M32 if n else x


@pytest.mark.parametrize("alu", range(8))
@pytest.mark.parametrize("mask_mode, width, rotate", [(0, 7, 4), (1, 11, 0), (0, 31, 31), (1, 0, 9)])
def test_cfgshiftmask(alu, mask_mode, width, rotate):
    t = Thread("bh", tid=1)
    scratch = 0x9E37_79B9
    t.core.cfg.set("SCRATCH_SEC1_val", scratch)
    t.gpr[1] = 0x1357_9BDF
    execute(t, WRCFG(1, 0, 70), CFGSHIFTMASK(mask_mode, alu, width, rotate, 3, 70), RDCFG(2, 70))
    mask = (2 << width) - 1 & M32
    s = rotr(scratch & mask, rotate)
    c = 0x1357_9BDF if mask_mode else 0x1357_9BDF & ~rotr(mask, rotate) & M32
    want = [c | s, c & s, c ^ s, c + s, c | ~s, c & ~s, c ^ ~s, c - s][alu] & M32
    assert t.gpr[2] == want


def test_streamwrcfg_stops_naming_the_stream_register():
    t = Thread("bh")
    t.tcfg.set("STREAM_ID_SYNC_SEC2_BankSel", 13)
    with pytest.raises(Trap, match="NoC overlay stream 13 register 517"):
        execute(t, STREAMWRCFG(2, 517, 8))


def test_wormhole_has_no_cfgshiftmask():
    with pytest.raises(Trap):
        execute(Thread("wh"), CFGSHIFTMASK(0, 0, 3, 0, 0, 8))


# ---------------------------------------------------------------- through the engine
@pytest.mark.parametrize("chip", CHIPS)
def test_configuration_kernel_on_the_machine(chip):
    glob = SECTIONS[chip][3]
    kernel = [*set_gpr(1, 0x0000_4C21), WRCFG(1, 0, 0), RMWCIB(1, 0xFF, 0x7F, 0), RDCFG(2, 0),
              SETC16(ADDR[chip][1], 0x0102), *set_gpr(3, 0xABCD), WRCFG(3, 0, glob), SETC16(0, 1),
              RDCFG(4, glob), RDCFG(5, 0)]
    m = machine(chip, kernel)
    assert m.run(max_steps=500).exit_code == 0
    t = m.agent("t0")
    assert t.gpr[2] == 0x0000_7F21 and t.gpr[4] == 0xABCD and t.gpr[5] == 0   # bank 1 of register 0 is 0
    assert t.core.cfg.get("ALU_FORMAT_SPEC_REG_SrcA_val") == 1
    assert t.core.cfg.get("ALU_FORMAT_SPEC_REG_SrcB_val") == 0x7F21 >> 5 & 0xF
    assert t.tcfg.get("ADDR_MOD_AB_SEC0_SrcAIncr") == 2 and t.tcfg.get("ADDR_MOD_AB_SEC0_SrcBIncr") == 1
