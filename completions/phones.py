"""Phone numbers in free text, as the personal-data screen finds them (Google's libphonenumber,
through the `phonenumbers` package).

A number written with its country code (`+44 7700 900123`) is found whatever the regions; one
written the national way (`07700 900123` in Britain, `(555) 123-4567` in the US) only for the
regions the study names (`Study.phone_regions`, else the operator's `PII_PHONE_REGIONS`). The
screen holds a text for a person to read, so it leans to finding too much: a number counts if it
is a valid number of the region, or merely a possible one (the fiction range 07700 900xxx
included) written as people write phone numbers (in groups, or after + or 00). Either way it has
at least MIN_DIGITS digits and is not glued to letters or digits (a hexadecimal id, a long code),
so an order number `123456789` or a year is not a phone number.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings

MIN_DIGITS = 9


def known_regions() -> frozenset[str]:
    import phonenumbers

    return frozenset(phonenumbers.SUPPORTED_REGIONS)


def parse_regions(value: str) -> list[str]:
    """'gb, US' as ['GB', 'US']; an unknown code raises ValueError naming it."""
    codes = [c.strip().upper() for c in value.replace(";", ",").split(",") if c.strip()]
    unknown = [c for c in codes if c not in known_regions()]
    if unknown:
        raise ValueError(
            f"Unknown region code(s): {', '.join(unknown)}. Use two-letter country codes, "
            "e.g. GB, US, DE."
        )
    return list(dict.fromkeys(codes))


def regions_for(study_regions: str) -> list[str]:
    """A study's regions, or the operator's default when the study names none."""
    return (
        parse_regions(study_regions) if study_regions.strip() else list(settings.PII_PHONE_REGIONS)
    )


def _standalone(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return not (before.isalnum() or after.isalnum())


def phone_numbers(text: str, regions: Iterable[str]) -> list[str]:
    """The phone numbers in `text` as written, in the order found, each once."""
    if sum(ch.isdigit() for ch in text) < MIN_DIGITS:
        return []
    import phonenumbers

    found: dict[str, None] = {}
    for region in regions:
        matcher = phonenumbers.PhoneNumberMatcher(
            text, region, leniency=phonenumbers.Leniency.POSSIBLE
        )
        for match in matcher:
            raw = match.raw_string
            if sum(ch.isdigit() for ch in raw) < MIN_DIGITS:
                continue
            if not _standalone(text, match.start, match.end):
                continue
            if _written_as_a_phone(raw) or phonenumbers.is_valid_number(match.number):
                found[raw] = None
    return list(found)


def _written_as_a_phone(raw: str) -> bool:
    return raw.startswith(("+", "00")) or any(ch in raw for ch in " -.()/")
