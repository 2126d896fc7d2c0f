"""Small filters for the run page's partials."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def plugin_at(plugins: list[dict[str, Any]], index: int) -> str:
    """The name of the score table's ``index``-th plugin column (a cell's ``data-plugin``)."""
    try:
        return str(plugins[index].get("plugin", ""))
    except (IndexError, AttributeError, TypeError):
        return ""
