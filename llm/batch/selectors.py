"""What the run page shows of batch mode: each provider batch and its state."""

from __future__ import annotations

from django.db.models import QuerySet

from ..models import Run
from .models import ProviderBatch


def batches_for_run(run: Run) -> QuerySet[ProviderBatch]:
    return ProviderBatch.objects.filter(run=run).select_related("endpoint").order_by("id")
