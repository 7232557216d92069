"""Phone numbers in free text: national forms for the regions named, international always,
and no order number, year or hexadecimal id taken for one."""

from __future__ import annotations

import pytest

from completions.esconv import identifying_kinds
from completions.phones import parse_regions, phone_numbers, regions_for


@pytest.mark.parametrize(
    ("text", "regions", "found"),
    [
        ("call 07700 900123 please", ["GB"], ["07700 900123"]),
        ("call 07700 900123 please", ["US"], []),  # not how the US writes a number
        ("ring +44 7700 900123", ["US"], ["+44 7700 900123"]),  # international: anywhere
        ("my number is 555-123-4567, text me", ["US"], ["555-123-4567"]),
        ("call (555) 123 4567", ["US", "GB"], ["(555) 123 4567"]),
        ("Ruf mich an: 030 12345678", ["DE"], ["030 12345678"]),
        ("ring 02079460018", ["GB"], ["02079460018"]),  # a valid London number, ungrouped
        ("Order 123456789 shipped", ["US", "GB"], []),
        ("between 2019 and 2023 I moved 3 times", ["US", "GB"], []),
        ("ID 5f0123456789abcdef012345", ["US", "GB"], []),
        ("I have 3 kids aged 4, 7 and 12 and earn 45000 a year", ["US", "GB"], []),
    ],
)
def test_phone_numbers_in_the_regions_named(text, regions, found):
    assert phone_numbers(text, regions) == found


def test_identifying_kinds_adds_phone_numbers_for_the_regions(settings):
    text = "write to jo@mail.test or ring 07700 900123"
    assert identifying_kinds(text) == ["e-mail address"]  # the pattern alone: US style only
    assert identifying_kinds(text, ["GB"]) == ["e-mail address", "phone number"]


def test_regions_are_two_letter_codes_with_the_servers_default(settings):
    settings.PII_PHONE_REGIONS = ["US", "GB"]
    assert parse_regions(" gb, US ,gb") == ["GB", "US"]
    assert regions_for("") == ["US", "GB"] and regions_for("de") == ["DE"]
    with pytest.raises(ValueError, match="Unknown region code"):
        parse_regions("UK")  # the ISO code is GB
