"""Immediate postfixes (spec 2.4): the arithmetic shared by the decoder and the assembler.

A PFX word (opcode bits 5:3 = 010) carries a 45-bit payload P = {bits 47:6, bits 2:0}.
Following an instruction that has an immediate, the first postfix supplies
imm[127:19] = sign-extension of P while imm[18:0] keep the low 19 bits of the
instruction's own *sign-extended* field; a second consecutive postfix supplies
imm[127:64] (our [PROPOSAL]); a third one makes the instruction raise PFX (200).

One module for both directions so that what the assembler splits is, bit for bit,
what ``refine`` merges.  A consequence of the spec's rule worth knowing: for a field
narrower than 19 bits (Imm13 of CMPI/FCMPI, Disp17 of branches) bits 18..width-1 of
the complete value are copies of the field's sign, so a value whose bits there are
not all equal cannot be encoded at all (:func:`postfixes_needed` returns ``None``).
"""

from __future__ import annotations

PFX_MATCH, PFX_MASK = 0x10, 0x38
OWN_BITS = 19           # imm[18:0] always come from the instruction's own field
PAYLOAD_BITS = 45       # P[44:0] of one postfix
SECOND_AT = 64          # a second postfix supplies imm[127:64]
MAX_POSTFIXES = 2       # a third consecutive postfix raises PFX (200)
IMM_BITS = 128

_LOW = (1 << OWN_BITS) - 1
_PAYLOAD = (1 << PAYLOAD_BITS) - 1


def sext(value: int, bits: int) -> int:
    """``value`` as a ``bits``-wide two's-complement number."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def is_postfix(word: int | None) -> bool:
    return word is not None and word & PFX_MASK == PFX_MATCH


def payload(word: int) -> int:
    """The signed 45-bit payload P of a postfix word."""
    return sext(((word >> 6) << 3) | (word & 7), PAYLOAD_BITS)


def postfix_word(p: int) -> int:
    """The PFX word carrying payload ``p`` (any int; its low 45 bits are used)."""
    p &= _PAYLOAD
    return ((p >> 3) << 6) | PFX_MATCH | (p & 7)


def merge(own: int, payloads: list[int]) -> int:
    """The complete immediate from the sign-extended own field and 0..2 payloads."""
    if not payloads:
        return own
    value = (own & _LOW) | (payloads[0] << OWN_BITS)
    if len(payloads) > 1:
        value = (value & ((1 << SECOND_AT) - 1)) | (payloads[1] << SECOND_AT)
    return sext(value, IMM_BITS)


def postfixes_needed(value: int, width: int) -> int | None:
    """How many postfixes ``value`` needs after an own field of ``width`` bits, or ``None``.

    ``None`` means no number of postfixes can produce ``value``: it exceeds what two
    postfixes reach, or (``width`` < 19) its bits 18..width-1 are not all copies of
    bit width-1, which the own field's sign extension forces.
    """
    half = 1 << (width - 1)
    if -half <= value < half:
        return 0
    if width < OWN_BITS:
        top = sext(value, OWN_BITS) >> (width - 1)  # bits 18..width-1, sign-extended
        if top not in (0, -1):
            return None
    if -(1 << 63) <= value < 1 << 63:
        return 1
    if -(1 << (SECOND_AT + PAYLOAD_BITS - 1)) <= value < 1 << (SECOND_AT + PAYLOAD_BITS - 1):
        return 2
    return None


def split(value: int, width: int, count: int) -> tuple[int, list[int]]:
    """``(own field value, payloads)`` encoding ``value`` with exactly ``count`` postfixes.

    The caller has checked ``postfixes_needed(value, width) <= count``; more postfixes
    than needed are harmless (they repeat the sign).
    """
    own = sext(value, width)
    if count == 0:
        return own, []
    if count == 1:
        return own, [sext(value >> OWN_BITS, PAYLOAD_BITS)]
    return own, [sext(value >> OWN_BITS, PAYLOAD_BITS), sext(value >> SECOND_AT, PAYLOAD_BITS)]
