"""``--trace text``: a commit log, one line per retired instruction.

::

    hart0  00010000  00000513  addi a0, zero, 0
    hart0  0001000c  00b50533  add a0, a0, a1                    a0=0x00000005
    hart0  00010010  fea12e23  sw a0, -4(sp)                     mem[0x0001fffc]<-0x00000005
    hart0  00010014  ffc12283  lw t0, -4(sp)                     t0=0x00000005 mem[0x0001fffc]->0x00000005

Columns: agent (padded to the longest agent name), PC, instruction word, disassembly
(padded to 32 columns when effects follow), then the effects: registers whose value
changed (``name=0x...``, as wide as the register), then memory accesses in program
order (``mem[ADDR]<-VALUE`` stores, ``mem[ADDR]->VALUE`` loads; the value is as wide
as the access).  Lines starting with ``#`` are notes (traps, the size-limit cut).
An instruction issued by another one (a Tensix MOP's expansion) is listed after its
issuer, its disassembly indented and naming it (``  sfpiadd L1,L1,0x001,5  (MOP)``:
:meth:`ArchLayout.listed <tessera_trace.layout.ArchLayout.listed>`, :mod:`tessera_trace.issuers`).
Nothing depends on time or object identity, so two runs of a deterministic program
give identical files.

Which registers are compared, and where trap entry's changes go: see
:mod:`tessera_trace.formats.commit`.
"""

from __future__ import annotations

from typing import Any

from tessera_trace.agents import AgentState
from tessera_trace.effects import ADDRESS, VALUE, hex_digits, text_labels, text_memory
from tessera_trace.formats.commit import CommitFormat
from tessera_trace.layout import ArchLayout

ASM_WIDTH = 32


class TextFormat(CommitFormat):
    name = "text"
    default_out = "trace.txt"
    hexed = True

    def head(self, st: AgentState) -> str:
        return f"{st.name:<{self.tracer.width}}  "

    def labels(self, layout: ArchLayout) -> list[list[str]]:
        return text_labels(layout)

    def entry(self, layout: ArchLayout, ins: Any) -> tuple[str, str]:
        asm = layout.listed(ins)
        pc = f"{ins.address:0{layout.pc_digits}x}"
        word = f"{ins.word:0{layout.word_digits(ins)}x}"
        return f"{pc}  {word}  {asm}", f"{pc}  {word}  {asm:<{ASM_WIDTH}}  "

    def compose(self, prefix: str, regs: list[str], mem: list[str]) -> str:
        return prefix + " ".join(regs + mem) + "\n"

    def memory_pieces(self, pending: list[Any], layout: ArchLayout) -> list[str]:
        return text_memory(pending, layout.pc_digits)

    def access_template(self, prefix: str, register: tuple[str, int] | None,
                        accesses: tuple[tuple[int, int], ...], layout: ArchLayout) -> tuple[list[str], list[Any]]:
        # what compose() writes, with holes where hex_digits / the address format write numbers
        items: list[list[Any]] = [] if register is None else [[register[0], (2 * register[1], VALUE)]]
        items += [["mem[0x", (layout.pc_digits, ADDRESS), f"]{'<-' if write else '->'}0x", (2 * size, VALUE)]
                  for write, size in accesses]
        texts, holes = [prefix], []
        for n, item in enumerate(items):
            if n:
                texts[-1] += " "
            for part in item:
                if isinstance(part, str):
                    texts[-1] += part
                else:
                    holes.append(part)
                    texts.append("")
        return texts, holes

    def on_trap(self, st: AgentState, agent: Any, trap: Any) -> None:
        if not self.active():
            return
        pc = int(getattr(agent, "pc", 0) or 0)
        digits = st.layout.pc_digits if st.layout is not None else 8
        self.notes.add(agent, f"# {st.name}: trap at 0x{pc:0{digits}x}: {trap.name} (cause {trap.cause}, "
                              f"value {int(trap.tval):#x})\n")

    def on_trap_taken(self, st: AgentState, agent: Any, trap: Any) -> None:
        layout = st.layout

        def pieces(found: list[tuple[int, int, Any]]) -> str:
            assert layout is not None
            return " ".join(f"{layout.names[fi][ri]}=0x{hex_digits(v, layout.nbytes[fi])}" for fi, ri, v in found)

        self.notes.taken(st, agent, lambda note, found: f"{note[:-1]}; entry set {pieces(found)}\n",
                         lambda found: f"# {st.name}: trap entry set {pieces(found)}\n")
