"""Toy-architecture instruction words for the loader and command-line tests.

Words are built with :class:`tessera.isa.Encoder` from the toy encoding table (no
assembler), so these tests do not depend on ``tessera.isa.asm``.
"""

from __future__ import annotations

from tessera.isa import Encoder
from tessera_toyarch import TOY

_ENC = Encoder(TOY)


def encode(mnemonic: str, **operands: int) -> int:
    """One toy instruction word, e.g. ``encode("li", rd=1, limm=7)``."""
    (form,) = TOY.encodings_named(mnemonic)
    return _ENC.encode(form, operands)


def code(*words: int, endian: str = "little") -> bytes:
    return b"".join(w.to_bytes(4, endian) for w in words)


LI_R1_7 = encode("li", rd=1, limm=7)
HALT_R1 = encode("halt", rd=1)
JMP_SELF = encode("jmp", joff=0)
SEM_WAIT_0 = encode("sem.wait", sem=0)

#: li r1, 7; halt r1  -> exit status 7
EXIT7 = code(LI_R1_7, HALT_R1)

#: r1 = 10; r2 = 0; loop: r2 += 3; r1 -= 1; bne r1, r0, loop; halt r2  -> exit status 30
#: (position independent; 33 instructions per core)
SUM30_WORDS = (
    encode("li", rd=1, limm=10),
    encode("li", rd=2, limm=0),
    encode("addi", rd=2, rs1=2, imm=3),  # +0x8: loop
    encode("addi", rd=1, rs1=1, imm=-1),
    encode("bne", rd=1, rs1=0, boff=-8),  # +0x10
    encode("halt", rd=2),
)
SUM30 = code(*SUM30_WORDS)
SUM30_INSTRET = 2 + 10 * 3 + 1

#: li r1, 1; li r2, 2; target: li r3, 3; halt r3  (``target`` is at +0x8)
STAGED = code(encode("li", rd=1, limm=1), encode("li", rd=2, limm=2),
              encode("li", rd=3, limm=3), encode("halt", rd=3))
