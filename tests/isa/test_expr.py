"""The safe expression evaluator."""

import importlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tessera.errors import AssemblyError, all_error_classes
from tessera.isa.expr import (
    MAX_NESTING,
    ExpressionError,
    UndefinedSymbol,
    evaluate,
    read_string,
)


@pytest.mark.parametrize("text, value", [
    ("42", 42), ("0x2A", 42), ("0b101010", 42), ("0o52", 42), ("007", 7),
    ("'*'", 42), ("'\\n'", 10), ("'\\x41'", 65), ("'\\''", 39), ("'\\101'", 65), ("'\\\\'", 92),
    ("1 + 2 * 3", 7), ("(1 + 2) * 3", 9), ("1 << 2 + 1", 8), ("6 & 3 | 8", 10),
    ("1 | 2 ^ 3", 1), ("12 ^ 10 & 6", 14), ("16 >> 2 >> 1", 2), ("10 - 4 - 3", 3),
    ("-7 / 2", -3), ("7 / -2", -3), ("-7 % 2", -1), ("7 % -2", 1), ("-8 >> 1", -4),
    ("~0", -1), ("- - 5", 5), ("+5", 5), ("-~1", 2), ("2 * -3", -6), ("1--1", 2),
    ("\t 3 ", 3), ("((((7))))", 7),
])
def test_values(text, value):
    assert evaluate(text) == value


def test_symbols_and_location():
    syms = {"a.b": 5, "_x$": 2, ".L1": 7}
    assert evaluate("a.b * _x$ + .L1", syms) == 17
    assert evaluate(". + 4", syms, location=0x100) == 0x104
    assert evaluate(".-.L1", syms, location=10) == 3


@settings(deadline=None)
@given(st.integers(-10**6, 10**6), st.integers(-10**6, 10**6).filter(bool))
def test_division_truncates_toward_zero_like_c(a, b):
    q = evaluate(f"{a} / {b}")
    r = evaluate(f"{a} % {b}")
    assert q == int(a / b)  # exact: |a|, |b| <= 10**6
    assert q * b + r == a
    assert abs(r) < abs(b) and (r == 0 or (r < 0) == (a < 0))


@pytest.mark.parametrize("text, message, offset", [
    ("", "expected an expression", 0),
    ("1 +", "expected a value", 3),
    ("4 / (2 - 2)", "division by zero", 2),
    ("4 % 0", "division by zero", 2),
    ("(1 + 2", "expected ')'", 6),
    ("1 + 2)", "unmatched ')'", 5),
    ("1 2", "unexpected '2'", 2),
    ("3 @ 4", "unexpected '@'", 2),
    ("0x", "malformed number '0x'", 0),
    ("12ab", "malformed number '12a'", 0),
    ("1 << -1", "shift count -1 out of range 0..4096", 2),
    ("1 << 100000", "shift count 100000 out of range 0..4096", 2),
    ("1 << 4095 << 4", "value exceeds 4096 bits", 10),
    ("''", "malformed character literal", 0),
    ("'ab'", "malformed character literal", 0),
    ("'\\q'", "unknown escape sequence \\q", 1),
    ("9" * 2000, "number too large", 0),
    (". + 1", "'.' (the current location) is not available here", 0),
])
def test_errors_carry_offset(text, message, offset):
    with pytest.raises(ExpressionError) as info:
        evaluate(text)
    assert info.value.message == message
    assert info.value.offset == offset
    assert not isinstance(info.value, AssemblyError)  # a fragment; the assembler anchors it


def test_undefined_symbol_is_distinct():
    with pytest.raises(UndefinedSymbol) as info:
        evaluate("1 + later * 2", {"other": 1})
    assert info.value.name == "later"
    assert info.value.offset == 4
    with pytest.raises(UndefinedSymbol):
        evaluate("x", {"x": None})  # None means "not evaluated yet"


def test_nesting_is_bounded():
    assert evaluate("(" * MAX_NESTING + "1" + ")" * MAX_NESTING) == 1
    with pytest.raises(ExpressionError, match="nested deeper"):
        evaluate("(" * 5000 + "1" + ")" * 5000)


def test_at_makes_an_anchored_assembly_error():
    with pytest.raises(ExpressionError) as info:
        evaluate("1 + x")
    err = info.value.at("f.s", 3, 10)
    assert type(err) is AssemblyError
    assert (err.file, err.line, err.column) == ("f.s", 3, 14)
    assert str(err) == "f.s:3:14: assembly error: undefined symbol 'x'"


def test_read_string_escapes_and_utf8():
    assert read_string(r'"a\tb\x41\101\0\"é"') == (b"a\tbAA\0\"\xc3\xa9", 19)
    with pytest.raises(ExpressionError, match="unterminated"):
        read_string('"abc')
    with pytest.raises(ExpressionError, match="larger than a byte"):
        read_string(r'"\777"')


@settings(deadline=None)
@given(st.text(alphabet="0123456789abcxo()+-*/%<>&^|~'.$_ \t\\", max_size=40))
def test_arbitrary_text_gives_a_value_or_expression_error(text):
    try:
        assert isinstance(evaluate(text, {"a": 1, "b": 2}, 0), int)
    except ExpressionError as exc:
        assert 0 <= exc.offset <= len(text)


def test_assembler_adds_no_error_classes():
    # Every TesseraError class has its own exit code and documentation; the assembler
    # must report through AssemblyError/EncodeError rather than adding subclasses.
    importlib.import_module("tessera.isa.asm")

    assert not [c for c in all_error_classes() if c.__module__.startswith("tessera.isa")]
