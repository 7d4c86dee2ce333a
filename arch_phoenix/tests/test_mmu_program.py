"""End to end with the real encoding table: a software TLB-miss handler and a user program."""

from __future__ import annotations

from mmu_support import USER, R, Tree, W, X, ptbr, set_mode, tlb_entry

from tessera.engine.agent import RUNNABLE
from tessera.machine import Machine
from tessera_phoenix import causes
from tessera_phoenix.arch import PHOENIX
from tessera_phoenix.asm import PhoenixAssembler

HANDLER = 0xFFFC_0000
ENTRY = 0xFFFC_1000
VA = 0x0040_0000
PA = 0x0001_0000

# Machine-mode handler for exceptions from user mode (TVEC3 + 0): install the prepared
# entry for the page of BADADDR in way 0 of its set, then retry the instruction.
MISS_HANDLER = """
        csrrd   r3, r0, ubadaddr    ; BADADDR of the mode the fault came from
        srli    r4, r3, 14
        andi    r4, r4, 0x3FF
        slli    r4, r4, 5           ; Ra = set << 5 | way 0
        ldi     r6, 0xFFFC1000
        load    v1, 0[r6]           ; the prepared 16-word TLB image
        tlbrw   v2, r4, v1
        rti
"""

USER_CODE = """
        ldi     r5, 77
        ldi     r7, 0x1234
        store   r7, 0x40[r0]
        load    r8, 0x40[r0]
self:   bra     self
"""


def assemble(text: str, base: int) -> bytes:
    program = PhoenixAssembler(PHOENIX).assemble(text, base=base)
    start, data = program.image()
    assert start == base
    return data


def machine() -> Machine:
    return Machine(PHOENIX, host=None, config={"dram": 1 << 20, "threads": 1})


def test_software_managed_tlb_miss_handler_maps_the_code_page():
    m = machine()
    t = m.agents[0]
    space = m.space
    space.write_bytes(HANDLER, assemble(MISS_HANDLER, HANDLER))
    space.write_bytes(PA, assemble(USER_CODE, VA))
    for i, word in enumerate(tlb_entry(VA, PA, R | W | X)):
        space.write(ENTRY + 4 * i, 4, word)
    t.shared.tvec[3] = HANDLER
    t.ptbr = ptbr(s=True)
    set_mode(t, USER)
    t.space.flush()
    t.pc = VA
    result = m.run(max_steps=200)
    assert result.reason == "halted"
    assert t.gpr[5] == 77 and t.gpr[8] == 0x1234
    assert t.cause[USER] == causes.TLB and t.badaddr[USER] == 0x40   # the last miss: the data page
    assert space.read(PA + 0x40, 4) == 0x1234                       # VA 0x40: same prepared page
    assert t.traps == 2                                               # code page, then data page
    assert t.mode == USER


def test_user_program_under_a_hardware_walked_table():
    m = machine()
    t = m.agents[0]
    tree = Tree(t)
    tree.map(VA, PA, R | X)
    tree.map(0, 0x2_0000, R | W)
    m.space.write_bytes(PA, assemble(USER_CODE, VA))
    t.ptbr = tree.ptbr(al=1)
    set_mode(t, USER)
    t.space.flush()
    t.pc = VA
    t.status = RUNNABLE
    result = m.run(max_steps=200)
    assert result.reason == "halted" and t.traps == 0
    assert t.gpr[8] == 0x1234 and m.space.read(0x2_0040, 4) == 0x1234
