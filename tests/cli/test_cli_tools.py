"""``tessera disasm``, ``tessera asm`` and ``tessera demo``."""

from __future__ import annotations

from clitools import assert_one_line_error
from elfgen import PF_R, PF_W, Segment, build_elf
from toyprog import EXIT7, SUM30, SUM30_WORDS

SUM_SOURCE = """\
# sum 1..10 three times
_start:
        li    r1, 10
        li    r2, 0
loop:   addi  r2, r2, 3
        addi  r1, r1, -1
        bne   r1, r0, loop
        halt  r2
"""


def listing_lines(out):
    return [line.split(None, 2) for line in out.splitlines() if line.strip() and not line.endswith(":")]


# --------------------------------------------------------------------------- disasm


def test_disasm_one_word(tessera):
    res = tessera("disasm", "--arch", "toy", "--word", "0x1440000a")
    assert res.code == 0, res.err
    assert res.out.strip().endswith("li r1, 10")
    assert res.out.split()[:2] == ["00000000:", "1440000a"]


def test_disasm_words_without_prefix_at_a_base(tessera):
    res = tessera("disasm", "--arch", "toy", "--base", "0x100", "--word", "14400007", "--word", "44400000")
    assert res.code == 0, res.err
    assert res.out.splitlines() == ["00000100:  14400007  li r1, 7", "00000104:  44400000  halt r1"]


def test_disasm_word_that_is_not_hex_or_too_wide(tessera):
    assert_one_line_error(tessera("disasm", "--arch", "toy", "--word", "xyz"), 64, "not a hex word")
    assert_one_line_error(tessera("disasm", "--arch", "toy", "--word", "0x123456789"), 64,
                          "does not fit in 32 bits")


def test_disasm_needs_a_file_or_a_word(tessera, write):
    assert_one_line_error(tessera("disasm", "--arch", "toy"), 2, "--word")
    path = write("p.bin", EXIT7)
    assert_one_line_error(tessera("disasm", "--arch", "toy", path, "--word", "0"), 2, "not both")


def test_disasm_raw_file(tessera, write):
    res = tessera("disasm", "--arch", "toy", "--base", "0x200", write("sum.bin", SUM30))
    assert res.code == 0, res.err
    rows = listing_lines(res.out)
    assert [r[0] for r in rows] == [f"{0x200 + 4 * i:08x}:" for i in range(6)]
    assert [int(r[1], 16) for r in rows] == list(SUM30_WORDS)
    assert rows[0][2] == "li r1, 10"
    assert rows[4][2] == "bne r1, r0, 0x208"
    assert rows[5][2] == "halt r2"


def test_disasm_raw_file_needs_an_arch(tessera, write):
    assert_one_line_error(tessera("disasm", write("sum.bin", SUM30)), 64, "--arch is required")


def test_disasm_word_list(tessera, write):
    path = write("sum.hex", "\n".join(f"{w:08x}" for w in SUM30_WORDS))
    res = tessera("disasm", "--arch", "toy", path)
    assert res.code == 0, res.err
    assert [int(r[1], 16) for r in listing_lines(res.out)] == list(SUM30_WORDS)


def test_disasm_elf_uses_header_sections_and_symbols(tessera, write):
    data_seg = Segment(0x1000, b"\xff\xff\xff\xff", flags=PF_R | PF_W)  # not code: not listed
    path = write("p.elf", build_elf(entry=0x100, segments=[(0x100, EXIT7), data_seg],
                                    symbols={"_start": 0x100}))
    res = tessera("disasm", path)
    assert res.code == 0, res.err
    lines = [line.strip() for line in res.out.splitlines()]
    assert lines == ["_start:", "00000100:  14400007  li r1, 7", "00000104:  44400000  halt r1"]


def test_disasm_elf_without_sections_uses_executable_segments(tessera, write):
    path = write("p.elf", build_elf(entry=0x100, segments=[(0x100, EXIT7)], sections=False))
    res = tessera("disasm", path)
    assert res.code == 0, res.err
    assert "li r1, 7" in res.out and "halt r1" in res.out


def test_disasm_truncated_elf(tessera, write):
    path = write("t.elf", build_elf(entry=0x100, segments=[(0x100, EXIT7)])[:30])
    assert_one_line_error(tessera("disasm", path), 65, "truncated")


def test_disasm_of_assembly_source_is_refused(tessera, write):
    assert_one_line_error(tessera("disasm", "--arch", "toy", write("p.s", SUM_SOURCE)), 64,
                          "assemble the source first")


# --------------------------------------------------------------------------- asm


def test_asm_listing(tessera, write):
    res = tessera("asm", "--arch", "toy", write("sum.s", SUM_SOURCE))
    assert res.code == 0, res.err
    assert "_start:" in res.out and "loop:" in res.out
    rows = listing_lines(res.out)
    assert [int(r[1], 16) for r in rows] == list(SUM30_WORDS)
    assert rows[4][2] == "bne r1, r0, loop"


