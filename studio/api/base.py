"""What every API view shares: authentication, the study-admin role, throttling, pagination."""

from __future__ import annotations

from django.db.models import Model
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.generics import GenericAPIView
from rest_framework.pagination import BasePagination, CursorPagination
from typing_extensions import TypeVar

from completions.access import IsStudyAdmin, access_study_for_admin
from completions.models import Study
from core.throttling import AnonRateLimit, UserRateLimit

# The model a list or detail view serves (ListAPIView[Study], ...); Model for the others.
_M = TypeVar("_M", bound=Model, covariant=True, default=Model)


class IdCursorPagination(CursorPagination):
    """Stable pages over a growing table: new rows never shift a page (cursor on id)."""

    ordering = "id"
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


class StudyAdminApi(GenericAPIView[_M]):
    """Base of every API view: token or session auth, study admins only, throttled.

    `study()` fetches the study of the URL through access_study_for_admin, so an admin of one
    study gets 403 on another's.
    """

    heart_role = "study_admin"
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsStudyAdmin]
    throttle_classes = [UserRateLimit, AnonRateLimit]
    pagination_class: type[BasePagination] | None = None

    def study(self) -> Study:
        if not hasattr(self, "_study"):
            self._study = access_study_for_admin(self.request.user, self.kwargs["slug"])
        return self._study
