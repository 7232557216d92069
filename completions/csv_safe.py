"""CSV cells that a spreadsheet would run as a formula are neutralised (OWASP CSV injection).

Every CSV the platform writes (judgment exports, leaderboard tables, downloads, payment lists)
passes its cells through `safe_cell`: a text starting with = + - @ (or a tab / carriage return,
which some spreadsheets strip first) gets a leading apostrophe, which spreadsheets show as text.
Numbers stay numbers: a negative Elo difference is a float, not a text.
"""

from __future__ import annotations

from collections.abc import Iterable

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> object:
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def safe_row(values: Iterable[object]) -> list[object]:
    return [safe_cell(value) for value in values]
