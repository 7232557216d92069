"""Roles: the only way views and API endpoints decide who may do what.

- study admin: an active staff user who is a superuser or in the "study admins" group;
- writer: an active user in the "writers" group;
- rater: identified by the signed rater cookie (see annotation.access), no account.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any, TypeGuard, cast

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404
from rest_framework.permissions import BasePermission

from core.roles import role

from .models import Study

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractUser, AnonymousUser, User
    from rest_framework.request import Request
    from rest_framework.views import APIView

STUDY_ADMINS = "study admins"
WRITERS = "writers"


def is_study_admin(user: AbstractUser | AnonymousUser) -> TypeGuard[User]:
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return False
    return user.is_superuser or user.groups.filter(name=STUDY_ADMINS).exists()


def is_writer(user: AbstractUser | AnonymousUser) -> TypeGuard[User]:
    return bool(
        user.is_authenticated and user.is_active and user.groups.filter(name=WRITERS).exists()
    )


def study_admin_required[V: Callable[..., HttpResponseBase]](view: V) -> V:
    """Decorator: logged-in study admins only (others get the login page or 403)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_study_admin(request.user):
            raise PermissionDenied("Study admins only.")
        return view(request, *args, **kwargs)

    return cast(V, role("study_admin")(wrapper))


def studies_for_admin(user: AbstractUser | AnonymousUser) -> QuerySet[Study]:
    """The studies a user administers: all for a superuser; for another study admin those that
    list them in Study.admins, plus those listing nobody (open to every study admin)."""
    if not is_study_admin(user):
        return Study.objects.none()
    if user.is_superuser:
        return Study.objects.all()
    return Study.objects.filter(Q(admins=user) | Q(admins__isnull=True)).distinct()


def can_admin_study(user: AbstractUser | AnonymousUser, study: Study) -> bool:
    if not is_study_admin(user):
        return False
    if user.is_superuser:
        return True
    admins = study.admins.values_list("pk", flat=True)
    return not admins.exists() or admins.filter(pk=user.pk).exists()


def access_study_for_admin(user: AbstractUser | AnonymousUser, slug: str) -> Study:
    """Fetch a study a study admin asked for; raises PermissionDenied for anyone else,
    including a study admin of other studies (Study.admins)."""
    if not is_study_admin(user):
        raise PermissionDenied("Study admins only.")
    # One query: the study with whether it lists any admin and whether it lists this user.
    members = Study.admins.through.objects.filter(study_id=OuterRef("pk"))
    study = get_object_or_404(
        Study.objects.annotate(
            lists_admins=Exists(members), lists_user=Exists(members.filter(user_id=user.pk))
        ),
        slug=slug,
    )
    # django-stubs types the annotated study but loses its annotations through get_object_or_404.
    listed, any_listed = study.lists_user, study.lists_admins  # type: ignore[attr-defined]
    if not (user.is_superuser or listed or not any_listed):
        raise PermissionDenied("You are not an admin of this study.")
    return study


class IsStudyAdmin(BasePermission):
    """DRF permission: study admins only (object level: admins of that study)."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        return is_study_admin(request.user)

    def has_object_permission(self, request: Request, view: APIView, obj: object) -> bool:
        study = obj if isinstance(obj, Study) else getattr(obj, "study", None)
        return study is not None and can_admin_study(request.user, study)
