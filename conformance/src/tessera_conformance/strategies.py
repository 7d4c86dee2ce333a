"""Hypothesis strategies and word generators derived from an encoding table (no ISA knowledge)."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from tessera.isa import Architecture, Encoding, Field


def fixed(max_examples: int) -> settings:
    """Reproducible settings: derandomized (a fixed seed), no example database, no deadline."""
    return settings(max_examples=max(1, max_examples), derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck), print_blob=False,
                    phases=[Phase.explicit, Phase.generate, Phase.shrink])


def _multiple(lo: int, hi: int, step: int) -> tuple[int, int] | None:
    """The smallest and largest multiples of ``step`` in ``[lo, hi]``."""
    first = -((-lo) // step) * step
    last = (hi // step) * step
    return (first, last) if first <= last else None


def operand_strategy(arch: Architecture, field: Field, address: int) -> st.SearchStrategy[int]:
    """Values ``field`` can hold that the disassembler prints and the assembler reads back."""
    step = 1 << field.scale
    lo, hi = field.value_range()
    if field.kind == "reg":
        count = arch.register_file_map[field.regfile].count  # type: ignore[index]
        return st.integers(max(lo, 0), min(hi, count - 1))
    if field.kind == "enum" and field.names:
        return st.integers(max(lo, 0), min(hi, len(field.names) - 1))
    if field.kind == "pcrel":
        half = 1 << (arch.address_bits - 1)  # the assembler reads targets modulo the address space
        lo, hi = max(lo, -half), min(hi, half - 1)
    span = _multiple(lo, hi, step)
    if span is None:  # pragma: no cover - a field that holds no value
        return st.just(0)
    first, last = span
    return st.integers(first // step, last // step).map(lambda k: k * step)


@st.composite
def row_operands(draw: Any, arch: Architecture, enc: Encoding) -> tuple[int, dict[str, int]]:
    """``(address, operands)`` for one row: an aligned address and a value for each operand."""
    size = arch.word_bytes
    top = (1 << arch.address_bits) - size
    address = draw(st.integers(0, top // size), label="address") * size
    fields = arch.field_map
    ops = {name: draw(operand_strategy(arch, fields[name], address), label=name)
           for name in enc.operand_names}
    return address, ops


def random_words(arch: Architecture, rnd: random.Random, n: int) -> list[int]:
    """``n`` words: half uniformly random, half shaped like a random row (its fixed bits set)."""
    bits = arch.word_bits
    rows = arch.encodings
    out = []
    for i in range(n):
        noise = rnd.getrandbits(bits)
        if rows and i % 2:
            enc = rows[rnd.randrange(len(rows))]
            out.append(enc.match | (noise & ~enc.mask))
        else:
            out.append(noise)
    return out
