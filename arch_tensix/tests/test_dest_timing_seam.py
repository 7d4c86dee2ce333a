"""What a timing model learns of matrix-unit Dest writes (hazards.dest_note / dest_blocks /
accumulates): Dst.md's four-cycle read-after-write window is per aligned 8x16 block."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from tensix_matrix_support import _DECODERS, ELWADD, ELWMUL, ELWSUB, elw, gapool, mvmul

from tessera_tensix import hazards
from tessera_tensix.dest import ADJ16
from tessera_tensix.matrix import dest_span


def decoded(word: int):
    return _DECODERS["bh"].decode(word, 0x40)


def test_a_write_leaves_a_note_of_its_rows():
    thread = SimpleNamespace(frontend=SimpleNamespace(recent=None, shift=0), core=SimpleNamespace())
    ins = decoded(mvmul("bh", 16))
    rows = np.arange(16, 24)
    hazards.dest_written(thread, ins, rows, False)
    assert thread.dest_note[0] is rows and thread.dest_note[1] is False
    assert hazards.dest_blocks(*thread.dest_note) == {2}


def test_blocks_are_aligned_8_row_groups_of_physical_rows():
    assert hazards.dest_blocks(np.arange(4, 12), False) == {0, 1}        # straddles two blocks
    # a Dst32b write covers both halves of its cells: the high rows and the rows 8 on
    assert hazards.dest_blocks(np.arange(0, 8), True) == {0, 1}
    # a dest_span number (MVMUL's fast path) decodes to the same rows
    span = dest_span(40, 8, 1, 0, 0, True)
    assert hazards.dest_blocks(span, False) == {int(r) >> 3 for r in ADJ16[0][40:48]} == {5}


def test_which_instructions_read_the_rows_they_write():
    assert hazards.accumulates(decoded(mvmul("bh")))
    assert hazards.accumulates(decoded(gapool("bh")))
    assert hazards.accumulates(decoded(elw(ELWMUL, "bh")))
    assert not hazards.accumulates(decoded(elw(ELWADD, "bh")))
    assert hazards.accumulates(decoded(elw(ELWADD, "bh", add_dst=1)))
    assert hazards.accumulates(decoded(elw(ELWSUB, "bh", add_dst=1)))
