"""The profile: hot PCs and instruction mix, counted exactly."""

from __future__ import annotations

import re

from trace_support import RV_LOOP, retired, rv_machine, trace


def parse(report: str) -> tuple[int, list[tuple[int, str, str]], dict[str, int]]:
    lines = report.splitlines()
    total = int(re.match(r"# tessera trace profile: (\d+) instructions", lines[0]).group(1))
    rows, mix, section = [], {}, None
    for line in lines[1:]:
        if line.startswith("# top"):
            section = "top"
        elif line.startswith("# instruction mix"):
            section = "mix"
        elif not line.startswith("#"):
            fields = line.split()
            if section == "top":
                rows.append((int(fields[0]), fields[3], " ".join(fields[4:])))
            else:
                mix[fields[2]] = int(fields[0])
    return total, rows, mix


def test_counts_add_up_to_the_retired_instructions():
    machine = rv_machine(RV_LOOP)
    total, rows, mix = parse(trace(machine, "profile"))
    assert total == retired(machine) == 55
    assert sum(mix.values()) == total
    assert mix == {"addi": 3 + 10, "lui": 1, "add": 10, "sw": 10, "lw": 10, "bne": 10, "ecall": 1}
    assert [count for count, _pc, _asm in rows[:5]] == [10] * 5
    assert ("0x0001000c", "add a0, a0, a1") in [(pc, asm) for _c, pc, asm in rows]


def test_top_n_limits_the_pc_rows_and_percentages_are_of_the_total():
    report = trace(rv_machine(RV_LOOP), "profile", top=2)
    _total, rows, _mix = parse(report)
    assert len(rows) == 2
    assert "# top 2 of 10 PCs" in report
    assert "  18.18%" in report                            # 10 of 55
