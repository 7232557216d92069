"""Model families under one name: "openai" and "gpt" are the same family. Plain Python.

A family string (a system's, or an LLM judge endpoint's) is compared through an alias table:
lower-cased and stripped, then mapped to its canonical family. The built-in table covers the
usual vendor/model-line pairs; a study admin extends it per study (``Study.family_aliases``,
edited on the study's settings page as ``alias = family`` lines). Used wherever families are
compared: own-family exclusion of LLM judges, cross-family agreement, strategy usage per family.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

#: alias -> canonical family (both lower case). The canonical name is the model line.
DEFAULT_ALIASES: dict[str, str] = {
    "openai": "gpt",
    "chatgpt": "gpt",
    "anthropic": "claude",
    "google": "gemini",
    "deepmind": "gemini",
    "meta": "llama",
    "meta-llama": "llama",
    "facebook": "llama",
    "mistralai": "mistral",
    "mistral ai": "mistral",
    "alibaba": "qwen",
    "qwenlm": "qwen",
    "xai": "grok",
    "x.ai": "grok",
    "deepseek-ai": "deepseek",
    "moonshot": "kimi",
    "moonshotai": "kimi",
    "microsoft": "phi",
    "cohere": "command",
}


class AliasError(ValueError):
    """A line of an alias table that is not ``alias = family``."""


def _clean(name: str | None) -> str:
    return " ".join((name or "").split()).lower()


def aliases_merged(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The built-in table with a study's own aliases on top (theirs win)."""
    merged = dict(DEFAULT_ALIASES)
    merged.update({_clean(k): _clean(v) for k, v in (extra or {}).items() if _clean(k)})
    return merged


def canonical_family(name: str | None, extra: Mapping[str, str] | None = None) -> str:
    """The canonical family of ``name`` ("" for none): aliases are followed, a name that is
    no alias is its own family. Chains (a -> b -> c) are followed, cycles stop."""
    return _follow(_clean(name), aliases_merged(extra))


def canonical_families(
    names: Iterable[str], extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """{name: canonical family} for many names at once (the table is merged once)."""
    table = aliases_merged(extra)
    return {name: _follow(_clean(name), table) for name in set(names)}


def _follow(family: str, table: Mapping[str, str]) -> str:
    seen = set()
    while family in table and family not in seen:
        seen.add(family)
        family = table[family]
    return family


def same_family(
    left: str | None, right: str | None, extra: Mapping[str, str] | None = None
) -> bool:
    """True when both names are non-empty and have the same canonical family."""
    a, b = canonical_family(left, extra), canonical_family(right, extra)
    return bool(a) and a == b


def parse_aliases(text: str) -> dict[str, str]:
    """``alias = family`` lines (blank lines and ``#`` comments skipped) into a table."""
    table: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        alias, sep, family = line.partition("=")
        if not sep or not _clean(alias) or not _clean(family):
            raise AliasError(f"line {number}: write it as 'alias = family', e.g. 'openai = gpt'")
        table[_clean(alias)] = _clean(family)
    return table


def format_aliases(table: Mapping[str, str]) -> str:
    return "\n".join(f"{alias} = {family}" for alias, family in sorted(table.items()))
