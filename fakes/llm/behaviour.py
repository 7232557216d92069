"""What a request asks the fake server to do, read from the model name or a header.

Syntax: ``MODEL@opt,opt,...`` (or the same options in the ``X-Fake-Behaviour`` header), e.g.
``judge-gpt@ttft=300`` or ``x@status=429*1,retry_after=0.2``. ``*N`` limits a misbehaviour to
the first N attempts of each distinct prompt, so a retry (the SDK's or ours) can succeed.

Options: ``ttft=MS`` delay before the first content token; ``chunk_ms=MS`` delay between
chunks; ``status=CODE[*N]`` answer with that HTTP error; ``retry_after=S`` header on 429/503;
``bad=http|content|schema[*N]`` undecodable event data, a reply that is not JSON, or JSON that
breaks the requested schema; ``bad=utf8|nul[*N]`` a reply with bytes that are not UTF-8, or
with a NUL and a lone surrogate; ``flood=MB|endless|noise`` a reply of MB megabytes, one that
never ends, or an endless stream without text (flood.py); ``hang[*N]`` never answer;
``drop=K[*N]`` cut the connection after K content chunks; ``bias=X`` the judge's pull towards
the first-shown reply (default 0.15); ``draw`` answers a structured request with any object its
JSON schema allows, drawn from the schema in the request (see ``schema_draw``), instead of the
built-in plausible replies.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Misbehaviour:
    value: str
    times: int | None  # None: always

    def applies(self, attempt: int) -> bool:
        return self.times is None or attempt <= self.times


@dataclass
class Behaviour:
    base_model: str
    ttft_ms: float = 0.0
    chunk_ms: float = 0.0
    retry_after: str | None = None
    bias: float = 0.15
    status: Misbehaviour | None = None
    bad: Misbehaviour | None = None
    hang: Misbehaviour | None = None
    drop: Misbehaviour | None = None
    flood: str | None = None
    draw: bool = False


def _misbehaviour(raw: str) -> Misbehaviour:
    value, _, times = raw.partition("*")
    return Misbehaviour(value, int(times) if times else None)


def parse(model: str, header: str | None = None) -> Behaviour:
    base, _, options = model.partition("@")
    behaviour = Behaviour(base_model=base)
    for option in filter(None, [*options.split(","), *(header or "").split(",")]):
        name, _, value = option.strip().partition("=")
        if name == "ttft":
            behaviour.ttft_ms = float(value)
        elif name == "chunk_ms":
            behaviour.chunk_ms = float(value)
        elif name == "retry_after":
            behaviour.retry_after = value
        elif name == "bias":
            behaviour.bias = float(value)
        elif name == "flood":
            behaviour.flood = value
        elif name in ("status", "bad", "drop"):
            setattr(behaviour, name, _misbehaviour(value))
        elif name == "draw":
            behaviour.draw = True
        elif name.startswith("hang"):
            behaviour.hang = _misbehaviour(name.removeprefix("hang") or "")
    return behaviour
