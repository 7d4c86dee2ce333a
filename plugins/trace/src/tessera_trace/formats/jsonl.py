"""``--trace jsonl``: one JSON object per retired instruction, one per line.

::

    {"agent":"hart0","index":0,"pc":65536,"word":1299,"asm":"addi a0, zero, 0","regs":{},"mem":[]}
    {"agent":"hart0","index":4,"pc":65552,"word":4271975971,"asm":"sw a0, -4(sp)","regs":{},"mem":[["w",131068,4,5]]}

The content of the text format as data: ``index`` (the record's position in the
filtered retirement stream, see ``--trace-window``), ``agent``, ``pc``, ``word``,
``asm``, ``regs`` (register name -> new value, for registers that changed) and
``mem`` (``[kind, address, size, value]`` with kind ``"w"`` for a store and ``"r"``
for a load, in program order).  Numbers are plain integers.  Objects with a ``note``
key are not instructions: ``{"note": "trap", ...}`` and ``{"note": "cut", ...}``.
"""

from __future__ import annotations

import json
from typing import Any

from tessera_trace.agents import AgentState
from tessera_trace.effects import json_labels, json_memory
from tessera_trace.formats.commit import CommitFormat
from tessera_trace.layout import ArchLayout, issued_by


def _compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


class JsonlFormat(CommitFormat):
    name = "jsonl"
    default_out = "trace.jsonl"
    indexed = True
    tail = '},"mem":[]}'

    def __init__(self, tracer: Any) -> None:
        super().__init__(tracer)
        self._traps: dict[Any, dict[str, Any]] = {}

    def head(self, st: AgentState) -> str:
        return '{"agent":' + _compact(st.name) + ',"index":'

    def labels(self, layout: ArchLayout) -> list[list[str]]:
        return json_labels(layout)

    def entry(self, layout: ArchLayout, ins: Any) -> tuple[str, str]:
        by = issued_by(ins)
        issued = "" if by is None else f',"issued_by":{_compact(by)}'
        prefix = f',"pc":{ins.address},"word":{ins.word},"asm":{_compact(layout.asm(ins))}{issued},"regs":{{'
        return prefix + self.tail, prefix

    def compose(self, prefix: str, regs: list[str], mem: list[str]) -> str:
        return f'{prefix}{",".join(regs)}}},"mem":[{",".join(mem)}]}}\n'

    def memory_pieces(self, pending: list[Any], layout: ArchLayout) -> list[str]:
        return json_memory(pending)

    def on_trap(self, st: AgentState, agent: Any, trap: Any) -> None:
        if not self.active():
            return
        note = self._traps[agent] = self._trap(st, agent, trap)
        self.notes.add(agent, _compact(note) + "\n")

    @staticmethod
    def _trap(st: AgentState, agent: Any, trap: Any) -> dict[str, Any]:
        return {"note": "trap", "agent": st.name, "pc": int(getattr(agent, "pc", 0) or 0),
                "trap": str(trap.name), "cause": int(trap.cause), "tval": int(trap.tval)}

    def on_trap_taken(self, st: AgentState, agent: Any, trap: Any) -> None:
        layout = st.layout
        note = self._traps.pop(agent, None)

        def regs(found: list[tuple[int, int, Any]]) -> dict[str, Any]:
            assert layout is not None
            return {layout.names[fi][ri]: int(v) for fi, ri, v in found}

        self.notes.taken(st, agent, lambda _text, found: _compact({**(note or {}), "regs": regs(found)}) + "\n",
                         lambda found: _compact({"note": "trap-entry", "agent": st.name, "regs": regs(found)}) + "\n")

    def cut_note(self, lines: int, written: int, limit: int) -> str:
        return _compact({"note": "cut", "lines": lines, "bytes": written, "limit": limit,
                         "text": f"trace cut after {lines} lines: the --trace-limit of {limit} bytes "
                                 "was reached; the run went on untraced"}) + "\n"
