"""``--dump-state text`` for rfPhoenix (``Architecture.dump_text``).

The JSON dump keeps the raw words (``thread.snapshot_state``, ``Shared.state``);
read by a person, they need decoding: the mode by name, CAUSE/BADADDR and TVEC per
operating mode, the vector registers as 32-bit lanes, and above all the TLB, which
is stored as 12 raw words per entry and shown here as a table of way, set, virtual
page, ASID, physical page, permission bits and level (spec 5.4).  The PMA table
becomes one row per region with its rights.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tessera.dumptext import CORE_AGENT_KEYS, INDENT, list_row, render, scalar, table
from tessera_phoenix import causes
from tessera_phoenix.mmu.pma import AT_C, AT_R, AT_W, AT_X, LOCKED
from tessera_phoenix.mmu.tlb import PAGE_BITS

MODES = ("user", "supervisor", "hypervisor", "machine")
#: PTE bits 9..2 of TLB word 0, most significant first (spec 5.4)
PTE_FLAGS = (("s", 9), ("m", 8), ("a", 7), ("g", 6), ("c", 5), ("r", 4), ("w", 3), ("x", 2))
#: the thread keys rendered here; anything else (a later addition) goes through the generic rule
THREAD_KEYS = frozenset({"tid", "mode", "status_word", "depth", "sp_alias", "eip", "ptbr", "asid",
                         "gie", "ssm_pending", "cause", "badaddr", "pending_irq", "vectors"})
SHARED_KEYS = frozenset({"kind", "cr0", "hmask", "dbcr", "dbsr", "tvec", "dbad", "dbam", "time",
                         "irq_schedule", "queues", "mmu", "pma"})


def _w(value: int) -> str:
    return f"{value:#010x}"


def _cause(value: int) -> str:
    return f"{value} ({causes.name(value)})" if value else "0"


def _per_mode(rows: dict[str, list[str]]) -> list[str]:
    """A table with one column per operating mode and one row per register."""
    return table([{"": name, **dict(zip(MODES, cells, strict=False))} for name, cells in rows.items()],
                 ["", *MODES])


def thread_lines(st: Mapping[str, Any]) -> list[str]:
    mode = st.get("mode", 0)
    lines = [f"tid {st.get('tid')}  mode {mode} ({MODES[mode & 3]})  status_word {_w(st.get('status_word', 0))}  "
             f"depth {st.get('depth')}  sp_alias r{st.get('sp_alias')}  eip {_w(st.get('eip', 0))}",
             f"ptbr {_w(st.get('ptbr', 0))}  asid {st.get('asid')}  gie {scalar(st.get('gie'))}  "
             f"ssm_pending {scalar(st.get('ssm_pending'))}"]
    lines += _per_mode({"cause": [_cause(c) for c in st.get("cause", [])],
                        "badaddr": [_w(a) for a in st.get("badaddr", [])]})
    pending = st.get("pending_irq") or []
    lines.append("pending_irq " + (", ".join(f"level {lvl} cause {_cause(c)}" for lvl, c in pending)
                                   if pending else "none"))
    vectors = st.get("vectors") or {}
    if vectors:
        lanes = max(len(v) for v in vectors.values())
        lines.append(f"vectors (non-zero; {lanes} lanes of 32 bits)")
        width = max(len(name) for name in vectors)
        for name, lanes_ in vectors.items():
            lines.extend(INDENT + line for line in list_row(name, lanes_, width, digits=8))
    else:
        lines.append("vectors all 0")
    rest = {k: v for k, v in st.items() if k not in THREAD_KEYS and k not in CORE_AGENT_KEYS}
    return lines + render(rest)


def tlb_rows(entries: list[list[int]]) -> list[dict[str, str]]:
    """Decoded TLB entries ``[way, set, word0 .. word11]`` (``MMU.state``)."""
    rows = []
    for way, s, *words in entries:
        w0, w1 = words[0], words[1]
        va = ((w1 >> 24) << 24) | (s << PAGE_BITS)
        pa = ((w1 & 0xFFF) << 36) | ((w0 >> 10) << PAGE_BITS)
        flags = "".join(letter if (w0 >> bit) & 1 else "-" for letter, bit in PTE_FLAGS)
        more = " ".join(f"w{i}={v:#x}" for i, v in enumerate(words) if i >= 2 and v)
        rows.append({"way": str(way), "set": f"{s:#05x}", "va": _w(va),
                     "asid": "global" if w0 & 0x40 else str((w1 >> 12) & 0x3FF), "pa": _w(pa),
                     "flags": flags, "lvl": str(w0 & 3), "valid": "yes" if w0 & 0x1C else "no",
                     "other words": more})
    return rows


def pma_rows(regions: list[list[int]]) -> list[dict[str, str]]:
    """The 8 PMA regions ``[start, end, pmt, cta, at, lock]`` (``PMA.state``)."""
    rows = []
    for n, (start, end, pmt, cta, at, lock) in enumerate(regions):
        rights = "".join(c if at & bit else "-" for c, bit in (("r", AT_R), ("w", AT_W), ("x", AT_X),
                                                               ("c", AT_C)))
        rows.append({"region": str(n), "start": _w(start), "end": _w(end), "rights": rights,
                     "at": f"{at:#07x}", "pmt": _w(pmt), "cta": _w(cta),
                     "lock": "locked" if lock == LOCKED else _w(lock)})
    return rows


def shared_lines(st: Mapping[str, Any]) -> list[str]:
    cr0 = st.get("cr0", 0)
    enabled = [f"t{i}" for i in range(16) if (cr0 >> i) & 1]
    lines = [f"cr0 {cr0:#06x} (threads enabled: {', '.join(enabled) or 'none'})  "
             f"hmask {st.get('hmask', 0):#06x}  dbcr {_w(st.get('dbcr', 0))}  dbsr {_w(st.get('dbsr', 0))}"]
    lines += _per_mode({"tvec": [_w(v) for v in st.get("tvec", [])]})
    lines += table([{"": name, **{f"{i}": _w(v) for i, v in enumerate(st.get(name, []))}}
                    for name in ("dbad", "dbam")])
    timesec, time, clock0 = (list(st.get("time") or []) + [0, 0, 0])[:3]
    lines.append(f"time: timesec {timesec}  time {time}  (written at clock {clock0})")
    schedule = st.get("irq_schedule") or []
    if schedule:
        lines.append("irq_schedule")
        lines += [INDENT + line for line in table([{"step": str(a), "thread": f"t{t}", "level": str(lvl)}
                                                    for a, t, lvl in schedule])]
    else:
        lines.append("irq_schedule none")
    queues = st.get("queues") or {}
    if queues:
        lines.append("queues (non-empty)")
        width = max(len(f"q{q}") for q in queues)
        for q, items in queues.items():
            lines += [INDENT + line for line in list_row(f"q{q}", items, width)]
    mmu = st.get("mmu")
    if mmu:
        entries = mmu.get("tlb", [])
        lines.append(f"tlb: {len(entries)} stored entries (5 ways x 1024 sets)  "
                     f"rng {_w(mmu.get('rng', 0))}  generation {mmu.get('generation')}")
        if entries:
            lines += [INDENT + line for line in table(tlb_rows(entries))]
    pma = st.get("pma")
    if pma:
        lines.append(f"pma: {'enabled' if pma.get('enabled') else 'disabled (--no-pma)'}")
        lines += [INDENT + line for line in table(pma_rows(pma.get("regions", [])))]
    rest = {k: v for k, v in st.items() if k not in SHARED_KEYS}
    return lines + render(rest)


def dump_text(section: str, name: str, state: Mapping[str, Any]) -> list[str] | None:
    """``Architecture.dump_text``: threads and the shared state (sync object ``cr0``)."""
    if section == "agent" and "status_word" in state:
        return thread_lines(state)
    if section == "sync" and state.get("kind") == "cr0":
        return shared_lines(state)
    return None
