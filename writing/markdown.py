"""Writer instructions are written in Markdown and shown as HTML that cannot carry a script.

markdown-it-py renders CommonMark with raw HTML switched off (it is shown as text); nh3 (the
ammonia sanitiser) then keeps only the tags and attributes of plain text formatting, as a
second wall should a rule of the first ever let something through.
"""

from __future__ import annotations

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
# Headings start at h2: the writer's page has its own h1.
TAGS = {
    "p", "br", "hr", "ul", "ol", "li", "strong", "em", "code", "pre", "blockquote", "a",
    "h2", "h3", "h4",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}


def markdown_html(text: str) -> SafeString:
    """Markdown text as sanitised HTML, safe to put in a page as it is."""
    html = _MARKDOWN.render(_headings_from_h2(text))
    clean = nh3.clean(
        html,
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(clean)  # noqa: S308 - sanitised by nh3 just above


def _headings_from_h2(text: str) -> str:
    """'# Title' becomes an h2 (and so on down): one h1 a page."""
    return "\n".join(
        f"#{line}" if line.startswith("#") and line.lstrip("#").startswith(" ") else line
        for line in text.splitlines()
    )
