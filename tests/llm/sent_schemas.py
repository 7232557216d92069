"""What the judge, label and adversarial runs send: runs against the fake server through the
real SDKs, and the JSON schemas read back from the request bodies the server received."""

from __future__ import annotations

import json

from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from llm import services
from llm.executor import run_execute
from llm.models import Run
from tests.factories import DialogueContextFactory, StudyFactory
from tests.factories.labelling import build_labelled_study
from tests.factories.llm import endpoint, study_with_pairs

SOURCE = [
    {"speaker": "supporter", "text": "Hello, how are you today?"},
    {"speaker": "seeker", "text": "Not great. I lost my job last week."},
    {"speaker": "supporter", "text": "I'm sorry to hear that. What happened?"},
    {"speaker": "seeker", "text": "They cut the whole team."},
    {"speaker": "supporter", "text": "That must have been a shock. \u201cCut\u201d how?"},
    {"speaker": "seeker", "text": "I don't know what to tell my family."},
]
KINDS = ("judge", "label", "adversarial")


def study_for(kind: str, n: int = 1):
    if kind == "judge":
        return study_with_pairs(n, systems=[("gpt-x", "gpt"), ("llama-x", "llama")])
    if kind == "label":
        return build_labelled_study(
            slug=f"labels-{StudyFactory._meta.model.objects.count()}", n_contexts=n
        )
    study = StudyFactory()
    for i, emotion in enumerate(["anxiety", "sadness", "anger", "fear"][: max(1, n)]):
        DialogueContextFactory(
            study=study, external_id=f"src-{i}", turns=SOURCE, emotion_type=emotion
        )
    return study


def run_kind(study, kind: str, ep) -> Run:
    params = {"profile": "Linear-Ramp", "contexts": 4} if kind == "adversarial" else {}
    run = services.run_plan(study=study, kind=kind, endpoints=[ep], params=params)
    services.run_start(run=run)
    run_execute(run.pk)
    run.refresh_from_db()
    return run


def sent(server, kind: str, provider: str, *, model: str | None = None):
    """A finished run of `kind` and the distinct schemas its requests carried, as received."""
    server.state.reset()
    study = study_for(kind)
    name = f"{kind}-{provider}"
    ep = endpoint(server, name, provider=provider, family="mistral", model=model or name)
    run = run_kind(study, kind, ep)
    distinct = {json.dumps(s, sort_keys=True): s for s in server.state.schemas}
    return run, list(distinct.values())


def replies(schema: dict) -> st.SearchStrategy:
    """Every value `schema` allows, drawn by hypothesis-jsonschema, composed as the schema says.

    hypothesis-jsonschema re-derives an object's property strategies on every draw (about a
    fifth of a second per verdict on this machine); a closed object whose properties are all
    required is exactly a fixed dictionary of them, and an anyOf exactly one of its branches,
    so those two are composed here and every other subschema is left whole to the library.
    """
    props = schema.get("properties")
    closed = schema.get("additionalProperties") is False and set(schema) <= OBJECT_KEYS
    all_required = props is not None and schema.get("required") == list(props)
    if schema.get("type") == "object" and closed and all_required:
        return st.fixed_dictionaries({name: replies(sub) for name, sub in props.items()})
    if "anyOf" in schema and set(schema) <= {"anyOf", "description"}:
        return st.one_of([replies(branch) for branch in schema["anyOf"]])
    return from_schema(schema)


OBJECT_KEYS = {"type", "properties", "required", "additionalProperties", "description"}
