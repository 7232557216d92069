"""The API's JSON body parser, with a depth limit.

Python's JSON reader recurses once per level of lists and objects: a body of a hundred thousand
`[` makes DRF's own parser raise RecursionError, a 500. This parser answers a 400 that says why,
both for a body too deep for the reader and for one merely deeper than any request of ours needs
(MAX_JSON_DEPTH, the same limit the imports apply to their lines).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

MAX_JSON_DEPTH = 64
DEPTH_MESSAGE = (
    f"The JSON body is nested too deep (more than {MAX_JSON_DEPTH} levels of lists and objects)."
)


def json_depth(value: Any) -> int:
    """Levels of lists and objects in a parsed JSON value (a scalar is 0), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(DEPTH_MESSAGE) from None
        if json_depth(data) > MAX_JSON_DEPTH:
            raise ParseError(DEPTH_MESSAGE)
        return data
