"""Assembler and disassembler (tile.md 9.7): one mnemonic per operation, ``.ace`` words, listings."""

from __future__ import annotations

import random

import pytest

from tessera.errors import AssemblyError
from tessera.isa import Decoder, Disassembler
from tessera.isa.asm import assemble
from tessera_tile import TILE
from tessera_tile.disasm import TileDisassembler

CANONICAL = [
    "tld.g.us t4, (a0), 8, ts=2, tmask",
    "tld.g.us t4, (a0), t1",
    "tst.s.us t0, (sp), -512",
    "tld.s.st t8, (a1), a2, -3, ts=8",
    "tst.g.st t1, (a1), a2, tmask",
    "tld.g.ix t0, (a0), v2",
    "tst.s.ix t0, (a0), v2, 4, ew=w, v0.t",
    "tamo.g.add t3, (a0), rtn",
    "tamo.s.fmax t3, (a0), 64, ew=16, tmask",
    "tsamo.cas a0, a1, (a2), a3, ew=64",
    "tsamo.minu a0, a1, (a2), ew=8",
    "tsred.inc a1, (a2), -4",
    "tma.tiled a1, a0, v1, dim=2, srctm, dst=shared, mbar=a3",
    "tma.tiled a0, a6, v4, dim=4, dsttm, src=shared, group=2, multicast, tmask",
    "tma.linear a1, a0, v1, dst=l2b, src=shared, sem=3, ew=d",
    "tmma.bf16_fp32 t0, t1, t2",
    "tmma.s4_s4 t0, (a0), (a1), ts=4, multitile, ta, tb, neg1, negd, reuse1, reuse2, reused",
    "tmma.e5m2_e4m3 t8, t1, (s2), ts=8",
    "talu1.gelu t1, t2, neg1, reuse1, tmask",
    "talu1.cvt_bf16 t1, t2",
    "talu2.cmple t1, t2, v3, neg2, reuse2, ew=h",
    "talu2.add t1, t2, f3",
    "talu3.quantize t1, t2, t3, t4, tmask",
    "talu3.fma t1, t2, f7, t4",
    "tmv.tv t1, v2, 3, bc",
    "tmv.vt v1, t2, 15, ew=n, v0.t",
    "tmv.tx t1, a0, a1, ew=hs",
    "tmv.xt a0, t1, 7",
    "tmv.tf t9, f1, 0, ew=s, bc",
    "tmv.ft f2, t9, 31, ew=h",
    "tcsrr a0, tid",
    "tcsrw a0, tmask, a1",
    "tcsrc zero, trm, t0",
    "tcsrsi a5, tfflags, 31",
    "tcsrr a0, 0x3ff",
    "tsync 3, 0x3",
    "tsync 31, a0, scope=cluster, nonblk",
    "tsync a1",
    "tsync a1, a2, nonblk",
    "twait.mem ld=0, st=3, shared",
    "twait.mem",
    "twait.tma 4",
    "twait.tma 9, commit",
    "twait mma",
    "twait mma, alu",
    "twait tma, alu",
    "twait all",
    "tmbar.init a0, a1",
    "tmbar.arrive_tx a2, a0, a1",
    "tmbar.try_wait a2, a0, a1",
    "tsem.signal 3, a1",
]


def _listing_texts(source: str) -> list[str]:
    program = assemble(TILE, source)
    data = b"".join(d for _, d in program.segments)
    return [text for _, _, text in TileDisassembler(TILE).lines(data)]


@pytest.mark.parametrize("line", CANONICAL)
def test_canonical_text_round_trips_through_words(line):
    texts = _listing_texts(line)
    assert texts[-1] == line
    assert all(t.startswith("# W") for t in texts[:-1])


def test_listing_words_of_a_broken_sequence_show_their_fields_and_assemble_back():
    source = ".ace W1.tgmem.mem{td=4, tilesize=1, rs1=10}\nnop\n.ace W0.mem_us{lo5=3}\n.ace 0x0000707b"
    program = assemble(TILE, source)
    data = b"".join(d for _, d in program.segments)
    rows = list(TileDisassembler(TILE).lines(data))
    assert [t for _, _, t in rows] == [".ace W1.tgmem.mem{td=4, tilesize=1, rs1=10}", "nop",
                                        ".ace W0.mem_us{offseten=0, memuop=0, lo5=3, hi5=0, tmask=0, lsuop=0}",
                                        ".ace W2.move{mvop=0, addrctl=0, func6=0, bc=0, reg=0}"]
    again = assemble(TILE, "\n".join(t for _, _, t in rows))
    assert again.segments == program.segments


def test_every_single_word_renders_as_ace_text_that_assembles_back():
    dis = TileDisassembler(TILE)
    dec = Decoder(TILE)
    rnd = random.Random(3)
    for _ in range(800):
        word = rnd.getrandbits(32) & ~0x7F | 0x7B
        text = dis.text(dec.decode(word, 0))
        assert text.startswith(".ace ")
        assert assemble(TILE, text).segments == ((0, word.to_bytes(4, "little")),), text


def test_plain_disassembler_rows_round_trip():
    dis = Disassembler(TILE)
    assert dis.word(0x8205807B) == "ace.tgmem 0x208160"
    assert assemble(TILE, "ace.tgmem 0x208160").segments == ((0, (0x8205807B).to_bytes(4, "little")),)


def test_mixed_risc_v_and_tile_source():
    program = assemble(TILE, """
        li a0, 5
loop:   tld.g.us t1, (a0)
        addi a0, a0, -1
        bnez a0, loop
""")
    data = b"".join(d for _, d in program.segments)
    assert len(data) == 5 * 4
    texts = _listing_texts("li a0, 5\ntld.g.us t1, (a0)\naddi a0, a0, -1")
    assert texts == ["addi a0, zero, 5", "# W1 of the tld.g.us below", "tld.g.us t1, (a0)", "addi a0, a0, -1"]


@pytest.mark.parametrize(("source", "message"), [
    ("tld.g.us t4, (a0), ts=3", "unknown register count"),
    ("tld.g.us x4, (a0)", "'x4' is not a tile register"),
    ("tld.g.us t4, a0", "expected a \\(register\\) memory operand"),
    ("tld.g.us t4, (a0), 1024", "offset 1024 is not in -512..1023"),
    ("tmma.fp64_fp64 t0, t1, t2", "unknown MMA data type 'fp64_fp64'"),
    ("tsync 3", "an immediate barrier number needs a mask"),
    ("twait tma", "twait needs mma or alu"),
    ("tld.g.us t1, (a0), bogus=1", "unknown option bogus="),
    (".ace W1.tgmem.nope{}", "no layout W1.nope"),
    (".ace W1.tgmem.mem{td=999}", "td=999 does not fit 8 bits"),
    (".ace W1.tgmem.mem{rsv=0x80000000}", "names bits that are not reserved"),
])
def test_errors_name_the_problem(source, message):
    with pytest.raises(AssemblyError, match=message):
        assemble(TILE, source)
