"""Extension points: what an app higher in the layers adds to the pages of an app below it.

The rater pages (`annotation`) and the writer pages (`writing`) sit below `care`, which adds
qualification, content notes, breaks and stopping early to them. `care` registers its functions
here when Django starts (`care/apps.py`); the pages call them by name without importing `care`,
so imports keep pointing down the layers (docs/architecture.md). A name nobody registered gives
the caller's default.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_registered: dict[str, Callable[..., Any]] = {}


def hook_register(name: str, function: Callable[..., Any]) -> None:
    """Register ``function`` under ``name`` (again on a second call: the last one counts)."""
    _registered[name] = function


def hook_call(name: str, *args: Any, default: Any = None, **kwargs: Any) -> Any:
    """``name``'s function called with the arguments, or ``default`` when none is registered."""
    function = _registered.get(name)
    return default if function is None else function(*args, **kwargs)
