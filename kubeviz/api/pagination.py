"""Pages of list answers: ``?page=N`` and ``?page_size=`` (default 50, at most 200)."""

from __future__ import annotations

from rest_framework.pagination import PageNumberPagination

__all__ = ["Pages"]


class Pages(PageNumberPagination):
    """``{"count", "next", "previous", "results"}``; ``next`` and ``previous`` are full URLs (or null)."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
