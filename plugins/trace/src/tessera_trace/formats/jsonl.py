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
from tessera_trace.layout import ArchLayout


def _compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


class JsonlFormat(CommitFormat):
    name = "jsonl"
    default_out = "trace.jsonl"
    indexed = True
    tail = '},"mem":[]}\n'

    def head(self, st: AgentState) -> str:
        return '{"agent":' + _compact(st.name) + ',"index":'

    def labels(self, layout: ArchLayout) -> list[list[str]]:
        return json_labels(layout)

    def entry(self, layout: ArchLayout, ins: Any) -> tuple[str, str]:
        prefix = f',"pc":{ins.address},"word":{ins.word},"asm":{_compact(layout.asm(ins))},"regs":{{'
        return prefix + self.tail, prefix

    def compose(self, prefix: str, regs: list[str], mem: list[str]) -> str:
        return f'{prefix}{",".join(regs)}}},"mem":[{",".join(mem)}]}}\n'

    def memory_pieces(self, pending: list[Any], layout: ArchLayout) -> list[str]:
        return json_memory(pending)

    def on_trap(self, st: AgentState, agent: Any, trap: Any) -> None:
        if not self.active():
            return
        self.tracer.out.add(_compact({"note": "trap", "agent": st.name, "pc": int(getattr(agent, "pc", 0) or 0),
                                      "trap": str(trap.name), "cause": int(trap.cause),
                                      "tval": int(trap.tval)}) + "\n")

    def cut_note(self, lines: int, written: int, limit: int) -> str:
        return _compact({"note": "cut", "lines": lines, "bytes": written, "limit": limit,
                         "text": f"trace cut after {lines} lines: the --trace-limit of {limit} bytes "
                                 "was reached; the run went on untraced"}) + "\n"