def test_asm_to_binary_and_back_through_disasm(tessera, write, tmp_path):
    src = write("sum.s", SUM_SOURCE)
    out = tmp_path / "sum.bin"
    res = tessera("asm", "--arch", "toy", src, "-o", out)
    assert res.code == 0, res.err
    assert out.read_bytes() == SUM30
    assert res.err.strip() == f"{out}: 24 bytes at 0x0"

    back = tessera("disasm", "--arch", "toy", out)
    assert back.code == 0, back.err
    assert [r[2] for r in listing_lines(back.out)] == [
        "li r1, 10", "li r2, 0", "addi r2, r2, 3", "addi r1, r1, -1", "bne r1, r0, 0x8", "halt r2"]
    assert tessera("run", "--arch", "toy", out).code == 30


def test_asm_to_a_word_list_runs(tessera, write, tmp_path):
    out = tmp_path / "sum.hex"
    res = tessera("asm", "--arch", "toy", write("sum.s", SUM_SOURCE), "-o", out, "--format", "words")
    assert res.code == 0, res.err
    words = [f"{w:08x}" for w in SUM30_WORDS]
    # the source's labels come along, each on its own line before the word it names
    assert out.read_text().split() == ["_start:", *words[:2], "loop:", *words[2:]]
    assert tessera("run", "--arch", "toy", out).code == 30
    back = tessera("disasm", "--arch", "toy", out)
    assert back.code == 0, back.err
    lines = back.out.splitlines()
    assert lines[0] == "_start:" and lines[3] == "loop:"
    assert listing_lines(back.out)[4][2] == "bne r1, r0, loop"
    assert tessera("run", "--arch", "toy", out, "--until-symbol", "loop", "--dump-state", "text").code == 0


def test_a_word_list_keeps_labels_not_assigned_constants(tessera, write, tmp_path):
    out = tmp_path / "k.words"
    src = write("k.s", "FOUR = 4\n.equ EIGHT, 8\nstart: li r1, 10\nnext:  halt r1\n")
    assert tessera("asm", "--arch", "toy", src, "-o", out, "--format", "words").code == 0
    # FOUR (4) is the address of a word too, but it is a constant, not a label
    assert [t for t in out.read_text().split() if t.endswith(":")] == ["start:", "next:"]


def test_asm_at_a_base_address(tessera, write, tmp_path):
    out = tmp_path / "sum.bin"
    res = tessera("asm", "--arch", "toy", "--base", "0x400", write("sum.s", SUM_SOURCE), "-o", out)
    assert res.code == 0, res.err
    assert "at 0x400" in res.err
    assert out.read_bytes() == SUM30  # position independent: same bytes
    run = tessera("run", "--arch", "toy", out, "--load", "0x400", "--entry", "0x400")
    assert run.code == 30


def test_assembly_source_runs_directly(tessera, write):
    assert tessera("run", "--arch", "toy", write("sum.s", SUM_SOURCE)).code == 30


def test_asm_error_is_one_line_with_file_and_line(tessera, write):
    path = write("bad.s", "        li r1, 1\n        frob r1, r2\n")
    res = tessera("asm", "--arch", "toy", path)
    assert "Traceback" not in res.out + res.err
    assert res.code in (73, 74), res.err
    line = assert_one_line_error(res, res.code)
    assert f"{path}:2:" in line and "frob" in line


def test_asm_operand_out_of_range(tessera, write):
    path = write("big.s", "        addi r1, r1, 100000\n")
    res = tessera("asm", "--arch", "toy", path)
    assert res.code in (73, 74), res.err
    assert f"{path}:1:" in assert_one_line_error(res, res.code)


def test_asm_requires_arch_and_an_existing_file(tessera, write, tmp_path):
    assert_one_line_error(tessera("asm", write("sum.s", SUM_SOURCE)), 2, "--arch")
    assert_one_line_error(tessera("asm", "--arch", "toy", tmp_path / "none.s"), 65, "cannot open")


# --------------------------------------------------------------------------- demo


def test_demo(tessera):
    res = tessera("demo")
    assert res.code == 0, res.out + res.err
    assert "toy/producer-consumer: ok" in res.out
    assert "ok\n" in res.out.replace("toy/producer-consumer: ok", "")  # the console's own output
    assert "FAILED" not in res.out


def test_demo_of_an_unknown_arch(tessera):
    assert_one_line_error(tessera("demo", "--arch", "nosuch"), 64, "unknown architecture")


def test_demo_with_no_architectures(tessera):
    res = tessera("--no-plugin", "toy", "demo")
    assert res.code == 0
    assert "No architectures are installed" in res.out


def test_demo_in_a_real_process(tessera_proc):
    res = tessera_proc("demo", "--arch", "toy")
    assert res.code == 0, res.err
    assert "-- toy/producer-consumer: ok" in res.out
