"""Table-driven decoder generated from an architecture's encoding table.

Forms are grouped by mask; groups are tried from the most specific mask (most set
bits) to the least, each group a dict from ``word & mask`` to the form, so decoding
costs one dict look-up per distinct mask rather than one test per row.  Decoding any
word has exactly three outcomes: an :class:`Instruction`, the architecture's
illegal-instruction form (which raises its trap when executed), or
:class:`~tessera.errors.DecodeError`.
"""

from __future__ import annotations

from tessera.control import Trap
from tessera.errors import ConfigError, DecodeError
from tessera.isa.description import Architecture, Encoding
from tessera.isa.instruction import Instruction


def _raise_illegal(agent, ins):  # semantic-function signature
    raise ins.trap


#: The pseudo-form an undecodable word decodes to when the architecture has an illegal trap.
ILLEGAL = Encoding(mnemonic=".illegal", match=0, mask=0, semantics=_raise_illegal,
                   doc="an undecodable word; executing it takes the illegal-instruction trap")


#: how many distinct words a decoder remembers (a bound for programs of random words)
KNOWN_WORDS = 1 << 16


class Decoder:
    """Decode words of one architecture."""

    def __init__(self, arch: Architecture, *, check_overlaps: bool = True) -> None:
        self.arch = arch
        self.word_mask = (1 << arch.word_bits) - 1
        self._fields = arch.field_map
        groups: dict[int, dict[int, Encoding]] = {}
        for enc in arch.encodings:
            group = groups.setdefault(enc.mask, {})
            if enc.match in group and check_overlaps:
                other = group[enc.match]
                raise ConfigError(
                    f"{arch.name}: {enc.mnemonic} and {other.mnemonic} have the same match/mask "
                    f"{enc.match:#x}/{enc.mask:#x}"
                )
            group.setdefault(enc.match, enc)
        self._groups = sorted(groups.items(), key=lambda kv: (-bin(kv[0]).count("1"), kv[0]))
        self._operand_fields = {
            enc: tuple(self._fields[name] for name in enc.operand_names) for enc in arch.encodings
        }
        #: word -> (form, operands) of words decoded before: programs repeat few words and
        #: machines built from one architecture share a decoder (:func:`shared_decoder`)
        self._known: dict[int, tuple[Encoding, dict[str, int]]] = {}

    def match(self, word: int) -> Encoding | None:
        """The form ``word`` belongs to, or ``None``."""
        for mask, table in self._groups:
            enc = table.get(word & mask)
            if enc is not None:
                return enc
        return None

    def decode(self, word: int, address: int = 0) -> Instruction:
        """Decode ``word`` found at ``address``."""
        if not isinstance(word, int) or word < 0 or word > self.word_mask:
            raise DecodeError(f"{word!r} is not a {self.arch.word_bits}-bit word", address=address)
        known = self._known.get(word)
        if known is None:
            enc = self.match(word)
            if enc is None:
                return self.illegal(word, address)
            known = (enc, {f.name: f.extract(word) for f in self._operand_fields[enc]})
            if len(self._known) < KNOWN_WORDS:
                self._known[word] = known
        enc, operands = known
        ins = Instruction(enc, word, address, self.arch.word_bytes, dict(operands))
        ins.cycles = self.arch.cycles(enc)
        return ins

    def illegal(self, word: int, address: int) -> Instruction:
        """The defined outcome for an undecodable word."""
        if self.arch.illegal is None:
            raise DecodeError(f"no {self.arch.name} instruction matches", address=address, word=word)
        ins = Instruction(ILLEGAL, word, address, self.arch.word_bytes, {})
        ins.trap = self.arch.illegal(word, address)
        if not isinstance(ins.trap, Trap):
            raise ConfigError(f"{self.arch.name}: illegal() must return a Trap, got {ins.trap!r}")
        return ins

    def operand_fields(self, enc: Encoding):
        return self._operand_fields.get(enc, ())


#: decoders shared by machines of one architecture object, newest last (a few archs a process)
_SHARED: dict[int, tuple[Architecture, Decoder]] = {}
SHARED_ARCHS = 32


def shared_decoder(arch: Architecture) -> Decoder:
    """The decoder of ``arch`` that every machine of that architecture object uses: its
    forms and the words it has decoded are built once a process, not once a machine (a
    fault campaign or a bench builds hundreds).  A decoder holds no machine state."""
    entry = _SHARED.get(id(arch))
    if entry is None or entry[0] is not arch:
        if len(_SHARED) >= SHARED_ARCHS:
            del _SHARED[next(iter(_SHARED))]
        entry = _SHARED[id(arch)] = (arch, Decoder(arch))
    return entry[1]
