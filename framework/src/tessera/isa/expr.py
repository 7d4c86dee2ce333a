"""Safe integer expressions for the assembler (no ``eval``).

Operands and directive arguments are C-like integer expressions: literals
(``42``, ``0x2a``, ``0b101010``, ``0o52``, ``'*'``), symbols, ``.`` for the current
location, GNU numeric local label references (``1b``, ``1f``), unary ``- + ~``,
binary ``* / % + - << >> & ^ |`` with C precedence, and parentheses.  Division and
remainder truncate toward zero as in C.

Design notes:

* The evaluator is a small recursive-descent parser that computes while it parses;
  there is no tree because every pass simply evaluates the text again.
* Every failure is an :class:`ExpressionError` carrying ``offset``, the 0-based
  position in the expression text, so the assembler can point a column at the
  offending token when it turns the failure into an
  :class:`~tessera.errors.AssemblyError`.  A symbol that is not (yet) defined
  raises the subclass :class:`UndefinedSymbol`, which the assembler's layout passes
  tolerate where a value is not needed yet.
* A local label reference is looked up in ``symbols`` under its canonical spelling
  (:func:`local_reference`: ``"1b"``, ``"12f"``); which definition it means depends
  on where the expression is, which only the assembler's symbol view knows.
* Inputs are untrusted text, so work is bounded: values are limited to
  :data:`MAX_BITS` bits (``1 << 10**9`` must not freeze the process) and
  parentheses to :data:`MAX_NESTING` levels (no ``RecursionError``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from tessera.errors import AssemblyError

#: Largest magnitude (in bits) an intermediate value may have.
MAX_BITS = 4096
#: Deepest parenthesis nesting accepted.
MAX_NESTING = 32

_SPACE = " \t\r\f\v"
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$")
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|[0-9]+")
_SYMBOL = re.compile(r"[A-Za-z_.$][A-Za-z0-9_.$]*")
_OPERATOR = re.compile(r"<<|>>|[-+~*/%&^|()]")
_LOCAL_REFERENCE = re.compile(r"([0-9]+)([bf])")
_HEX_ESCAPE = re.compile(r"[0-9a-fA-F]{1,2}")
_OCT_ESCAPE = re.compile(r"[0-7]{1,3}")
_SIMPLE_ESCAPES = {
    "n": 10, "t": 9, "r": 13, "0": 0, "a": 7, "b": 8, "f": 12, "v": 11, "e": 27,
    "\\": 92, "'": 39, '"': 34, "?": 63,
}
#: Binary operators and their C precedence (higher binds tighter).
_BINARY = {"|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}


class ExpressionError(ValueError):
    """An expression that cannot be evaluated; ``offset`` is 0-based into its text.

    Deliberately not a :class:`~tessera.errors.TesseraError` (each of those has its own
    exit code and documentation): without a file and line it is only a fragment of a
    user-facing error.  Callers turn it into an ``AssemblyError`` with :meth:`at`.
    """

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset

    def at(self, file: str, line: int, column: int) -> AssemblyError:
        """The user-facing error; ``column`` (1-based) is where the expression text starts."""
        return AssemblyError(self.message, file=file, line=line, column=column + self.offset)


class UndefinedSymbol(ExpressionError):
    """The expression names a symbol that has no value (yet)."""

    def __init__(self, name: str, offset: int = 0) -> None:
        super().__init__(f"undefined symbol {name!r}", offset)
        self.name = name


def read_escape(text: str, pos: int) -> tuple[int, int]:
    """Decode the backslash escape at ``text[pos]``; return ``(byte value, next position)``."""
    if pos + 1 >= len(text):
        raise ExpressionError("unfinished escape sequence", pos)
    c = text[pos + 1]
    if c == "x":
        m = _HEX_ESCAPE.match(text, pos + 2)
        if not m:
            raise ExpressionError("\\x needs hex digits", pos)
        return int(m.group(), 16), m.end()
    if c in "01234567":
        m = _OCT_ESCAPE.match(text, pos + 1)
        assert m is not None  # text[pos + 1] is an octal digit, so the pattern matches
        value = int(m.group(), 8)
        if value > 255:
            raise ExpressionError(f"octal escape \\{m.group()} is larger than a byte", pos)
        return value, m.end()
    if c in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[c], pos + 2
    raise ExpressionError(f"unknown escape sequence \\{c}", pos)


def read_string(text: str, pos: int = 0) -> tuple[bytes, int]:
    """Decode the ``"..."`` literal starting at ``text[pos]``: ``(bytes, position after it)``.

    Escapes give single bytes; other characters are encoded as UTF-8.
    """
    if pos >= len(text) or text[pos] != '"':
        raise ExpressionError("expected a string in double quotes", pos)
    out = bytearray()
    i = pos + 1
    while i < len(text):
        c = text[i]
        if c == '"':
            return bytes(out), i + 1
        if c == "\\":
            value, i = read_escape(text, i)
            out.append(value)
        else:
            out += c.encode("utf-8", "surrogatepass")
            i += 1
    raise ExpressionError("unterminated string", pos)


def read_char(text: str, pos: int) -> tuple[int, int]:
    """Decode the ``'c'`` literal at ``text[pos]``: ``(value, position after it)``."""
    i = pos + 1
    if i < len(text) and text[i] == "\\":
        value, i = read_escape(text, i)
    elif i < len(text) and text[i] != "'":
        value, i = ord(text[i]), i + 1
    else:
        raise ExpressionError("malformed character literal", pos)
    if i >= len(text) or text[i] != "'":
        raise ExpressionError("malformed character literal", pos)
    return value, i + 1


def local_reference(name: str) -> tuple[str, str] | None:
    """``(label, direction)`` of a numeric local label reference such as ``"1b"``, else ``None``.

    ``label`` is the label's digits without leading zeros (``"007f"`` is label ``7``);
    ``direction`` is ``"b"`` (the nearest definition at or before) or ``"f"`` (the next
    one after).  Canonical names are lower-case: the evaluator looks ``1B`` up as ``1b``.
    """
    m = _LOCAL_REFERENCE.fullmatch(name)
    return (local_label(m.group(1)), m.group(2)) if m else None


def local_label(digits: str) -> str:
    """The canonical name of numeric label ``digits`` (``"01"`` and ``"1"`` are one label)."""
    return digits.lstrip("0") or "0"


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


class _Evaluator:
    """Recursive descent over the text; one instance per evaluation."""

    def __init__(self, text: str, symbols: Mapping[str, int | None], location: int | None) -> None:
        self.text = text
        self.symbols = symbols
        self.location = location
        self.pos = 0

    # -- lexing -------------------------------------------------------------------
    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _SPACE:
            self.pos += 1

    def peek_operator(self) -> str | None:
        self.skip()
        m = _OPERATOR.match(self.text, self.pos)
        return m.group() if m else None

    def fail(self, message: str, offset: int | None = None) -> ExpressionError:
        return ExpressionError(message, self.pos if offset is None else offset)

    # -- grammar ------------------------------------------------------------------
    def parse(self) -> int:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("expected an expression")
        value = self.binary(1, 0)
        self.skip()
        if self.pos < len(self.text):
            tok = self.peek_operator() or self.text[self.pos]
            raise self.fail("unmatched ')'" if tok == ")" else f"unexpected {tok!r}")
        return value

    def binary(self, min_prec: int, depth: int) -> int:
        lhs = self.unary(depth)
        while True:
            op = self.peek_operator()
            prec = _BINARY.get(op or "", 0)
            if op is None or prec < min_prec or not prec:
                return lhs
            at = self.pos
            self.pos += len(op)
            rhs = self.binary(prec + 1, depth)
            lhs = self.apply(op, lhs, rhs, at)

    def unary(self, depth: int) -> int:
        ops = []
        while (op := self.peek_operator()) in ("-", "+", "~"):
            ops.append(op)
            self.pos += 1
        value = self.primary(depth)
        for op in reversed(ops):
            value = -value if op == "-" else ~value if op == "~" else value
        return value

    def primary(self, depth: int) -> int:
        self.skip()
        text, start = self.text, self.pos
        if start >= len(text):
            raise self.fail("expected a value")
        c = text[start]
        if c == "(":
            if depth >= MAX_NESTING:
                raise self.fail(f"expression nested deeper than {MAX_NESTING} parentheses")
            self.pos += 1
            value = self.binary(1, depth + 1)
            if self.peek_operator() != ")":
                raise self.fail("expected ')'")
            self.pos += 1
            return value
        if c == "'":
            value, self.pos = read_char(text, start)
            return value
        if m := _NUMBER.match(text, start):
            self.pos = m.end()
            after = text[self.pos + 1:self.pos + 2]
            if (m.group().isdigit() and text[self.pos:self.pos + 1] in ("b", "f", "B", "F")
                    and (not after or after not in _IDENT_CHARS)):
                return self.local(m.group(), text[self.pos].lower(), start)
            if self.pos < len(text) and text[self.pos] in _IDENT_CHARS:
                raise self.fail(f"malformed number {text[start:self.pos + 1]!r}", start)
            digits = m.group()
            if len(digits) > MAX_BITS // 3:
                raise self.fail("number too large", start)
            base = {"x": 16, "b": 2, "o": 8}.get(digits[1:2].lower(), 10)
            return self.check(int(digits[2:] if base != 10 else digits, base), start)
        if m := _SYMBOL.match(text, start):
            self.pos = m.end()
            name = m.group()
            if name == ".":
                if self.location is None:
                    raise self.fail("'.' (the current location) is not available here", start)
                return self.location
            symbol = self.symbols.get(name)
            if symbol is None:
                raise UndefinedSymbol(name, start)
            return symbol
        raise self.fail("unmatched ')'" if c == ")" else f"unexpected {c!r}")

    def local(self, digits: str, direction: str, start: int) -> int:
        """The value of local label reference ``digits`` + ``direction`` (``1b``, ``1f``)."""
        self.pos += 1
        name = local_label(digits) + direction
        value = self.symbols.get(name)
        if value is None:
            raise UndefinedSymbol(name, start)
        return value

    def apply(self, op: str, a: int, b: int, at: int) -> int:
        if op in ("/", "%") and b == 0:
            raise self.fail("division by zero", at)
        if op in ("<<", ">>") and not 0 <= b <= MAX_BITS:
            raise self.fail(f"shift count {b} out of range 0..{MAX_BITS}", at)
        if op == "+":
            r = a + b
        elif op == "-":
            r = a - b
        elif op == "*":
            r = a * b
        elif op == "/":
            r = _c_div(a, b)
        elif op == "%":
            r = a - b * _c_div(a, b)
        elif op == "<<":
            r = a << b
        elif op == ">>":
            r = a >> b
        elif op == "&":
            r = a & b
        elif op == "^":
            r = a ^ b
        else:
            r = a | b
        return self.check(r, at)

    def check(self, value: int, at: int) -> int:
        if value.bit_length() > MAX_BITS:
            raise self.fail(f"value exceeds {MAX_BITS} bits", at)
        return value


def evaluate(text: str, symbols: Mapping[str, int | None] | None = None,
             location: int | None = None) -> int:
    """The value of expression ``text``.

    ``symbols`` maps names to values (a ``None`` value counts as undefined);
    ``location`` is the value of ``.``.  Raises :class:`UndefinedSymbol` or another
    :class:`ExpressionError` whose ``offset`` points into ``text``.
    """
    return _Evaluator(text, symbols if symbols is not None else {}, location).parse()
