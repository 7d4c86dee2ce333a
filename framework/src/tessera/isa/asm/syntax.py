"""Lexical syntax of assembly source: statements, operands and syntax templates.

Everything here is pure text handling with no knowledge of passes, symbols or
encodings, so it can be read and tested on its own:

* :class:`Statement`, the parsed form of one source line, and the patterns that
  recognise labels, assignments and names;
* cutting operand text at top-level commas (:func:`split_operands`), skipping
  whitespace and quoted literals; blanking ``/* ... */`` comments
  (:func:`blank_block_comments`);
* compiling an encoding's syntax template (``"{rd}, {imm}({rs1})"``) and matching
  operand text against it, reporting how far the match got so the assembler can
  pick the most helpful error among several forms;
* small helpers for error messages (shortened text, huge numbers, "did you mean").
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator

import attrs

__all__ = ["Statement", "split_operands"]

_SPACE = " \t\r\f\v"
_IDENT = r"[A-Za-z_.$][A-Za-z0-9_.$]*"
_S = r"[ \t\r\f\v]*"
#: A label: a symbol name, or digits for a GNU numeric local label (``1:``, used as ``1b``/``1f``).
_LABEL = re.compile(rf"{_S}({_IDENT}|[0-9]+){_S}:")
_ASSIGN = re.compile(rf"{_S}({_IDENT}){_S}=(?!=)")
_WORD = re.compile(rf"{_S}({_IDENT})")
_NAME = re.compile(_IDENT)
_SECTION_NAME = re.compile(r"[A-Za-z0-9_.$]+")
_CHAR = re.compile(r"'(?:\\(?:x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)|[^\\'])'")
_SLOT = re.compile(r"\{(\w+)\??\}")  # {name}, or {name?} for an optional last operand
#: A literal word in a syntax template (``i`` in ``"i, {nnn}"``, ``dt`` in ``"dt, {x}"``).
_LITERAL_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@attrs.frozen
class Statement:
    """One parsed source line.

    ``kind`` is ``""`` (labels only or blank), ``"assign"`` (``name = expr``),
    ``"directive"`` or ``"instruction"``; ``name`` is the assigned symbol, the
    directive or the mnemonic (directives and mnemonics lower-cased).  Columns are
    1-based: ``column`` of the name, ``args_column`` of the operand text ``args``.
    """

    line: int
    labels: tuple[tuple[str, int], ...] = ()
    kind: str = ""
    name: str = ""
    column: int = 0
    args: str = ""
    args_column: int = 0


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in _SPACE:
        i += 1
    return i


def _skip_quoted(text: str, i: int) -> int:
    """Index after the string or character literal starting at ``text[i]``."""
    if text[i] == "'":
        m = _CHAR.match(text, i)
        return m.end() if m else i + 1
    i += 1
    while i < len(text) and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return min(i + 1, len(text))


def blank_block_comments(text: str, comment_chars: str) -> tuple[str, tuple[int, int] | None]:
    """``text`` with every ``/* ... */`` comment replaced by blanks, as GNU as reads them.

    Newlines inside a comment are kept and every other character becomes a space, so
    lines and columns of the rest are unchanged.  A ``/*`` inside a string or after a
    line comment (``comment_chars`` or ``//``) is text, not a comment.  The second
    value is the 1-based ``(line, column)`` of a ``/*`` that is never closed (the rest
    of the text is then comment), else ``None``.
    """
    if "/*" not in text:
        return text, None
    lines = text.split("\n")
    opened: tuple[int, int] | None = None
    for n, line in enumerate(lines):
        if opened is None and "/*" not in line:
            continue
        chars, i = list(line), 0
        while i < len(line):
            if opened is not None:  # inside a comment that began earlier
                end = line.find("*/", i)
                stop = len(line) if end < 0 else end + 2
                chars[i:stop] = " " * (stop - i)
                i = stop
                if end >= 0:
                    opened = None
                continue
            c = line[i]
            if c in comment_chars or line.startswith("//", i):
                break
            if c in "\"'":
                i = _skip_quoted(line, i)
            elif line.startswith("/*", i):
                opened = (n + 1, i + 1)
                chars[i:i + 2] = "  "
                i += 2
            else:
                i += 1
        lines[n] = "".join(chars)
    return "\n".join(lines), opened


def split_operands(text: str) -> list[tuple[int, str]]:
    """Split at commas outside parentheses and quotes: ``[(offset, stripped piece)]``.

    Offsets are 0-based into ``text``, so callers can point columns at each piece.
    Empty text gives ``[]``; empty pieces (``"1,,2"``) are kept as ``""``.
    """
    if not text.strip(_SPACE):
        return []
    pieces, start, depth, i = [], 0, 0, 0
    while i <= len(text):
        if i == len(text) or (text[i] == "," and depth <= 0):
            lead = _skip_space(text, start)
            pieces.append((lead, text[lead:i].rstrip(_SPACE)))
            start = i + 1
        elif text[i] in "\"'":
            i = _skip_quoted(text, i)
            continue
        elif text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
        i += 1
    return pieces


def _short(text: str, limit: int = 32) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _num(value: int) -> str:
    return str(value) if value.bit_length() <= 64 else f"a {value.bit_length()}-bit value"


