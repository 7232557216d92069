"""Model families through an alias table: "openai" and "gpt" are one family."""

from __future__ import annotations

import pytest

from completions.families import (
    AliasError,
    aliases_merged,
    canonical_family,
    format_aliases,
    parse_aliases,
    same_family,
)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("gpt", "OpenAI"),
        ("claude", " anthropic "),
        ("gemini", "Google"),
        ("llama", "meta"),
        ("mistral", "mistralai"),
    ],
)
def test_the_built_in_table_joins_vendors_and_model_lines(left, right):
    assert same_family(left, right)


def test_different_families_and_empty_names_never_match():
    assert not same_family("gpt", "claude")
    assert not same_family("", "")
    assert not same_family(None, "gpt")
    assert canonical_family("polaris") == "polaris"  # no alias: its own family


def test_a_study_extends_and_overrides_the_table_and_chains_are_followed():
    extra = {"azure-openai": "openai", "Polaris": "hippocratic", "google": "bard"}
    assert canonical_family("azure-openai", extra) == "gpt"  # azure-openai -> openai -> gpt
    assert same_family("polaris", "Hippocratic", extra)
    assert canonical_family("google", extra) == "bard"  # the study's own entry wins
    assert canonical_family("x", {"x": "y", "y": "x"}) in {"x", "y"}  # a cycle stops
    assert aliases_merged(extra)["polaris"] == "hippocratic"


def test_alias_lines_parse_and_format_back():
    text = "# our endpoints\nAzure-OpenAI = gpt\n\npolaris=hippocratic  # in-house\n"
    table = parse_aliases(text)
    assert table == {"azure-openai": "gpt", "polaris": "hippocratic"}
    assert parse_aliases(format_aliases(table)) == table


@pytest.mark.parametrize("bad", ["openai gpt", "= gpt", "openai ="])
def test_a_bad_alias_line_says_which_and_how(bad):
    with pytest.raises(AliasError, match="line 2: write it as 'alias = family'"):
        parse_aliases(f"a = b\n{bad}")
