"""Reporting every error of one assembly at once, as a compiler does.

The assembler does not stop at the first bad line: each statement that fails is
recorded and the passes go on (the location counter advancing as if the statement
had its usual size), so one run shows every independent mistake.  The caller still
gets a single exception, built here by :func:`combine`:

* it *is* the first error, in source order: same class (an :class:`~tessera.errors.EncodeError`
  when the first problem is a value that does not fit, so ``except EncodeError`` and the
  exit status keep meaning what they meant with one error), same ``message``,
  ``file``, ``line`` and ``column``;
* ``errors`` lists every error (each a plain ``AssemblyError`` or ``EncodeError``) in
  source order;
* ``str()`` is one ``file:line:column: kind: message`` line per error, at most
  :data:`MAX_SHOWN` of them, then ``... and N more errors``.

The two classes exist only to give that ``str()`` to both branches of the error
hierarchy; neither adds an exit status of its own.
"""

from __future__ import annotations

from collections.abc import Iterable

from tessera.errors import AssemblyError, EncodeError

__all__ = ["MAX_SHOWN", "AssemblyErrors", "EncodeErrors", "combine"]

#: Errors shown by ``str()`` (and so by the command line) before "... and N more errors".
MAX_SHOWN = 20


class AssemblyErrors(AssemblyError):
    """Every error of one assembly; it stands for the first one (see the module doc)."""

    def __init__(self, errors: Iterable[AssemblyError]) -> None:
        flat: list[AssemblyError] = []
        for err in errors:
            flat.extend(err.errors if isinstance(err, AssemblyErrors) else (err,))
        if not flat:
            raise ValueError("AssemblyErrors needs at least one error")
        first = flat[0]
        super().__init__(first.message, file=first.file, line=first.line, column=first.column,
                         **first.context())
        #: Every error, in source order.
        self.errors: tuple[AssemblyError, ...] = tuple(flat)

    def __str__(self) -> str:
        lines = [str(err) for err in self.errors[:MAX_SHOWN]]
        more = len(self.errors) - MAX_SHOWN
        if more > 0:
            lines.append(f"... and {more} more error{'s' if more > 1 else ''}")
        return "\n".join(lines)

    def __reduce__(self) -> tuple:  # picklable (e.g. across worker processes)
        return combine, (list(self.errors),)


class EncodeErrors(AssemblyErrors, EncodeError):
    """:class:`AssemblyErrors` whose first error is an :class:`~tessera.errors.EncodeError`."""


def combine(errors: Iterable[AssemblyError]) -> AssemblyErrors:
    """One exception for ``errors`` (already in source order; at least one)."""
    errors = list(errors)
    first = errors[0].errors[0] if isinstance(errors[0], AssemblyErrors) else errors[0]
    return (EncodeErrors if isinstance(first, EncodeError) else AssemblyErrors)(errors)
