"""`{{ text|reveal }}` and `{{ text|hidden_characters }}` in every Django template (a builtin,
heart_site/settings.py): see core/display.py."""

from __future__ import annotations

from django import template

from core.display import hidden_characters, reveal

register = template.Library()
register.filter("reveal", reveal, is_safe=True)
register.filter("hidden_characters", hidden_characters)
