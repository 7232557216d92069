"""The downloads page of a study: streamed files and the release bundle."""

from __future__ import annotations

import tempfile

from django.http import FileResponse, Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from completions.access import access_study_for_admin, study_admin_required

from .release import release_build
from .streams import DOWNLOADS


def _private(response: HttpResponse, filename: str) -> HttpResponse:
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    # Study data: never kept by a browser or proxy cache.
    response["Cache-Control"] = "no-store"
    return response


@require_GET
@study_admin_required
def downloads_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_admin(request.user, slug)
    return render(
        request, "studio/downloads.html", {"study": study, "downloads": DOWNLOADS.values()}
    )


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
