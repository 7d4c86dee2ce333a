"""Where a pc is in a core's ELF: the function, the source file and line, and what it was inlined into.

For one-line fault reports (:mod:`tessera_tensix.tile.asserts`), so a user does not need
``addr2line``.  With DWARF (tt-llk kernels are built with ``-g``) the answer comes from
the line table (DWARF 5 section 6.2, "Line Number Information": the row whose address
range holds the pc gives file and line) and from the ``DW_TAG_subprogram`` /
``DW_TAG_inlined_subroutine`` entries whose address ranges hold the pc (section 3.3.8:
an inlined subroutine's ``DW_AT_call_file``/``DW_AT_call_line`` is where it was called
in the function around it).  Without DWARF the function comes from the symbol table (the
``STT_FUNC`` symbol whose ``[value, value + size)`` holds the pc).  Both are read with
pyelftools (a dependency of tessera-tensix; if it is missing, the report has no place).
Nothing here raises on a bad or missing file: the report is made without the place.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

#: DIE tags searched for the pc (the ones that may hold or nest a subprogram)
_NESTING = frozenset({"DW_TAG_compile_unit", "DW_TAG_namespace", "DW_TAG_subprogram", "DW_TAG_inlined_subroutine",
                      "DW_TAG_lexical_block"})
_FUNCTIONS = frozenset({"DW_TAG_subprogram", "DW_TAG_inlined_subroutine"})


@dataclass(frozen=True)
class Frame:
    """A function and the file:line in it (either may be unknown)."""

    function: str | None = None
    file: str | None = None
    line: int | None = None

    @property
    def where(self) -> str:
        if self.file is None:
            return ""
        return f"{short_path(self.file)}:{self.line}" if self.line else short_path(self.file)


@dataclass(frozen=True)
class Place:
    """The pc's frames, innermost first (an inlined function, then what it was inlined into ...)."""

    frames: tuple[Frame, ...]

    @property
    def inner(self) -> Frame:
        return self.frames[0]

    @property
    def outer(self) -> Frame:
        return self.frames[-1]

    def statement(self) -> str | None:
        """The source text at the innermost line (a macro call spanning lines joined), if readable."""
        frame = self.inner
        if frame.file is None or not frame.line:
            return None
        return read_statement(frame.file, frame.line)


def locate(elf_path: str | None, pc: int) -> Place | None:
    """Where ``pc`` is in the ELF at ``elf_path``; None when nothing is known."""
    if not elf_path:
        return None
    place = _from_dwarf(elf_path, pc)
    if place is not None:
        return place
    name = symbol_at(elf_path, pc)
    return Place((Frame(function=name),)) if name else None


def symbol_at(elf_path: str, pc: int) -> str | None:
    """The function symbol of the ELF at ``elf_path`` that holds ``pc``."""
    try:
        from elftools.common.exceptions import ELFError
        from elftools.elf.elffile import ELFFile
        from elftools.elf.sections import SymbolTableSection
    except ImportError:
        return None
    try:
        with open(elf_path, "rb") as fh:
            for section in ELFFile(fh).iter_sections():
                if not isinstance(section, SymbolTableSection):
                    continue
                for sym in section.iter_symbols():
                    value, size = sym["st_value"], sym["st_size"]
                    if sym["st_info"]["type"] == "STT_FUNC" and value <= pc < value + max(size, 1):
                        return str(sym.name)
    except (OSError, ELFError, ValueError):
        return None
    return None


def short_path(path: str) -> str:
    """A vendor path from ``tt-llk/`` (or ``tt_metal/``) on, as the build's messages write it."""
    return re.sub(r"^.*/(tt-llk|tt_metal)/", r"\1/", path)


