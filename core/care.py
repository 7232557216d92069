"""Care for raters and writers: what the rater and writer pages ask of the app that cares.

The rater pages (`annotation`) and the writer pages (`writing`) sit below `care` in the layers,
and `care` adds qualification, content notes, breaks and stopping early to them. It does so
through the `Care` protocol here: `care` registers one object that follows it when Django
starts (`care/apps.py`: `care_register(...)`), and the pages call its methods through
`care_for_raters()` and `care_for_writers()`. Until something registers (a project without
`care`, a script that never started Django), `NoCare` answers: no gate, no care panel, the
response as it was.

The protocols are generic in the models they receive, which live above this app: each page
module binds them to its own models (`CareForRaters[Rater, Study, Assignment]` in
`annotation/views.py`), so mypy checks every call the pages make, and checks the registered
object's methods (names, arguments, results) against the protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from django.http import HttpRequest, HttpResponse


@dataclass(frozen=True)
class ItemCare:
    """What a judging item or a writer's conversation shows of care."""

    note: str  # the content note of the conversation ("" when it has none)
    skip_url: str
    stop_url: str
    break_url: str
    break_due: bool
    since: int | None  # a new stretch of work's start to remember, when the browser had none


class CareForRaters[RaterT, StudyT, AssignmentT](Protocol):
    """What the rater pages ask on every request (kept cheap: they are the round trip)."""

    def rater_gate(self, rater: RaterT, /) -> HttpResponse | None:
        """Where the rater goes instead of an item (qualification, the end after stopping),
        or None to go on."""
        ...

    def rater_item(
        self, request: HttpRequest, study: StudyT, assignment: AssignmentT, /
    ) -> ItemCare | None:
        """The content note, the skip, stop and break links and the break prompt of an item."""
        ...

    def remember(self, response: HttpResponse, care: ItemCare | None, /) -> HttpResponse:
        """The page's response, with what care keeps in the browser (a stretch's start)."""
        ...


class CareForWriters[WriterT, SettingsT, WritingT](Protocol):
    """What the writer pages ask when they show a conversation."""

    def writer_stopped(self, writer: WriterT, /) -> bool:
        """Whether the writer stopped early (then no new conversation is leased)."""
        ...

    def writer_item(
        self, request: HttpRequest, settings: SettingsT, writing: WritingT, /
    ) -> ItemCare | None:
        """The same as `CareForRaters.rater_item`, for a writer's conversation."""
        ...

    def remember(self, response: HttpResponse, care: ItemCare | None, /) -> HttpResponse:
        """As `CareForRaters.remember`."""
        ...


class Care(CareForRaters[Any, Any, Any], CareForWriters[Any, Any, Any], Protocol):
    """Both sides: what `care_register` takes."""


class NoCare:
    """The default: care adds nothing."""

    def rater_gate(self, rater: object, /) -> HttpResponse | None:
        return None

    def rater_item(
        self, request: HttpRequest, study: object, assignment: object, /
    ) -> ItemCare | None:
        return None

    def writer_stopped(self, writer: object, /) -> bool:
        return False

    def writer_item(
        self, request: HttpRequest, settings: object, writing: object, /
    ) -> ItemCare | None:
        return None

    def remember(self, response: HttpResponse, care: ItemCare | None, /) -> HttpResponse:
        return response


_care: Care = NoCare()


def care_register(care: Care) -> None:
    """Make `care` the one the pages call (again on a second call: the last one counts)."""
    global _care
    _care = care


def care_for_raters() -> CareForRaters[Any, Any, Any]:
    return _care


def care_for_writers() -> CareForWriters[Any, Any, Any]:
    return _care


# --- The panel a rater came from (Prolific) ------------------------------------------------


class PanelForRaters[RaterT](Protocol):
    """What the rater pages ask of the app that recruits (`recruitment`, registered by its
    AppConfig through `panel_register`) before an item or the completion code."""

    def rater_left(self, rater: RaterT, /) -> str | None:
        """`"returned"` or `"timed_out"` when the panel says the rater's submission was returned
        or timed out (then no item and no completion code), None otherwise. The panel
        finishes a rater it hears left, so the item page asks only about finished raters."""
        ...


class NoPanel:
    """The default: no panel says anything."""

    def rater_left(self, rater: object, /) -> str | None:
        return None


_panel: PanelForRaters[Any] = NoPanel()


def panel_register(panel: PanelForRaters[Any]) -> None:
    """Make `panel` the one the rater pages ask (the last call counts)."""
    global _panel
    _panel = panel


def panel_for_raters() -> PanelForRaters[Any]:
    return _panel
