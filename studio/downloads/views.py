"""The downloads page of a study: streamed files and the release bundle."""

from __future__ import annotations

import tempfile
from typing import TYPE_CHECKING

from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from completions.access import access_study_for_admin, study_admin_required
from studio.models import ReleaseHold

from .release import release_build
from .screening import release_hold_decide, release_holds_for_review, release_screen
from .streams import DOWNLOADS

if TYPE_CHECKING:
    from core.middleware import AuthenticatedHttpRequest


def _private[R: HttpResponseBase](response: R, filename: str) -> R:
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    # Study data: never kept by a browser or proxy cache.
    response["Cache-Control"] = "no-store"
    return response


@require_GET
@study_admin_required
def downloads_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    context = {
        "study": study,
        "downloads": DOWNLOADS.values(),
        "holds": release_holds_for_review(study),
    }
    return render(request, "studio/downloads.html", context)


@require_POST
@study_admin_required
def release_screen_run(request: HttpRequest, slug: str) -> HttpResponse:
    """Screen the writer texts and rationales now, so the admin can review before building."""
    study = access_study_for_admin(request.user, slug)
    summary = release_screen(study=study)
    messages.info(
        request,
        f"Screened {summary.writer_texts} writer text(s) and {summary.rationales} rationale(s); "
        f"{summary.decisions.get('pending', 0)} wait for your review below.",
    )
    return redirect("downloads:page", slug=study.slug)


@require_POST
@study_admin_required
def release_hold(
    request: AuthenticatedHttpRequest, slug: str, pk: int, action: str
) -> HttpResponse:
    """Release a held text into the bundles, or keep it out."""
    study = access_study_for_admin(request.user, slug)
    hold = get_object_or_404(ReleaseHold, pk=pk, study=study)
    if action not in ("release", "keep-out"):
        raise Http404("No such decision.")
    release_hold_decide(hold=hold, release=action == "release", user=request.user)
    return redirect("downloads:page", slug=study.slug)


@require_GET
@study_admin_required
def download_file(request: HttpRequest, slug: str, name: str) -> StreamingHttpResponse:
    study = access_study_for_admin(request.user, slug)
    download = DOWNLOADS.get(name)
    if download is None:
        raise Http404("No such download.")
    response = StreamingHttpResponse(download.stream(study), content_type=download.media_type)
    return _private(response, download.filename(study))


@require_POST
@study_admin_required
def download_release(request: HttpRequest, slug: str) -> FileResponse:
    """Build the bundle into a temporary file (a zip needs to seek back), then stream it."""
    study = access_study_for_admin(request.user, slug)
    spool = tempfile.TemporaryFile()  # noqa: SIM115 (FileResponse closes it when sent)
    release_build(study=study, out=spool)
    spool.seek(0)
    response = FileResponse(spool, content_type="application/zip")
    return _private(response, f"{study.slug}-release.zip")
