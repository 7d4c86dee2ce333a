"""Shared helpers for the core tests: a tiny program builder and machine factories.

Programs are built with :class:`tessera.isa.Encoder` and the toy architecture's
encoding table (no assembler).  ``prog`` takes items that are

* ``(mnemonic, {operand: value})`` — an instruction; a ``str`` value of a ``pcrel``
  field (``boff``, ``joff``) is a label turned into an offset from the instruction,
  a ``str`` value of any other field is the label's absolute address;
* ``"name:"`` — a label at the current address;
* an ``int`` — a raw 32-bit word.
"""

from __future__ import annotations

from typing import Any

import pytest

from tessera.isa import Encoder
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_toyarch import TOY

ENC = Encoder(TOY)
FIELDS = TOY.field_map
CONSOLE = 0x3_0000
ROM_BASE = 0x2_0000


def encode(mnemonic: str, **operands: int) -> int:
    """One instruction word."""
    (form,) = TOY.encodings_named(mnemonic)
    return ENC.encode(form, operands)


def _layout(items: tuple[Any, ...], base: int) -> dict[str, int]:
    labels: dict[str, int] = {}
    addr = base
    for item in items:
        if isinstance(item, str):
            labels[item.rstrip(":")] = addr
        else:
            addr += 4
    return labels


def words(*items: Any, base: int = 0) -> list[int]:
    """The instruction words of a program (see the module docstring)."""
    labels = _layout(items, base)
    out: list[int] = []
    addr = base
    for item in items:
        if isinstance(item, str):
            continue
        if isinstance(item, int):
            out.append(item & 0xFFFF_FFFF)
        else:
            mnemonic, ops = item
            resolved = {}
            for name, value in ops.items():
                if isinstance(value, str):
                    target = labels[value]
                    value = target - addr if FIELDS[name].kind == "pcrel" else target
                resolved[name] = value
            out.append(encode(mnemonic, **resolved))
        addr += 4
    return out


def prog(*items: Any, base: int = 0) -> bytes:
    """The bytes of a program (little-endian words)."""
    return b"".join(w.to_bytes(4, "little") for w in words(*items, base=base))


def labels(*items: Any, base: int = 0) -> dict[str, int]:
    """Label addresses of a program written for :func:`prog`."""
    return _layout(items, base)


class Plugin:
    """Base for in-test plugin objects: declares the supported plugin API."""

    TESSERA_API_VERSION = 1


def make_host(*plugins: Any) -> PluginHost:
    """An empty host (no entry points, no environment) with ``plugins`` registered.

    Each plugin is an object, or a ``(name, object)`` pair.
    """
    host = PluginHost(load_entry_points=False, use_environment=False)
    for i, p in enumerate(plugins):
        name, obj = p if isinstance(p, tuple) else (f"p{i}", p)
        rec = host.register(obj, name)
        assert rec.status == "active", (name, rec.status, rec.reason)
    return host


def new_machine(code: bytes = b"", *, host: PluginHost | None = None, cores: int = 2,
                plugins: tuple[Any, ...] = (), quantum: int | None = None,
                memory_cap: int | None = None, at: int = 0, **config: Any) -> Machine:
    """A toy machine with ``code`` written at ``at`` (console echo off)."""
    if host is None:
        host = make_host(*plugins)
    kw: dict[str, Any] = {}
    if memory_cap is not None:
        kw["memory_cap"] = memory_cap
    cfg = {"echo": False, "cores": cores, **config}
    m = Machine(TOY, host=host, config=cfg, quantum=quantum, **kw)
    if code:
        m.space.write_bytes(at, code, force=True)
    return m


@pytest.fixture
def machine_factory():
    """``machine_factory(code, cores=2, plugins=(), quantum=None, host=None, **config)``."""
    return new_machine


@pytest.fixture
def toy_machine():
    """``toy_machine(*items)``: a two-core machine running the program built from ``items``."""

    def make(*items: Any, **kw: Any) -> Machine:
        return new_machine(prog(*items), **kw)

    return make


# ----------------------------------------------------------------- shared programs

def sum_loop(n: int = 10) -> tuple[Any, ...]:
    """Every core sums n..1 into r3 and halts with it (r2 counts down)."""
    return (
        ("li", dict(rd=2, limm=n)),
        ("li", dict(rd=3, limm=0)),
        "loop:",
        ("add", dict(rd=3, rs1=3, rs2=2)),
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("bne", dict(rd=2, rs1=0, boff="loop")),
        ("halt", dict(rd=3)),
    )


def producer_consumer(n: int = 20) -> tuple[Any, ...]:
    """core0 writes 1..n to a shared slot, one per sem0/sem1 hand-shake; core1 sums them.

    core1 stores the sum at ``total`` and halts with it; core0 halts with 0.  Uses
    semaphores in both directions, so the interleaving matters for every step.
    """
    return (
        ("cid", dict(rd=1)),
        ("bne", dict(rd=1, rs1=0, boff="consumer")),
        # producer
        ("li", dict(rd=2, limm=1)),
        ("li", dict(rd=3, limm=n + 1)),
        ("li", dict(rd=4, limm="slot")),
        "ploop:",
        ("st", dict(rd=2, rs1=4, imm=0)),
        ("sem.post", dict(sem=0)),
        ("sem.wait", dict(sem=1)),
        ("addi", dict(rd=2, rs1=2, imm=1)),
        ("bne", dict(rd=2, rs1=3, boff="ploop")),
        ("halt", dict(rd=0)),
        "consumer:",
        ("li", dict(rd=5, limm=0)),
        ("li", dict(rd=6, limm=n)),
        ("li", dict(rd=4, limm="slot")),
        "cloop:",
        ("sem.wait", dict(sem=0)),
        ("ld", dict(rd=7, rs1=4, imm=0)),
        ("add", dict(rd=5, rs1=5, rs2=7)),
        ("sem.post", dict(sem=1)),
        ("addi", dict(rd=6, rs1=6, imm=-1)),
        ("bne", dict(rd=6, rs1=0, boff="cloop")),
        ("li", dict(rd=4, limm="total")),
        ("st", dict(rd=5, rs1=4, imm=0)),
        ("halt", dict(rd=5)),
        "slot:",
        0,
        "total:",
        0,
    )


def racy(n: int = 20) -> tuple[Any, ...]:
    """Both cores increment the shared word ``ctr`` n times with ld/addi/st (lost updates
    depend on the interleaving); each halts with the last value it stored."""
    return (
        ("li", dict(rd=4, limm="ctr")),
        ("li", dict(rd=2, limm=n)),
        "loop:",
        ("ld", dict(rd=3, rs1=4, imm=0)),
        ("addi", dict(rd=3, rs1=3, imm=1)),
        ("st", dict(rd=3, rs1=4, imm=0)),
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("bne", dict(rd=2, rs1=0, boff="loop")),
        ("halt", dict(rd=3)),
        "ctr:",
        0,
    )


def spin(n: int = 0) -> tuple[Any, ...]:
    """An endless loop at address 0 (optionally after ``n`` nops)."""
    return (*[("nop", {})] * n, "top:", ("jmp", dict(joff="top")))


__all__ = ["TOY", "ENC", "encode", "words", "prog", "labels", "Plugin", "make_host", "new_machine",
           "sum_loop", "producer_consumer", "spin", "racy", "CONSOLE", "ROM_BASE"]
