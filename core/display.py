"""Text a person reads, shown as it is: hidden and direction-changing characters made visible.

A writer's or a model's reply may carry characters nobody sees: bidirectional controls
(U+202A-U+202E embeddings and overrides, U+2066-U+2069 isolates, the U+200E/U+200F/U+061C
marks) that reorder what a rater or the reviewing admin reads, and invisible ones (zero-width
space and joiners U+200B-U+200D, word joiner and invisible operators U+2060-U+2064, the byte
order mark U+FEFF, the soft hyphen, tag characters) that hide or split words. Where a human
reads such text (the rater's item, the writer review, the studio), `reveal` shows each of them
as a visible mark such as `⟨U+202E⟩` (named in a tooltip), so none of them acts; the element
around it carries `dir="auto"` (or is a `<bdi>`) so a right-to-left text is isolated from the
page. The stored text is never changed: exports, bundles and the judges get it as written.

A zero-width joiner between two pictographs (the family emoji 👨‍👩‍👧) is how emoji are
written, not a hidden character: it is left alone.
"""

from __future__ import annotations

import re
import unicodedata

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

HIDDEN = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
    "\U000e0000-\U000e007f]"
)
ZWJ = "\u200d"
HIDDEN_MESSAGE = "contains hidden or direction characters"


def _pictograph(char: str) -> bool:
    return unicodedata.category(char) in ("So", "Sk") or char in "\ufe0f\u20e3"


def _emoji_joiner(text: str, at: int) -> bool:
    return 0 < at < len(text) - 1 and _pictograph(text[at - 1]) and _pictograph(text[at + 1])


def hidden_characters(text: str) -> list[str]:
    """The hidden or direction characters in `text`, as `U+XXXX` codes, each once."""
    if not text or HIDDEN.search(text) is None:
        return []
    found = {
        f"U+{ord(m.group()):04X}": None
        for m in HIDDEN.finditer(text)
        if not (m.group() == ZWJ and _emoji_joiner(text, m.start()))
    }
    return list(found)


def _mark(char: str) -> str:
    name = unicodedata.name(char, "format character").lower()
    return f'<span class="hidden-char" title="{escape(name)}">⟨U+{ord(char):04X}⟩</span>'


def reveal(text: object) -> SafeString:
    """`text` escaped for HTML, each hidden or direction character shown as a visible mark."""
    value = "" if text is None else str(text)
    if HIDDEN.search(value) is None:
        return mark_safe(escape(value))  # noqa: S308  # escaped just here
    parts: list[str] = []
    last = 0
    for match in HIDDEN.finditer(value):
        at = match.start()
        if match.group() == ZWJ and _emoji_joiner(value, at):
            continue
        parts.append(escape(value[last:at]))
        parts.append(_mark(match.group()))
        last = match.end()
    parts.append(escape(value[last:]))
    return mark_safe("".join(parts))  # noqa: S308  # every piece escaped or our own markup


def jinja_environment(**options: object) -> object:
    """The Jinja2 environment of the rater's item, with the same `reveal` filter."""
    from jinja2 import Environment

    environment = Environment(**options)  # type: ignore[arg-type]
    environment.filters["reveal"] = reveal
    environment.filters["hidden_characters"] = hidden_characters
    return environment
