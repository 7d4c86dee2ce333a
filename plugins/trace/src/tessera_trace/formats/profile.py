"""``--trace profile``: where the time goes, written when the trace is closed.

::

    # tessera trace profile: 600004 instructions retired, 600004 cycles (rv32im; agents: hart0)
    # top 3 of 8 PCs
    #      count        %      cycles  pc          instruction
          200000   33.33%      200000  0x00010010  add a0, a0, a1
    ...
    # instruction mix: 5 mnemonics
    #      count        %  mnemonic
          200001   33.33%  addi

The per-retirement cost is one increment of a counter that belongs to the decode-cache
entry, so profiling is the cheapest format.  Counts are summed per PC over all traced
agents (and over every entry decoded at that PC, should the code there change); rows
are ordered by count, then by PC or mnemonic, so reports are stable.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from tessera_trace.filters import FOREVER
from tessera_trace.formats.base import Format, Observer
from tessera_trace.layout import ArchLayout

DEFAULT_TOP = 20


class ProfileFormat(Format):
    name = "profile"
    default_out = "trace.profile.txt"

    def __init__(self, tracer: Any) -> None:
        super().__init__(tracer)
        states = tracer.states
        sight = tracer.sight
        first = tracer.window.first
        last = tracer.window.last
        n = 0
        simple = not tracer.agent_names and tracer.window.first == 0 and tracer.window.last >= FOREVER
        # (address, mnemonic, asm, cycles, counter cell, pc digits) per decode-cache entry
        self.entries: list[tuple[int, str, str, int, list[int], int]] = []
        entries = self.entries

        def make(layout: ArchLayout, ins: Any, traced: bool) -> Observer | None:
            if not traced:
                return None
            cell = [0]
            entries.append((ins.address, ins.mnemonic, layout.asm(ins), int(ins.cycles), cell,
                            layout.pc_digits))
            if simple:
                def count(agent: Any, ins: Any) -> None:
                    cell[0] += 1

                return count

            def observer(agent: Any, ins: Any) -> None:
                nonlocal n
                try:
                    st = states[agent]
                except KeyError:
                    st = sight(agent)
                if st is None:
                    return
                i = n
                n = i + 1
                if first <= i < last:
                    cell[0] += 1

            return observer

        def active() -> bool:
            return first <= n < last

        self.make = make  # type: ignore[assignment]
        self.active = active  # type: ignore[method-assign]

    def finish(self) -> str:
        tracer = self.tracer
        top = tracer.top
        by_pc: dict[int, list[Any]] = {}
        mix: dict[str, int] = defaultdict(int)
        total = cycles = 0
        for address, mnemonic, asm, price, cell, digits in self.entries:
            count = cell[0]
            if not count:
                continue
            total += count
            cycles += count * price
            mix[mnemonic] += count
            row = by_pc.get(address)
            if row is None:
                by_pc[address] = [count, count * price, {asm: count}, digits]
            else:
                row[0] += count
                row[1] += count * price
                row[2][asm] = row[2].get(asm, 0) + count
        machine = tracer.machine
        arch = getattr(getattr(machine, "arch", None), "name", "?")
        agents = ", ".join(st.name for st in tracer.states.values() if st is not None)
        scope = [f"{arch}; agents: {agents}"]
        if tracer.pcs is not None:
            scope.append(f"pc {tracer.pcs}")
        if tracer.window.first or tracer.window.last < FOREVER:
            scope.append(f"window {tracer.window}")
        lines = [f"# tessera trace profile: {total} instructions retired, {cycles} cycles "
                 f"({'; '.join(scope)})\n"]

        def pct(count: int) -> str:
            return f"{100.0 * count / total:7.2f}%" if total else "   0.00%"

        rows = sorted(by_pc.items(), key=lambda kv: (-kv[1][0], kv[0]))
        lines.append(f"# top {min(top, len(rows))} of {len(rows)} PCs\n")
        lines.append(f"# {'count':>10} {'%':>8} {'cycles':>11}  {'pc':<10}  instruction\n")
        for address, (count, cyc, asms, digits) in rows[:top]:
            asm = " | ".join(sorted(asms, key=lambda a: (-asms[a], a)))
            lines.append(f"  {count:>10} {pct(count)} {cyc:>11}  0x{address:0{digits}x}  {asm}\n")
        ranked = sorted(mix.items(), key=lambda kv: (-kv[1], kv[0]))
        lines.append(f"# instruction mix: {len(ranked)} mnemonics\n")
        lines.append(f"# {'count':>10} {'%':>8}  mnemonic\n")
        for mnemonic, count in ranked:
            lines.append(f"  {count:>10} {pct(count)}  {mnemonic}\n")
        return "".join(lines)

    def cut_note(self, lines: int, written: int, limit: int) -> str:
        return f"# profile cut after {lines} lines: the --trace-limit of {limit} bytes was reached\n"
