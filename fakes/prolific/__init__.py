"""A small local server speaking the part of Prolific's documented API the studio uses.

Tests and the demo start it instead of api.prolific.com (`python -m fakes.prolific --port N`):
studies with completion codes, their submissions, bulk approval, single transitions (approve,
reject), screen-outs, bonus payments (set up, then paid) and participant groups. Every call is
recorded (`GET /_control/calls`), and a test plays the participants through `/_control/...`:
add a submission, complete it with a code, return it, let it time out.
"""

from __future__ import annotations

from .server import create_app

__all__ = ["create_app"]