def read_statement(path: str, line: int, *, max_lines: int = 8) -> str | None:
    """The statement starting at ``path:line``, whitespace collapsed, up to where its
    parentheses balance (a macro call written over several lines)."""
    try:
        with open(path, errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    if not 0 < line <= len(lines):
        return None
    text, depth = "", 0
    for raw in lines[line - 1:line - 1 + max_lines]:
        text += " " + raw.strip()
        depth = text.count("(") - text.count(")")
        if depth <= 0 and "(" in text:
            break
    return re.sub(r"\s+", " ", text).strip() or None


# ------------------------------------------------------------------ DWARF (pyelftools)


def _from_dwarf(elf_path: str, pc: int) -> Place | None:
    try:
        from elftools.common.exceptions import ELFError
        from elftools.elf.elffile import ELFFile
    except ImportError:
        return None
    try:
        with open(elf_path, "rb") as fh:
            elf = ELFFile(fh)
            if not elf.has_dwarf_info():
                return None
            dwarf = elf.get_dwarf_info()
            cu = _cu_at(dwarf, pc)
            if cu is None:
                return None
            program = dwarf.line_program_for_CU(cu)
            file, line = _line_at(program, cu, pc) if program is not None else (None, None)
            chain = _chain(dwarf, cu, pc)
            frames, here = [], (file, line)
            for die in reversed(chain):          # innermost first
                frames.append(Frame(function=_name(die), file=here[0], line=here[1]))
                if die.tag == "DW_TAG_inlined_subroutine":
                    call_file = die.attributes.get("DW_AT_call_file")
                    call_line = die.attributes.get("DW_AT_call_line")
                    here = (_file_name(program, cu, call_file.value) if call_file and program else None,
                            call_line.value if call_line else None)
                else:
                    here = (None, None)
            if not frames:
                frames = [Frame(function=symbol_at(elf_path, pc), file=file, line=line)]
            return Place(tuple(frames))
    except (OSError, ELFError, ValueError, KeyError, IndexError, AttributeError, TypeError):
        return None


def _cu_at(dwarf: Any, pc: int) -> Any:
    aranges = dwarf.get_aranges()
    if aranges is not None:
        offset = aranges.cu_offset_at_addr(pc)
        if offset is not None:
            return dwarf.get_CU_at(offset)
    for cu in dwarf.iter_CUs():
        if _contains(dwarf, cu.get_top_DIE(), pc):
            return cu
    return None


def _line_at(program: Any, cu: Any, pc: int) -> tuple[str | None, int | None]:
    """File and line of the line-table row whose range holds ``pc``."""
    prev = best = None
    for entry in program.get_entries():
        state = entry.state
        if state is None:
            continue
        if prev is not None and not prev.end_sequence and prev.address <= pc < state.address:
            best = prev
        prev = state
    if best is None:
        return None, None
    return _file_name(program, cu, best.file), best.line


def _file_name(program: Any, cu: Any, index: int) -> str | None:
    """A line-table file index as a path (DWARF 5 counts from 0 and names directory 0;
    earlier versions count from 1, directory 0 being the compilation directory)."""
    version = program.header.version
    files, dirs = program["file_entry"], program["include_directory"]
    entry = files[index] if version >= 5 else files[index - 1] if index > 0 else None
    if entry is None:
        return None
    name = entry.name.decode(errors="replace")
    if os.path.isabs(name):
        return name
    if version >= 5:
        directory = dirs[entry.dir_index]
    elif entry.dir_index == 0:
        comp = cu.get_top_DIE().attributes.get("DW_AT_comp_dir")
        directory = comp.value if comp else b""
    else:
        directory = dirs[entry.dir_index - 1]
    return os.path.join(directory.decode(errors="replace"), name)


def _chain(dwarf: Any, cu: Any, pc: int) -> list[Any]:
    """The function DIEs that hold ``pc``, outermost first."""
    out: list[Any] = []
    die = cu.get_top_DIE()
    while True:
        nxt = None
        for child in die.iter_children():
            if child.tag not in _NESTING:
                continue
            has_range = any(k in child.attributes for k in ("DW_AT_low_pc", "DW_AT_ranges"))
            if has_range and _contains(dwarf, child, pc):
                nxt = child
                break
            if not has_range and child.tag == "DW_TAG_namespace" and _holds(dwarf, child, pc):
                nxt = child
                break
        if nxt is None:
            return out
        if nxt.tag in _FUNCTIONS:
            out.append(nxt)
        die = nxt


def _holds(dwarf: Any, die: Any, pc: int) -> bool:
    """A namespace holds ``pc`` when a subprogram under it does."""
    for child in die.iter_children():
        if child.tag == "DW_TAG_subprogram" and _contains(dwarf, child, pc):
            return True
        if child.tag == "DW_TAG_namespace" and _holds(dwarf, child, pc):
            return True
    return False


def _contains(dwarf: Any, die: Any, pc: int) -> bool:
    attrs = die.attributes
    if "DW_AT_low_pc" in attrs and "DW_AT_high_pc" in attrs:
        low, high = attrs["DW_AT_low_pc"].value, attrs["DW_AT_high_pc"]
        end = low + high.value if high.form.startswith("DW_FORM_data") or high.form == "DW_FORM_implicit_const" \
            else high.value
        return low <= pc < end
    if "DW_AT_ranges" in attrs:
        lists = dwarf.range_lists()
        if lists is None:
            return False
        entries = lists.get_range_list_at_offset(attrs["DW_AT_ranges"].value, cu=die.cu)
        top = die.cu.get_top_DIE().attributes.get("DW_AT_low_pc")
        base = top.value if top else 0
        for entry in entries:
            if type(entry).__name__ == "BaseAddressEntry":
                base = entry.base_address
                continue
            absolute = getattr(entry, "is_absolute", False)
            begin = entry.begin_offset if absolute else base + entry.begin_offset
            end = entry.end_offset if absolute else base + entry.end_offset
            if begin <= pc < end:
                return True
    return False


def _name(die: Any) -> str | None:
    """The DIE's name, through ``DW_AT_abstract_origin`` / ``DW_AT_specification``; template
    arguments left out."""
    for _ in range(8):
        attr = die.attributes.get("DW_AT_name")
        if attr is not None:
            name = attr.value.decode(errors="replace")
            return name if name.startswith("operator") else name.split("<", 1)[0]
        ref = next((k for k in ("DW_AT_abstract_origin", "DW_AT_specification") if k in die.attributes), None)
        if ref is None:
            return None
        die = die.get_DIE_from_attribute(ref)
    return None