def _suggest(word: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(word.lower(), candidates, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""



# --------------------------------------------------------------------------- templates


def _compile_template(syntax: str) -> tuple[tuple[str, str], ...]:
    """Template parts: ``("slot", field)``, ``("lit", chars)`` or ``("sep", "")``.

    ``{name?}`` compiles like ``{name}``: leaving an optional operand out is a second
    template (:mod:`tessera.isa.asm.forms`), not a case of this one.

    Everything outside braces is literal text.  It matches case-insensitively, with
    optional whitespace before each punctuation character; a literal *word* (``i`` in
    ``"i, {nnn}"``) must be written whole, and where the template has whitespace
    between a word and a neighbouring word or slot (``"dt {x}"``) the text needs some
    too (kept as one ``" "`` in the compiled literal).  Whitespace alone between two
    slots is a required separator.
    """
    pieces = _SLOT.split(syntax)
    parts = []
    for i, piece in enumerate(pieces):
        if i % 2:
            parts.append(("slot", piece))
        elif piece.strip(_SPACE):
            parts.append(("lit", _literal(piece, slot_before=i > 0,
                                          slot_after=i < len(pieces) - 1)))
        elif piece and 0 < i < len(pieces) - 1:
            parts.append(("sep", ""))
    return tuple(parts)


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _literal(piece: str, *, slot_before: bool, slot_after: bool) -> str:
    """Literal text without whitespace, except one ``" "`` where a word needs a gap."""
    out = ""
    gap = slot_before and piece[0] in _SPACE  # whitespace after the previous slot
    for c in piece:
        if c in _SPACE:
            gap = True
            continue
        if gap and _is_word(c) and (out == "" or _is_word(out[-1])):
            out += " "
        out += c
        gap = False
    if gap and slot_after and _is_word(out[-1]):
        out += " "
    return out


def _match_template(parts: tuple[tuple[str, str], ...],
                    text: str) -> tuple[list[tuple[int, int]] | None, int]:
    """Match operand text: ``(slot spans, furthest position)``; spans ``None`` on failure.

    A slot captures balanced text without a comma at the top level.  Slots are tried
    shortest first with backtracking; failures are memoised, so the cost stays
    polynomial whatever the input.
    """
    match = _TemplateMatch(parts, text)
    return match.step(0, 0), match.furthest


class _TemplateMatch:
    """One backtracking match of a syntax template against operand text.

    ``furthest`` is the furthest position any attempt reached (where an error is
    reported); ``failed`` memoises (part, position) pairs that cannot match.
    """

    def __init__(self, parts: tuple[tuple[str, str], ...], text: str) -> None:
        self.parts = parts
        self.text = text
        self.n = len(text)
        self.failed: set[tuple[int, int]] = set()
        self.furthest = 0

    def could_end(self, j: int, nxt: tuple[str, str] | None) -> bool:
        """May a slot end at ``j`` given the part ``nxt`` that follows it?"""
        text, n = self.text, self.n
        if nxt is None:
            return _skip_space(text, j) == n
        if nxt[0] == "sep":
            return j < n and text[j] in _SPACE
        if nxt[0] == "lit":
            if nxt[1][0] == " ":
                return j < n and text[j] in _SPACE
            k = _skip_space(text, j)
            return k < n and (text[k] == nxt[1][0] or text[k].lower() == nxt[1][0].lower())
        return True

    def ends(self, i: int, nxt: tuple[str, str] | None) -> Iterator[int]:
        """The positions a slot starting at ``i`` may end at, shortest first."""
        text, n = self.text, self.n
        depth, j = 0, i
        while j <= n:
            self.furthest = max(self.furthest, j)
            if j > i and depth == 0 and self.could_end(j, nxt):
                yield j
            if j == n or (text[j] == "," and depth == 0):
                return
            if text[j] in "\"'":
                j = _skip_quoted(text, j)
                continue
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
                if depth < 0:
                    return
            j += 1

    def step(self, k: int, i: int) -> list[tuple[int, int]] | None:
        """Match parts ``k:`` from position ``i``: the slot spans, or ``None``."""
        self.furthest = max(self.furthest, i)
        if (k, i) in self.failed:
            return None
        parts = self.parts
        result: list[tuple[int, int]] | None = None
        if k == len(parts):
            j = _skip_space(self.text, i)
            self.furthest = max(self.furthest, j)
            result = [] if j == self.n else None
        elif parts[k][0] == "lit":
            result = self.literal(k, i)
        elif parts[k][0] == "sep":
            j = _skip_space(self.text, i)
            result = self.step(k + 1, j) if j > i else None
        else:
            result = self.slot(k, i)
        if result is None:
            self.failed.add((k, i))
        return result

    def literal(self, k: int, i: int) -> list[tuple[int, int]] | None:
        """Part ``k`` is literal text: match it (case-insensitively), then the rest."""
        text, n, parts = self.text, self.n, self.parts
        j, prev = i, ""
        for c in parts[k][1]:
            if c == " ":  # a required gap next to a literal word
                if _skip_space(text, j) == j:
                    return None
                j = _skip_space(text, j)
                prev = c
                continue
            if not (prev and _is_word(c) and _is_word(prev)):  # no blanks inside a word
                j = _skip_space(text, j)
            self.furthest = max(self.furthest, j)
            if j >= n or (text[j] != c and text[j].lower() != c.lower()):
                return None
            j += 1
            prev = c
        glued = k + 1 < len(parts) and parts[k + 1][0] == "slot"  # "v{n}"
        if glued or not (_is_word(prev) and j < n and _is_word(text[j])):
            return self.step(k + 1, j)
        return None  # a literal word began a longer one ("ix")

    def slot(self, k: int, i: int) -> list[tuple[int, int]] | None:
        """Part ``k`` is an operand slot: try its possible ends, shortest first."""
        parts, text = self.parts, self.text
        start = _skip_space(text, i)
        for end in self.ends(start, parts[k + 1] if k + 1 < len(parts) else None):
            rest = self.step(k + 1, end)
            if rest is not None:
                return [(start, len(text[:end].rstrip(_SPACE)))] + rest
        return None
