"""Replies drawn from the JSON schema a request sends (the ``draw`` option, or ``--draw``).

A provider's structured outputs guarantee the schema and nothing more. In this mode the server
answers a structured request with any object that schema allows, drawn by hypothesis-jsonschema
(a generator written apart from this project) from the schema exactly as it arrived in the
request body: OpenAI's ``response_format.json_schema.schema``, Anthropic's
``output_config.format.schema`` (or the older ``output_format``). Strings may hold anything
(a NUL, a look-alike, text no completion contains), numbers any value the schema leaves open.

The draw is reproducible: the same model and prompt get the same reply. It needs the test
dependencies (``hypothesis``, ``hypothesis-jsonschema``), imported only in this mode.
"""

from __future__ import annotations

import json
import threading
from typing import Any

_STRATEGIES: dict[str, Any] = {}
_LOCK = threading.Lock()  # hypothesis runs one search at a time per process here


def _strategy(schema: dict[str, Any]) -> Any:
    from hypothesis_jsonschema import from_schema

    key = json.dumps(schema, sort_keys=True)
    if key not in _STRATEGIES:
        _STRATEGIES[key] = from_schema(schema)
    return _STRATEGIES[key]


def draw(schema: dict[str, Any], seed: int) -> Any:
    """One value valid for `schema`, chosen by `seed`."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded

    drawn: list[Any] = []

    # Hypothesis tries the simplest value first; the second is a random draw from the seed.
    @settings(
        max_examples=2,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @seeded(seed)
    @given(_strategy(schema))
    def keep(value: Any) -> None:
        drawn.append(value)

    with _LOCK:
        keep()
    return drawn[-1]
