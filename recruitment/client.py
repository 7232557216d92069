"""Prolific's researcher API (api.prolific.com/api/v1), the calls the studio makes, over httpx2
(the HTTP client the provider SDKs already use, so the platform installs no second one).

`PROLIFIC_API_URL` names the server (tests and the demo point it at `fakes.prolific`). Every
call sends `Authorization: Token <token>`; an answer other than 2xx raises ProlificError with
Prolific's own words.
"""

from __future__ import annotations

from typing import Any

import httpx2
from django.conf import settings


class ProlificError(Exception):
    """Prolific refused a call or could not be reached: the message says which and why."""


class ProlificClient:
    def __init__(self, token: str, *, base_url: str | None = None, timeout: float = 30) -> None:
        self._http = httpx2.Client(
            base_url=(base_url or settings.PROLIFIC_API_URL).rstrip("/") + "/api/v1/",
            headers={"Authorization": f"Token {token}"},
            timeout=timeout,
        )

    def __enter__(self) -> ProlificClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        try:
            response = self._http.request(method, path, json=body)
        except httpx2.HTTPError as exc:
            raise ProlificError(f"Prolific could not be reached ({exc})") from None
        if response.status_code >= 400:
            raise ProlificError(
                f"Prolific answered {response.status_code} to {method} {path}: "
                f"{response.text[:300]}"
            )
        data: dict[str, Any] = response.json() if response.content else {}
        return data

    # Studies
    def study_create(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._call("POST", "studies/", body)

    def study_publish(self, study_id: str) -> dict[str, Any]:
        return self._call("POST", f"studies/{study_id}/transition/", {"action": "PUBLISH"})

    def submissions(self, study_id: str) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = self._call("GET", f"studies/{study_id}/submissions/")[
            "results"
        ]
        return results

    # Reviewing
    def bulk_approve(self, study_id: str, submission_ids: list[str]) -> None:
        self._call(
            "POST",
            "submissions/bulk-approve/",
            {"study_id": study_id, "submission_ids": submission_ids},
        )

    def reject(self, submission_id: str, *, message: str, category: str) -> None:
        body = {"action": "REJECT", "message": message, "rejection_category": category}
        self._call("POST", f"submissions/{submission_id}/transition/", body)

    def screen_out(self, study_id: str, submission_ids: list[str]) -> None:
        body = {"submission_ids": submission_ids, "increase_places": True}
        self._call("POST", f"studies/{study_id}/screen-out-submissions/", body)

    # Bonuses: set up, then paid (the pay call is not idempotent on Prolific's side)
    def bonus_setup(self, study_id: str, lines: list[tuple[str, str]]) -> dict[str, Any]:
        csv = "\n".join(f"{pid},{amount}" for pid, amount in lines)
        return self._call(
            "POST", "submissions/bonus-payments/", {"study_id": study_id, "csv_bonuses": csv}
        )

    def bonus_pay(self, bonus_id: str) -> None:
        self._call("POST", f"bulk-bonus-payments/{bonus_id}/pay/")

    # Participant groups
    def group_create(self, name: str) -> dict[str, Any]:
        return self._call("POST", "participant-groups/", {"name": name})

    def group_add(self, group_id: str, participant_ids: list[str]) -> None:
        body = {"participant_ids": participant_ids}
        self._call("POST", f"participant-groups/{group_id}/participants/", body)
