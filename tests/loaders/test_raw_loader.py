"""Raw images and word lists: placement, entry defaults, and one-line refusals."""

from __future__ import annotations

import os
import threading

import attrs
import pytest
from toyprog import EXIT7, HALT_R1, LI_R1_7, SUM30, SUM30_WORDS

from tessera.errors import LoadError
from tessera.loaders import detect_format, load_program, load_raw, load_words, parse_words
from tessera.machine import Machine
from tessera_toyarch import TOY

# --------------------------------------------------------------------------- raw images


def test_raw_defaults_to_the_reset_pc_for_address_and_entry(machine, write):
    loaded = load_raw(machine, write("p.bin", SUM30))
    assert TOY.reset_pc == 0
    assert loaded.format == "raw"
    assert loaded.segments == [(0, len(SUM30))]
    assert loaded.entry == 0
    assert machine.space.read_bytes(0, len(SUM30)) == SUM30
    assert machine.run(max_steps=1000).exit_code == 30


def test_raw_at_an_address_starts_at_the_reset_pc_unless_told(machine, write):
    loaded = load_raw(machine, write("p.bin", EXIT7), load=0x200)
    assert machine.space.read_bytes(0x200, 8) == EXIT7
    assert machine.space.read_bytes(0, 8) == bytes(8)
    assert loaded.entry == 0  # like hardware: execution starts at the reset PC
    assert {cpu.pc for cpu in machine.cpus} == {0}


def test_raw_with_load_and_entry(machine, write):
    loaded = load_raw(machine, write("p.bin", EXIT7), load=0x200, entry=0x200)
    assert loaded.entry == 0x200
    assert [cpu.pc for cpu in machine.cpus] == [0x200, 0x200]
    result = machine.run(max_steps=100)
    assert result.exit_code == 7
    assert machine.agent("core0").instret == 2


def test_raw_into_rom(machine, write):
    load_raw(machine, write("rom.bin", EXIT7), load=0x20000, entry=0x20000)
    assert machine.space.read_bytes(0x20000, 8) == EXIT7
    assert machine.run(max_steps=100).exit_code == 7


def test_raw_larger_than_ram(machine, write):
    with pytest.raises(LoadError) as exc:
        load_raw(machine, write("big.bin", bytes(0x10001)))
    assert "outside mapped memory" in str(exc.value)
    assert "0x10001 bytes at 0x0" in str(exc.value)


def test_raw_beyond_the_address_space(machine, write):
    with pytest.raises(LoadError, match="32-bit address space"):
        load_raw(machine, write("wrap.bin", bytes(0x20)), load=0xFFFF_FFF0)


def test_raw_file_larger_than_the_memory_cap(write):
    machine = Machine(TOY, memory_cap=0x20000)
    with pytest.raises(LoadError, match="larger than the 0x20000-byte memory cap"):
        load_program(machine, write("huge.bin", bytes(0x30000)))


def test_raw_auto_map(write):
    machine = Machine(TOY, memory_cap=1 << 20)
    load_raw(machine, write("far.bin", EXIT7), load=0x40000, entry=0x40000, auto_map=True)
    assert machine.space.read_bytes(0x40000, 8) == EXIT7
    assert machine.run(max_steps=100).exit_code == 7


@pytest.mark.parametrize("name", ["empty.bin", "empty", "empty.elf"])
def test_empty_file(machine, write, name):
    with pytest.raises(LoadError, match="is empty"):
        load_program(machine, write(name, b""))


# --------------------------------------------------------------------------- word lists


WORDLIST = """\
# sum 1..10 three times: exits with 30
{:08x}  {:08x}   ; two per line
{:08x},{:08x}

0x{:08x}
{:x}
""".format(*SUM30_WORDS)


def test_parse_words_skips_comments_and_blank_lines_and_splits_commas():
    assert parse_words(WORDLIST, "w.hex", 32) == list(SUM30_WORDS)


def test_word_list_is_packed_in_the_architecture_byte_order(machine, write):
    loaded = load_program(machine, write("sum.hex", WORDLIST))
    assert loaded.format == "words"
    assert loaded.entry == 0
    assert machine.space.read_bytes(0, len(SUM30)) == SUM30
    assert machine.run(max_steps=1000).exit_code == 30


def test_word_list_big_endian_architecture(write):
    toybe = attrs.evolve(TOY, name="toybe", endian="big")
    machine = Machine(toybe)
    load_words(machine, write("w.hex", "11223344\n"))
    assert machine.space.read_bytes(0, 4) == bytes.fromhex("11223344")


