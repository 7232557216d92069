"""python manage.py export_strategy_labels --study SLUG -o FILE.jsonl [--labels auto|ID]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from completions.models import Study
from completions.selectors import study_get
from labelling import selectors
from labelling.models import LabelSet


class Command(BaseCommand):
    help = (
        "Write a study's strategy labels as JSON Lines (the strategy-labels format of "
        "docs/strategies.md): by default the latest finished label set."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("-o", "--output", required=True, help="file to write")
        parser.add_argument(
            "--labels", default="auto", help='"auto" (latest finished label set) or a set id'
        )

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_get(slug=options["study"])
        if study is None:
            raise CommandError(f"no study with slug {options['study']!r}")
        label_set = self._label_set(study, options["labels"])
        n = 0
        try:
            with open(options["output"], "w", encoding="utf-8") as out:
                for row in selectors.export_rows(label_set):
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
                    n += 1
        except OSError as exc:
            raise CommandError(f"cannot write {options['output']}: {exc}") from exc
        self.stdout.write(
            f"exported {n} labelled completions of study {study.slug} "
            f"(label set {label_set.pk}: {label_set.name}) to {options['output']}"
        )

    def _label_set(self, study: Study, choice: str) -> LabelSet:
        if choice == "auto":
            found = selectors.label_set_latest_finished(study)
            if found is None:
                raise CommandError(
                    f"study {study.slug} has no finished label set; run "
                    f"`llm_run label --study {study.slug} --judge NAME` first"
                )
            return found
        found = LabelSet.objects.filter(study=study, pk=choice if choice.isdigit() else -1).first()
        if found is None:
            raise CommandError(f"study {study.slug} has no label set {choice!r}")
        return found
