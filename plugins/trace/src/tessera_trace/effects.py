"""Register and memory effects of one retired instruction, as text pieces.

Which registers an instruction changed is found by the core's record operation
(:mod:`tessera.engine.record`); :func:`changes` finds what *trap entry* changed (the
trap notes), register by register in register-file order, as the core does.

Numbers are formatted with the cheapest exact operations CPython has:
``int.to_bytes(n, "big").hex()`` gives zero-padded hex at about half the cost of
``"%08x" % v``, and ``str(v)`` decimal.
"""

from __future__ import annotations

from typing import Any

from tessera_trace.layout import ArchLayout

#: how a hole of a ledger template (:meth:`Ledger.template <tessera_trace.ledger.Ledger.template>`)
#: is written in hex: as :func:`hex_digits` writes a value, or as ``format(v, "0<digits>x")``
#: writes an address (the same text for every ``int``)
VALUE, ADDRESS = 0, 1


def hex_digits(value: Any, nbytes: int) -> str:
    """``value`` as ``2 * nbytes`` hex digits (more if it does not fit; never raises)."""
    try:
        return value.to_bytes(nbytes, "big").hex()
    except (OverflowError, AttributeError, TypeError):
        try:
            return f"{int(value):0{2 * nbytes}x}"
        except (TypeError, ValueError):
            return str(value)


def text_labels(layout: ArchLayout) -> list[list[str]]:
    """``name=0x`` per register: what precedes the value in the text format."""
    return [[f"{name}=0x" for name in names] for names in layout.names]


def json_labels(layout: ArchLayout) -> list[list[str]]:
    """``"name":`` per register: what precedes the value in the JSON-lines ``regs`` object."""
    return [[f'"{name}":' for name in names] for names in layout.names]


def text_memory(pending: list[tuple[int, int, int, int]], addr_digits: int) -> list[str]:
    """``mem[0xADDR]<-0xVALUE`` (store) / ``->`` (load), in access order; value as wide as the access."""
    return [f"mem[0x{address:0{addr_digits}x}]{'<-' if write else '->'}0x{hex_digits(value, size)}"
            for write, address, size, value in pending]


def json_memory(pending: list[tuple[int, int, int, int]]) -> list[str]:
    """``["w",address,size,value]`` / ``["r",...]`` members of the JSON-lines ``mem`` list."""
    return [f'["{"w" if write else "r"}",{address},{size},{int(value) & ((1 << (8 * size)) - 1)}]'
            for write, address, size, value in pending]


def changes(st: Any) -> list[tuple[int, int, Any]]:
    """Every register that differs from its shadow, as ``(file, index, value)``; shadows updated."""
    found = []
    for fi, (live, shadow) in enumerate(zip(st.lives, st.shadows)):
        if live == shadow:
            continue
        if len(live) != len(shadow):  # a file that changed size: no effects, just follow it
            shadow[:] = live
            continue
        for ri, value in enumerate(live):
            if value != shadow[ri]:
                shadow[ri] = value
                found.append((fi, ri, value))
    return found
