"""Small filters for the run page's partials."""

from __future__ import annotations

from typing import Any

from django import template

from ..models import Run
from ..services.versions import policy_version, run_version

register = template.Library()


@register.filter
def kubernetes_version(item: Any) -> str:
    """The Kubernetes version a run or a policy runs (services.versions): ``v1.36``."""
    return run_version(item) if isinstance(item, Run) else policy_version(item)


@register.filter
def plugin_at(plugins: list[dict[str, Any]], index: int) -> str:
    """The name of the score table's ``index``-th plugin column (a cell's ``data-plugin``)."""
    try:
        return str(plugins[index].get("plugin", ""))
    except (IndexError, AttributeError, TypeError):
        return ""
