"""CPU to render the rater's judging item: Jinja2 (what serves it) against Django's templates.

    .venv/bin/python benchmarks/bench_item_render.py [--renders 20000]

The item (templates/jinja2/annotation/item_fragment.jinja) is rendered on every rater round
trip. The Django candidate is the same file with its four Jinja-only spellings turned into
Django's (`loop.first`, `with`, the CSRF input, the whitespace-trimming comment); the script
checks that both give the same page before it times them. Prints microseconds of CPU per
render, to set against the round trip's few milliseconds of CPU (bench_rater_throughput.py,
"ms CPU per trip").
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def django_source(jinja: str) -> str:
    source = re.sub(r"\{#-.*?-#\}\n?", "", jinja, flags=re.S)
    source = source.replace("loop.first", "forloop.first")
    source = source.replace("{% with turns = item.turns %}", "{% with turns=item.turns %}")
    return source.replace("{{ csrf_input }}", "{% csrf_token %}")


def context() -> dict:
    from annotation.forms import judgment_form_view
    from annotation.selectors import ItemView
    from annotation.services import SCALE
    from annotation.views import SCALE_TEXT
    from completions.models import Study

    study = Study(slug="bench", name="Bench", axis_marks=True)
    turns = [
        {"speaker": "seeker" if i % 2 == 0 else "supporter", "text": "I feel lost lately. " * 12}
        for i in range(8)
    ]
    item = ItemView(token="t" * 22, turns=turns, left_text="A reply. " * 40, right_text="B " * 90)
    assert len(SCALE) == len(SCALE_TEXT)
    return {
        "item": item,
        "submit_url": "/r/item/t/submit",
        "heartbeat_url": "/r/item/t/heartbeat",
        "form": judgment_form_view(study=study),
        "number": "7",
        "total": "20",
        "percent": "30",
        "notice": "",
        "scale": SCALE_TEXT,
        "chosen": None,
        "rationale_max": str(study.rationale_max_chars),
    }


def cpu_per_render(render, renders: int) -> float:
    render()  # compiled and warm
    start = time.process_time()
    for _ in range(renders):
        render()
    return 1e6 * (time.process_time() - start) / renders


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renders", type=int, default=20000)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heart_site.settings_test")
    import django

    django.setup()
    from django.middleware.csrf import get_token
    from django.template import engines
    from django.test import RequestFactory

    jinja = engines["jinja2"].get_template("annotation/item_fragment.jinja")
    path = ROOT / "templates" / "jinja2" / "annotation" / "item_fragment.jinja"
    plain = engines["django"].from_string(django_source(path.read_text(encoding="utf-8")))
    request = RequestFactory().get("/")
    get_token(request)
    values = context()
    pages = [t.render(values, request) for t in (jinja, plain)]
    same = [re.sub(r"\s+", " ", re.sub(r'value="[\w-]{32,}"', "", p)).strip() for p in pages]
    assert same[0] == same[1], "the two templates do not give the same page"
    rows = [
        ("Jinja2 (serves it)", cpu_per_render(lambda: jinja.render(values, request), args.renders)),
        ("Django templates", cpu_per_render(lambda: plain.render(values, request), args.renders)),
    ]
    print(f"{'engine':<22}{'us CPU per render':>20}")
    for name, micros in rows:
        print(f"{name:<22}{micros:>20.1f}")
    print(f"Django / Jinja2: {rows[1][1] / rows[0][1]:.1f}x")


if __name__ == "__main__":
    main()
