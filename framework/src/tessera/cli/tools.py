"""``tessera asm`` and ``tessera disasm``: the encoding table's assembler and disassembler."""

from __future__ import annotations

from typing import Any

import click

from tessera.cli.params import ADDRESS, parse_int
from tessera.errors import ConfigError, LoadError
from tessera.loaders import detect_format, parse_word_list, read_file
from tessera.loaders.elf import label_symbols, load_error, open_elf
from tessera.memory import DEFAULT_MEMORY_CAP
from tessera.session import resolve_arch


@click.command()
@click.argument("source", type=click.Path())  # a directory is a LoadError (65), not usage
@click.option("--arch", "arch_name", required=True, help="Architecture.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the image here (default: print a listing).")
@click.option("--format", "fmt", type=click.Choice(["bin", "words"]), default="bin", show_default=True,
              help="Output: raw binary image, or one hex word per line.")
@click.option("--base", type=ADDRESS, default=None, help="Start address (default: the reset PC).")
@click.pass_obj
def asm(obj: Any, source: str, arch_name: str, output: str | None, fmt: str, base: int | None) -> int:
    """Assemble SOURCE for an architecture."""
    from tessera.isa.asm import assemble

    arch = obj.host.architecture(arch_name)
    data = read_file(source, DEFAULT_MEMORY_CAP)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise LoadError(f"{source} is not UTF-8 text") from None
    program = assemble(arch, text, file=source, base=arch.reset_pc if base is None else base)
    start, blob = program.image()
    if output is None:
        symbols = {v: k for k, v in program.symbols.items()}
        click.echo(arch.disassembler_class()(arch).listing(blob, start, symbols))
        return 0
    try:
        if fmt == "words":
            step = arch.word_bytes
            if len(blob) % step:
                blob += bytes(step - len(blob) % step)
            labels: dict[int, list[str]] = {}
            for name, address in sorted(program.symbols.items(), key=lambda kv: kv[1]):
                if name in program.labels and (address - start) % step == 0 and 0 <= address - start <= len(blob):
                    labels.setdefault(address - start, []).append(f"{name}:")
            lines = []
            for i in range(0, len(blob), step):
                lines += labels.get(i, [])
                lines.append(f"{int.from_bytes(blob[i:i + step], arch.endian):0{step * 2}x}")
            with open(output, "w") as fh:
                fh.write("\n".join(lines) + "\n")
        else:
            with open(output, "wb") as fh:
                fh.write(blob)
    except OSError as exc:  # e.g. a missing directory: one line, not an internal error
        raise ConfigError(f"cannot write {output}: {exc.strerror or exc}") from None
    click.echo(f"{output}: {len(blob)} bytes at {start:#x}", err=True)
    return 0


def _elf_code(data: bytes, path: str) -> tuple[list[tuple[int, bytes]], dict[int, str]]:
    """The executable sections (else executable loadable segments) and the labels of an ELF."""
    from tessera.loaders.elffile import PF_X, PT_LOAD, SHF_EXECINSTR, SHT_PROGBITS, ElfFormatError

    elf = open_elf(data, path)
    try:
        chunks = [(sec.sh_addr, elf.section_data(sec)) for sec in elf.sections
                  if sec.sh_type == SHT_PROGBITS and sec.sh_flags & SHF_EXECINSTR]
        if not chunks:
            chunks = [(seg.p_vaddr, elf.segment_data(seg)) for seg in elf.segments
                      if seg.p_type == PT_LOAD and seg.p_flags & PF_X]
    except ElfFormatError as exc:
        raise load_error(path, exc) from None
    symbols = label_symbols(elf)  # never mapping symbols ($x, $d, $xrv32i2p1_m2p0 ...)
    return chunks, symbols


@click.command()
@click.argument("file", required=False, type=click.Path())  # a directory: LoadError (65)
@click.option("--arch", "arch_name", default=None, help="Architecture (default: from the ELF header).")
@click.option("--word", "words", multiple=True, metavar="HEX",
              help="Disassemble this instruction word (repeatable).")
@click.option("--base", type=ADDRESS, default=0, show_default=True,
              help="Address of the first byte of a raw file or word.")
@click.option("--format", "fmt", type=click.Choice(["auto", "elf", "raw", "words"]), default="auto",
              show_default=True)
@click.pass_obj
def disasm(obj: Any, file: str | None, arch_name: str | None, words: tuple[str, ...], base: int,
           fmt: str) -> int:
    """Disassemble FILE (ELF, raw image or word list) or --word HEX."""
    if file is None and not words:
        raise click.UsageError("give a FILE or at least one --word HEX")
    if file is not None and words:
        raise click.UsageError("give either a FILE or --word, not both")
    arch = resolve_arch(obj.host, arch_name, file)
    dis = arch.disassembler_class()(arch)
    if words:
        width = arch.word_bits // 4
        for i, text in enumerate(words):
            try:
                value = parse_int(text if text.lower().startswith("0x") else "0x" + text)
            except ValueError:
                raise ConfigError(f"--word {text!r} is not a hex word") from None
            if not 0 <= value < 1 << arch.word_bits:
                raise ConfigError(f"--word {text} does not fit in {arch.word_bits} bits")
            addr = base + i * arch.word_bytes
            click.echo(f"{addr:08x}:  {value:0{width}x}  {dis.word(value, addr)}")
        return 0
    assert file is not None
    data = read_file(file, DEFAULT_MEMORY_CAP)
    kind = detect_format(file, data[:4]) if fmt == "auto" else fmt
    if kind == "elf":
        chunks, symbols = _elf_code(data, file)
        for addr, blob in chunks:
            click.echo(dis.listing(blob, addr, symbols))
        return 0
    if kind == "words":
        try:
            values, labels = parse_word_list(data.decode("utf-8"), file, arch.word_bits)
        except UnicodeDecodeError:
            raise LoadError(f"{file} is not a text word list") from None
        data = b"".join(v.to_bytes(arch.word_bytes, arch.endian) for v in values)
        click.echo(dis.listing(data, base, {base + i * arch.word_bytes: name for name, i in labels.items()}))
        return 0
    if kind == "asm":
        raise ConfigError("disasm takes binaries; assemble the source first")
    click.echo(dis.listing(data, base))
    return 0
