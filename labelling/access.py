"""The labeller role: logged-in users in the "labellers" group label sampled completions."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from core.roles import role

LABELLERS = "labellers"


def is_labeller(user: Any) -> bool:
    return bool(
        user.is_authenticated and user.is_active and user.groups.filter(name=LABELLERS).exists()
    )


def labeller_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Decorator: logged-in labellers only (others get the login page or 403)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            # Labellers are not staff: they sign in on the labelling page, not the admin's.
            return redirect_to_login(request.get_full_path(), login_url="labelling:login")
        if not is_labeller(request.user):
            raise PermissionDenied("Labellers only.")
        return view(request, *args, **kwargs)

    return role("labeller")(wrapper)
