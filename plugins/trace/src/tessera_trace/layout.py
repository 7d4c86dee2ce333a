"""Per-architecture presentation: disassembly, register names, field widths.

Everything here is computed once per architecture (names, widths) or once per
decode-cache entry (the disassembly), never per retired instruction.
"""

from __future__ import annotations

from typing import Any

#: the :class:`~tessera.isa.Encoding` flag of an instruction that issues others (an expander)
EXPANDS = "expands"


def issued_by(ins: Any) -> str | None:
    """What issued ``ins`` (``"MOP"``, ``"REPLAY from MOP"``), or ``None``: it was fetched.

    The core's mark (:attr:`tessera.isa.instruction.Instruction.issued_by`); an instruction
    so marked has the issuing instruction's address."""
    by = getattr(ins, "issued_by", None)
    return by if isinstance(by, str) and by else None


def expands(ins: Any) -> bool:
    """Is ``ins`` a fetched instruction that issues others while it runs (its row has the
    ``expands`` flag)?  A trace lists it before what it issues, not when it retires."""
    flags = getattr(getattr(ins, "encoding", None), "flags", ())
    return EXPANDS in flags and issued_by(ins) is None


def unit_of(ins: Any) -> str:
    """The execution unit that runs ``ins`` (its row's ``unit``), ``""`` when not declared."""
    unit = getattr(getattr(ins, "encoding", None), "unit", "")
    return unit if isinstance(unit, str) else ""


def _safe_name(name: Any) -> bool:
    return isinstance(name, str) and bool(name) and not any(c in name for c in " =,:\"\\[]\n")


class ArchLayout:
    """How one architecture's instructions and registers are written in traces.

    Register names are the ones the architecture's disassembler prints for a register
    operand of that file (``a0``, not ``x10``, for RISC-V), else the file's own
    names; a file whose names are unusable (empty, duplicated across files, or with
    characters a trace line uses as punctuation) is written ``file[index]``.  Only
    files with storage are traced (``RegisterFile.storage``); they are listed in
    :attr:`files` in the architecture's order, which is also the order of
    :attr:`AgentState.lives <tessera_trace.agents.AgentState>`.
    """

    def __init__(self, arch: Any) -> None:
        self.arch = arch
        self.dis = arch.disassembler_class()(arch)
        self.pc_digits = max(8, (arch.address_bits + 3) // 4)
        self.files: list[str] = [rf.name for rf in arch.register_files if rf.storage]
        #: the execution units the rows declare, in the order they first appear in the table
        self.units: list[str] = list(dict.fromkeys(u for u in map(unit_of, arch.encodings) if u))
        self.names: list[list[str]] = []
        self.digits: list[int] = []
        self.nbytes: list[int] = []
        taken: set[str] = set()
        for rf in arch.register_files:
            if not rf.storage:
                continue
            names = self._disassembler_names(rf)
            if (len(names) != rf.count or not all(_safe_name(n) for n in names)
                    or len(set(names)) != len(names) or taken & set(names)):
                names = [f"{rf.name}[{i}]" for i in range(rf.count)]
            taken.update(names)
            self.names.append(names)
            self.nbytes.append(max(1, (rf.width + 7) // 8))
            self.digits.append(2 * self.nbytes[-1])

    def _disassembler_names(self, rf: Any) -> list[str]:
        """What the disassembler prints for each register of ``rf`` (or the file's names)."""
        for field in self.arch.fields:
            if field.kind == "reg" and field.regfile == rf.name:
                try:
                    return [self.dis.operand(field, i, 0) for i in range(rf.count)]
                except Exception:  # noqa: BLE001 - a custom disassembler: fall back to names
                    break
        return list(rf.names)

    def asm(self, ins: Any) -> str:
        """The disassembly of a decoded instruction, on one line (never raises)."""
        try:
            text = self.dis.text(ins)
        except Exception:  # noqa: BLE001 - e.g. a plugin-decoded form the table does not know
            try:
                text = self.dis.word(ins.word, ins.address)
            except Exception:  # noqa: BLE001
                text = str(getattr(ins, "mnemonic", "?"))
        return " ".join(str(text).split())

    def listed(self, ins: Any) -> str:
        """The disassembly as a commit log lists it: an instruction issued by another one
        is indented two columns per level of issuer and names it (``  sfpiadd … (MOP)``,
        ``    sfpnop (REPLAY from MOP)``)."""
        asm = self.asm(ins)
        by = issued_by(ins)
        if by is None:
            return asm
        return f"{'  ' * (by.count(' from ') + 1)}{asm}  ({by})"

    def word_digits(self, ins: Any) -> int:
        return max(2, 2 * int(getattr(ins, "size", 0) or self.arch.word_bytes))