def test_word_list_with_load_address_starts_there(machine, write):
    loaded = load_program(machine, write("p.words", f"{LI_R1_7:08x}\n{HALT_R1:08x}\n"), load=0x300)
    assert loaded.entry == 0x300
    assert {cpu.pc for cpu in machine.cpus} == {0x300}
    assert machine.run(max_steps=100).exit_code == 7


def test_word_list_bad_token_names_the_line(machine, write):
    path = write("bad.hex", "# header\n1440000a\n44400000 zz12\n")
    with pytest.raises(LoadError) as exc:
        load_program(machine, path)
    msg = str(exc.value)
    assert f"{path}:3:" in msg
    assert "'zz12' is not a hex word" in msg


def test_word_too_wide(machine, write):
    path = write("wide.hex", "1440000a\n\n123456789\n")
    with pytest.raises(LoadError) as exc:
        load_program(machine, path)
    assert f"{path}:3:" in str(exc.value)
    assert "does not fit in 32 bits" in str(exc.value)


def test_negative_word_is_refused():
    with pytest.raises(LoadError, match="does not fit in 32 bits"):
        parse_words("-1\n", "neg.hex", 32)


def test_word_list_with_only_comments(machine, write):
    with pytest.raises(LoadError, match="contains no words"):
        load_program(machine, write("c.hex", "# nothing\n; here\n\n"))


def test_word_list_that_is_not_text(machine, write):
    with pytest.raises(LoadError, match="not a text word list"):
        load_program(machine, write("bin.hex", b"\xff\xfe\x00\x81"))


def test_word_list_beyond_ram(machine, write):
    with pytest.raises(LoadError, match="outside mapped memory"):
        load_program(machine, write("w.hex", "0\n0\n"), load=0xFFFC)


# --------------------------------------------------------------------------- format detection


@pytest.mark.parametrize(("path", "head", "fmt"), [
    ("a.out", b"\x7fELF", "elf"),
    ("prog.hex", b"\x7fELF", "elf"),  # magic wins over the extension
    ("prog.s", b"li r", "asm"),
    ("prog.S", b"li r", "asm"),
    ("prog.asm", b"li r", "asm"),
    ("prog.hex", b"1440", "words"),
    ("prog.words", b"1440", "words"),
    ("prog.bin", b"\x0a\x00\x40\x14", "raw"),
    ("prog", b"", "raw"),
])
def test_detect_format(path, head, fmt):
    assert detect_format(path, head) == fmt


def test_a_fifo_longer_than_the_cap_is_refused_by_the_cap(tmp_path):
    # a FIFO (or device) has no size, so the size check cannot see it: the read must stop at the cap
    fifo = tmp_path / "stream"
    os.mkfifo(fifo)

    def feed():
        try:
            with open(fifo, "wb") as fh:
                fh.write(bytes(0x30000))
        except BrokenPipeError:  # the reader stopped at the cap, as it should
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    machine = Machine(TOY, memory_cap=0x20000)
    with pytest.raises(LoadError, match="larger than the 0x20000-byte memory cap"):
        load_program(machine, str(fifo))
    writer.join(5)
    assert not writer.is_alive()


# --------------------------------------------------------------------------- labels in word lists


def test_word_list_labels_name_the_next_word(machine, write):
    words = SUM30_WORDS
    text = "start:\n" + "\n".join(f"{w:08x}" for w in words[:2]) + "\nmiddle: " + \
        " ".join(f"{w:08x}" for w in words[2:]) + "\nend_mark:\n"
    loaded = load_words(machine, write("p.words", text.encode()), load=0x100)
    step = TOY.word_bytes
    assert loaded.symbols == {"start": 0x100, "middle": 0x100 + 2 * step,
                              "end_mark": 0x100 + len(words) * step}
    assert machine.symbols["middle"] == 0x100 + 2 * step


def test_word_list_label_defined_twice_is_refused(machine, write):
    with pytest.raises(LoadError, match=r"p.words:3: label 'a' is defined twice"):
        load_words(machine, write("p.words", b"a:\n00000000\na: 00000000\n"))


def test_word_list_label_lookalikes_are_still_bad_words(machine, write):
    with pytest.raises(LoadError, match=r"'1x:' is not a hex word"):
        load_words(machine, write("p.words", b"1x:\n00000000\n"))
