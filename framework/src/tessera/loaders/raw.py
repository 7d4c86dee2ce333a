"""Raw binary images and word lists.

A raw image is copied byte for byte to ``--load`` (default: the architecture's reset
PC) and execution starts at ``--entry`` (default: the reset PC), as hardware does.
A word list is text with one instruction word in hex per line (``#``/``;`` comments,
blank lines ignored), packed in the architecture's word size and byte order — the
usual way to feed a coprocessor kernel given as words.  A token ``name:`` is a label:
it names the address of the next word (``machine.symbols``, what ``--until-symbol``
and the disassembler's listing use; a multi-thread Tensix kernel names each thread's
start so), and ``tessera asm --format words`` writes the source's labels that way.
"""

from __future__ import annotations

import re
from typing import Any

from tessera.errors import LoadError
from tessera.loaders.common import LoadedProgram, place, read_file


def load_raw(machine: Any, path: str, data: bytes | None = None, *, load: int | None = None,
             entry: int | None = None, auto_map: bool = False) -> LoadedProgram:
    if data is None:
        data = read_file(path, machine.budget.cap)
    if not data:
        raise LoadError(f"{path} is empty")
    address = machine.arch.reset_pc if load is None else load
    place(machine, address, data, what=f"{path} ({len(data):#x} bytes at {address:#x})",
          auto_map=auto_map)
    start = machine.arch.reset_pc if entry is None else entry
    machine.set_entry(start)
    return LoadedProgram(path=path, format="raw", entry=start, segments=[(address, len(data))])


_LABEL = re.compile(r"[A-Za-z_.$][\w.$]*:")


def parse_words(text: str, path: str, word_bits: int) -> list[int]:
    """Hex words, one per line; :class:`LoadError` names the bad line."""
    return parse_word_list(text, path, word_bits)[0]


def parse_word_list(text: str, path: str, word_bits: int) -> tuple[list[int], dict[str, int]]:
    """The words of a word list and its labels (name -> index of the word they name)."""
    words: list[int] = []
    labels: dict[str, int] = {}
    limit = 1 << word_bits
    for lineno, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0].split(";", 1)[0].strip()
        if not body:
            continue
        for token in body.replace(",", " ").split():
            if _LABEL.fullmatch(token):
                name = token[:-1]
                if name in labels:
                    raise LoadError(f"{path}:{lineno}: label {name!r} is defined twice")
                labels[name] = len(words)
                continue
            try:
                value = int(token, 16)
            except ValueError:
                raise LoadError(f"{path}:{lineno}: {token!r} is not a hex word") from None
            if not 0 <= value < limit:
                raise LoadError(f"{path}:{lineno}: {token} does not fit in {word_bits} bits")
            words.append(value)
    if not words:
        raise LoadError(f"{path} contains no words")
    return words, labels


def load_words(machine: Any, path: str, data: bytes | None = None, *, load: int | None = None,
               entry: int | None = None, auto_map: bool = False) -> LoadedProgram:
    arch = machine.arch
    if data is None:
        data = read_file(path, machine.budget.cap)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise LoadError(f"{path} is not a text word list") from None
    words, labels = parse_word_list(text, path, arch.word_bits)
    blob = b"".join(w.to_bytes(arch.word_bytes, arch.endian) for w in words)
    loaded = load_raw(machine, path, blob, load=load, entry=entry if entry is not None else load,
                      auto_map=auto_map)
    loaded.format = "words"
    base = arch.reset_pc if load is None else load
    loaded.symbols = {name: base + index * arch.word_bytes for name, index in labels.items()}
    machine.symbols.update(loaded.symbols)
    return loaded
