"""Numeric local labels work in every installed architecture's assembler.

Each program is written twice, with ``1:``/``1b``/``1f`` and with named labels; both
must assemble to the same bytes (so pseudo-instructions, postfix relaxation and
plugin operand readers all resolve local references).  The RISC-V one also runs.
"""

import pytest

from tessera.isa.asm import assemble
from tessera.plugins import PluginHost

# name: (base, program with local labels, the same with named labels)
PROGRAMS = {
    "toy": (0, """
        li r1, 3
1:      addi r1, r1, -1
        bne r1, r0, 1b
        beq r0, r0, 1f
        nop
1:      halt r0
        .word 1b, 1f
1:
""", """
        li r1, 3
a:      addi r1, r1, -1
        bne r1, r0, a
        beq r0, r0, b
        nop
b:      halt r0
        .word b, c
c:
"""),
    "rv32im": (0x10000, """
_start: li    t0, 5
        li    a0, 0
1:      addi  a0, a0, 2
        addi  t0, t0, -1
        bnez  t0, 1b
        j     1f
        li    a0, 99
1:      la    a1, 2f
        call  1f
        li    a7, 93
        ecall
1:      ret
2:      .word 1b
""", """
_start: li    t0, 5
        li    a0, 0
a:      addi  a0, a0, 2
        addi  t0, t0, -1
        bnez  t0, a
        j     b
        li    a0, 99
b:      la    a1, d
        call  c
        li    a7, 93
        ecall
c:      ret
d:      .word c
"""),
    "phoenix": (0xFFFD0000, """
        ldi     r1, 3
1:      sub     r1, r1, r2
        bne     r1, r0, 1b
        beq     r1, r0, 1f
        ldi     r3, 0x123456789      ; needs postfixes: relaxation repeats the passes
1:      bra     1b
        .word   1b
""", """
        ldi     r1, 3
a:      sub     r1, r1, r2
        bne     r1, r0, a
        beq     r1, r0, b
        ldi     r3, 0x123456789      ; needs postfixes: relaxation repeats the passes
b:      bra     b
        .word   b
"""),
    "tile": (0x10000, """
1:      tmma.bf16_fp32 t0, t4, t5
        bnez  a0, 1b
        j     1f
1:      tsync 1, 1
""", """
a:      tmma.bf16_fp32 t0, t4, t5
        bnez  a0, a
        j     b
b:      tsync 1, 1
"""),
    "tensix": (0, """
1:      sfpload L0,0,3,7
        .word 1b, 1f
1:      end
""", """
a:      sfpload L0,0,3,7
        .word a, b
b:      end
"""),
}


def _arch(name):
    host = PluginHost()
    if name not in host.architectures():
        pytest.skip(f"architecture {name} is not installed")
    return host.architecture(name)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_local_labels_assemble_like_named_ones(name):
    arch = _arch(name)
    base, local, named = PROGRAMS[name]
    got = assemble(arch, local, base=base)
    want = assemble(arch, named, base=base)
    assert got.segments == want.segments and got.size > 0
    assert not any(k[0].isdigit() or ":" in k for k in got.symbols)


def test_riscv_local_label_program_runs():
    arch = _arch("rv32im")
    from tessera.machine import Machine

    program = assemble(arch, PROGRAMS["rv32im"][1], base=0x10000)
    machine = Machine(arch, config={"ram": 1 << 20, "echo": False})
    for address, blob in program.segments:
        machine.space.write_bytes(address, blob)
    machine.set_entry(program.entry)
    result = machine.run(max_steps=1000)
    assert result.exit_code == 10           # five times 2; "li a0, 99" skipped by "j 1f"
    hart = machine.agent("hart0")
    assert hart.x[11] == program.segments[0][0] + len(program.segments[0][1]) - 4  # la a1, 2f
