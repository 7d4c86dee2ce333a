"""Golden decode tests: one per printed table row of tile.md sections 5 and Appendix B.

Each word is built here from the *spec's* bit positions (not from the plugin's tables),
so a table that puts a field in the wrong place fails the row it belongs to.  The
expected fields are the tables' names for them.
"""

from __future__ import annotations

import pytest
from tile_support import word

from tessera_tile.tables import builtin

W2, W0 = 0b111, 0b110
TGMEM, TSMEM, TCSR, MMA, TALU, CTRL = 0b000, 0b001, 0b010, 0b011, 0b100, 0b101


def _w1_mem(tuop: int) -> int:      # td=4, tilesize=code 1 (2 regs), rs1=a0
    return word(tuop, {31: 1, (30, 23): 4, (22, 20): 1, (19, 15): 10})


def _w0_mem(memuop: int, lsuop: int, b19_15: int, b24_20: int = 3, offseten: int = 0, tmask: int = 1) -> int:
    return word(W0, {31: offseten, (30, 25): memuop, (24, 20): b24_20, (19, 15): b19_15, 9: tmask,
                     (8, 7): lsuop})


def _w2_index() -> int:             # input data, mode 00, func6 = half store code, vs2 = v2
    return word(W2, {30: 1, (29, 28): 0b00, (25, 20): 0b100011, (11, 7): 2})


LOAD, STORE = 0b000000, 0b001000

ROWS = [
    # 5.1 memory: 12 forms (global/shared x load/store x unit/stride/index)
    *[pytest.param({"W1": _w1_mem(t), "W0": _w0_mem(mu, 0b00, 5)}, f"{d}.{s}.us",
                   {"W1.td": 4, "W1.tilesize": 1, "W1.rs1": 10, "W0.hi5": 5, "W0.lo5": 3, "W0.tmask": 1},
                   id=f"5.1-{d}.{s}.us")
      for t, s in ((TGMEM, "g"), (TSMEM, "s")) for mu, d in ((LOAD, "tld"), (STORE, "tst"))],
    *[pytest.param({"W1": _w1_mem(t), "W0": _w0_mem(mu, 0b01, 7, 11, offseten=1)}, f"{d}.{s}.st",
                   {"W0.rs2": 7, "W0.lo5": 11, "W0.offseten": 1}, id=f"5.1-{d}.{s}.st")
      for t, s in ((TGMEM, "g"), (TSMEM, "s")) for mu, d in ((LOAD, "tld"), (STORE, "tst"))],
    *[pytest.param({"W2": _w2_index(), "W1": _w1_mem(t), "W0": _w0_mem(mu, 0b10, 2)}, f"{d}.{s}.ix",
                   {"W0.vs2": 2, "W2.reg": 2, "W2.func6": 0b100011}, id=f"5.1-{d}.{s}.ix")
      for t, s in ((TGMEM, "g"), (TSMEM, "s")) for mu, d in ((LOAD, "tld"), (STORE, "tst"))],
    # 5.2 scalar atomics (shared), with and without result
    pytest.param({"W1": word(TSMEM, {31: 1, (27, 23): 11, (22, 21): 0b10, (19, 15): 10, 8: 1, 7: 1}),
                  "W0": word(W0, {(30, 25): 0b100000, (19, 15): 12, (8, 7): 0b01})},
                 "tsamo", {"W1.rd": 11, "W1.vec_size": 2, "W1.rs1": 10, "W0.rs2": 12, "W0.memuop": 0b100000},
                 id="5.2-scalar-atomic-result"),
    pytest.param({"W1": word(TSMEM, {31: 1, (22, 21): 0b11, (19, 15): 10, 8: 1}),
                  "W0": word(W0, {31: 1, (30, 25): 0b100101, (24, 20): 13, (19, 15): 12, (8, 7): 0b11})},
                 "tsred", {"W0.cas_en": 1, "W0.lo5": 13, "W1.vec_size": 3}, id="5.2-scalar-atomic-noresult"),
    # 5.2 tile atomics, global and shared
    pytest.param({"W1": word(TGMEM, {31: 1, (30, 23): 9, (22, 21): 0b10, 20: 1, (19, 15): 10}),
                  "W0": word(W0, {(30, 25): 0b100000, (24, 20): 1, (19, 15): 2, 9: 1})},
                 "tamo.g", {"W1.td": 9, "W1.rtn": 1, "W1.vec_size": 2, "W0.hi5": 2, "W0.lo5": 1},
                 id="5.2-tile-atomic-global"),
    pytest.param({"W1": word(TSMEM, {31: 1, (30, 23): 9, (22, 21): 0b01, (19, 15): 10}),
                  "W0": word(W0, {(30, 25): 0b110000})},
                 "tamo.s", {"W1.td": 9, "W1.vec_size": 1, "W0.memuop": 0b110000}, id="5.2-tile-atomic-shared"),
    # 5.3 TMA
    pytest.param({"W2": word(W2, {30: 1, (29, 28): 0b01, (25, 20): 0b100101, (11, 7): 1}),
                  "W1": word(TGMEM, {31: 1, (30, 29): 0, (28, 27): 1, 25: 1, (24, 20): 11, (19, 15): 10,
                                     (11, 10): 0b01, 9: 0, 8: 1}),
                  "W0": word(W0, {31: 1, (30, 25): 0b000001, (24, 20): 13, (19, 15): 1, 10: 1, (8, 7): 0b01})},
                 "tma", {"W1.dim": 1, "W1.srctm": 1, "W1.dst": 11, "W1.src": 10, "W1.dstloc": 1,
                         "W0.completeobj": 13, "W0.multicast": 1, "W0.completion": 1, "W2.reg": 1},
                 id="5.3-tma"),
    # 5.4 TCSR read, TCSRW forms
    pytest.param({"W1": word(TCSR, {30: 1, (24, 20): 0x10, (19, 15): 0x1, (11, 7): 10})}, "tcsrr",
                 {"W1.csr": 0x30, "W1.rd": 10}, id="5.4-tcsr"),
    pytest.param({"W1": word(TCSR, {31: 1, 30: 1, (29, 28): 0b01, (27, 25): 0, (24, 20): 2, (19, 15): 12,
                                    (11, 7): 10})}, "tcsrw", {"W1.csr": 2, "W1.rs1": 12, "W1.rd": 10},
                 id="5.4-tcsrw"),
    pytest.param({"W1": word(TCSR, {31: 1, (29, 28): 0b10, (24, 20): 0, (19, 15): 12})}, "tcsrs",
                 {"W1.csr": 0, "W1.rd_en": 0}, id="5.4-tcsrs"),
    pytest.param({"W1": word(TCSR, {31: 1, (29, 28): 0b11, (24, 20): 4, (19, 15): 12})}, "tcsrc",
                 {"W1.csr": 4, "W1.rs1": 12}, id="5.4-tcsrc"),
    pytest.param({"W1": word(TCSR, {30: 1, (29, 28): 0b01, (24, 20): 5, (19, 15): 1, (11, 7): 10})},
                 "tcsrwi", {"W1.csr": 5, "W1.rs1": 1, "W1.rd_en": 1}, id="5.4-tcsrwi"),
    pytest.param({"W1": word(TCSR, {(29, 28): 0b10, (24, 20): 0, (19, 15): 7})}, "tcsrsi",
                 {"W1.csr": 0, "W1.rs1": 7}, id="5.4-tcsrsi"),
    pytest.param({"W1": word(TCSR, {(29, 28): 0b11, (27, 25): 1, (24, 20): 0, (19, 15): 3})}, "tcsrci",
                 {"W1.csr": 0x20, "W1.rs1": 3}, id="5.4-tcsrci"),
    # 5.5 MMA: tile/tile, tile/mem, mem/tile, mem/mem
    pytest.param({"W1": word(MMA, {(30, 23): 0, (22, 15): 1, 11: 1, 10: 1}),
                  "W0": word(W0, {(30, 23): 2, (22, 18): 0x01, (17, 15): 1, 8: 1, 10: 1})},
                 "tmma.tt", {"W1.td": 0, "W1.ts1": 1, "W1.transmata": 1, "W1.neg1": 1, "W0.ts2": 2,
                             "W0.mmauop": 1, "W0.tilesize": 1, "W0.multitile": 1, "W0.negd": 1},
                 id="5.5-mma-tile-tile"),
    pytest.param({"W1": word(MMA, {(30, 23): 4, (22, 15): 1, 7: 1}),
                  "W0": word(W0, {(27, 23): 13, (22, 18): 0x09})},
                 "tmma.tm", {"W0.rs2": 13, "W0.mmauop": 9}, id="5.5-mma-tile-mem"),
    pytest.param({"W1": word(MMA, {31: 1, (30, 23): 4, (19, 15): 12}),
                  "W0": word(W0, {(30, 23): 5, (22, 18): 0x04})},
                 "tmma.mt", {"W1.rs1": 12, "W0.ts2": 5}, id="5.5-mma-mem-tile"),
    pytest.param({"W1": word(MMA, {31: 1, (30, 23): 4, (19, 15): 12, 7: 1}),
                  "W0": word(W0, {(27, 23): 13, (22, 18): 0x0E})},
                 "tmma.mm", {"W1.rs1": 12, "W0.rs2": 13, "W0.mmauop": 0x0E}, id="5.5-mma-mem-mem"),
    # 5.6 Tile Move: vector, GPR and FPR, both directions
    pytest.param({"W2": word(W2, {(29, 27): 0b101, (25, 20): 0b100001, 19: 1, (11, 7): 3}),
                  "W0": word(W0, {(30, 23): 7, (19, 15): 2})},
                 "tmv", {"W2.mvop": 0b101, "W2.bc": 1, "W2.reg": 3, "W0.tile": 7, "W0.index": 2},
                 id="5.6-move-vector-into"),
    pytest.param({"W2": word(W2, {(29, 27): 0b000, (25, 20): 0b010100, (11, 7): 10}),
                  "W0": word(W0, {(30, 23): 7, (19, 15): 11, 7: 1})},
                 "tmv", {"W2.mvop": 0, "W2.func6": 0b010100, "W0.rs2_en": 1, "W0.index": 11},
                 id="5.6-move-gpr-out"),
    pytest.param({"W2": word(W2, {(29, 27): 0b011, (25, 20): 0b100110, (11, 7): 4}),
                  "W0": word(W0, {(30, 23): 7})},
                 "tmv", {"W2.mvop": 0b011, "W2.func6": 0b100110}, id="5.6-move-fpr-into"),
    # 5.7 TALU: unary, binary with ASP operand, ternary, ternary with a scalar
    pytest.param({"W1": word(TALU, {(30, 23): 1, (22, 15): 2, (11, 8): 0b0010}),
                  "W0": word(W0, {(30, 29): 0b01, 27: 1, 25: 1, 11: 1})},
                 "talu1", {"W1.op_hi": 2, "W0.op_lo": 1, "W0.neg1": 1, "W0.reuse1": 1, "W0.tmask": 1},
                 id="5.7-talu-unary"),
    pytest.param({"W2": word(W2, {30: 1, (29, 28): 0b11, 27: 1, (25, 20): 0b100001, (11, 7): 5}),
                  "W1": word(TALU, {(30, 23): 1, (22, 15): 2}),
                  "W0": word(W0, {28: 1, 26: 1, 20: 1, (19, 15): 5, (10, 9): 0b01, 8: 1})},
                 "talu2", {"W2.vec_en": 1, "W0.neg2": 1, "W0.reuse2": 1, "W0.src_type": 1, "W0.vs2": 5},
                 id="5.7-talu-binary"),
    pytest.param({"W1": word(TALU, {(30, 23): 1, (22, 15): 2, (11, 8): 0x8}),
                  "W0": word(W0, {(30, 23): 4, (22, 15): 3, (10, 9): 0b10})},
                 "talu3", {"W1.op_hi": 8, "W0.ts3": 4, "W0.ts2": 3}, id="5.7-talu-ternary"),
    pytest.param({"W2": word(W2, {30: 1, (29, 28): 0b11, (25, 20): 0b100001, (11, 7): 6}),
                  "W1": word(TALU, {(30, 23): 1, (22, 15): 2, (11, 8): 0x8}),
                  "W0": word(W0, {(30, 23): 4, (19, 15): 6, (10, 9): 0b10, 8: 1})},
                 "talu3.s", {"W0.ts3": 4, "W0.frs2": 6, "W2.vec_en": 0}, id="5.7-talu-ternary-scalar"),
    # 5.8 t_sync reg and imm forms, t_wait forms
    pytest.param({"W1": word(CTRL, {31: 1, 28: 1, (19, 15): 10, (11, 10): 0b01})}, "tsync.reg",
                 {"W1.nonblk": 1, "W1.sync_rs": 10, "W1.scope": 1}, id="5.8-tsync-reg"),
    pytest.param({"W1": word(CTRL, {31: 1, 29: 1, (24, 20): 11, (19, 15): 10})}, "tsync.reg_rs",
                 {"W1.mask_rs": 11, "W1.sync_rs": 10}, id="5.8-tsync-reg-rs2"),
    pytest.param({"W1": word(CTRL, {(27, 20): 0b11, (19, 15): 3})}, "tsync",
                 {"W1.mask": 3, "W1.sync_id": 3, "W1.scope": 0}, id="5.8-tsync-imm"),
    pytest.param({"W1": word(CTRL, {29: 1, (24, 20): 11, (19, 15): 3})}, "tsync.imm_rs",
                 {"W1.mask_rs": 11, "W1.sync_id": 3}, id="5.8-tsync-imm-rs2"),
    pytest.param({"W1": word(CTRL, {(28, 26): 0b000, 25: 1, (24, 20): 2, (19, 15): 31, (9, 7): 0b001})},
                 "twait.mem", {"W1.shared": 1, "W1.st_cnt": 2, "W1.ld_cnt": 31}, id="5.8-twait-memory"),
    pytest.param({"W1": word(CTRL, {(28, 26): 0b001, 25: 1, (19, 15): 4, (9, 7): 0b001})},
                 "twait.tma", {"W1.wait": 1, "W1.group": 4}, id="5.8-twait-tma"),
    pytest.param({"W1": word(CTRL, {(28, 26): 0b010, (9, 7): 0b001})}, "twait", {"W1.waitop": 2},
                 id="5.8-twait-mma"),
    pytest.param({"W1": word(CTRL, {(28, 26): 0b100, (9, 7): 0b001})}, "twait", {"W1.waitop": 4},
                 id="5.8-twait-alu"),
    pytest.param({"W1": word(CTRL, {(28, 26): 0b111, (9, 7): 0b001})}, "twait", {"W1.waitop": 7},
                 id="5.8-twait-all"),
    # Appendix B placeholders
    pytest.param({"W1": word(CTRL, {(28, 26): 0b100, (24, 20): 12, (19, 15): 10, (9, 7): 0b010})},
                 "tmbar", {"W1.sub": 4, "W1.rs2": 12, "W1.rs1": 10}, id="B-tmbar-try-wait"),
    pytest.param({"W1": word(CTRL, {(28, 26): 0b001, (24, 20): 12, (19, 15): 5, (9, 7): 0b011})},
                 "tsem", {"W1.sub": 1, "W1.rs2": 12, "W1.index": 5}, id="B-tsem-wait"),
]


@pytest.mark.parametrize(("words", "name", "fields"), ROWS)
def test_golden_decode(words, name, fields):
    tables = builtin()
    form = tables.identify(words)
    assert form is not None, f"no operation for {words}"
    assert form.name == name
    got = {f"{w}.{k}": v for w, lay in form.layouts.items() for k, v in lay.decode(words[w]).items()}
    assert {k: got[k] for k in fields} == fields
    for w, lay in form.layouts.items():     # every bit of a golden word is one the layout knows
        assert words[w] & lay.reserved == 0, f"{w} of {name} sets reserved bits {words[w] & lay.reserved:#x}"


def test_rows_cover_every_operation_of_the_tables():
    covered = {p.values[1] for p in ROWS}
    assert covered == set(builtin().op_named)


def test_w0_alone_and_unknown_combinations_identify_nothing():
    tables = builtin()
    assert tables.identify({"W0": _w0_mem(LOAD, 0, 0)}) is None
    assert tables.identify({"W1": _w1_mem(TGMEM), "W0": _w0_mem(0b000100, 0, 0)}) is None   # memuop 000100
    assert tables.identify({"W2": _w2_index(), "W0": _w0_mem(LOAD, 0b10, 2)}) is None    # index without W1
