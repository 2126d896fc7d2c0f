"""Unique URL slugs for user-named objects (scenarios, policies)."""

from __future__ import annotations

from django.db import models
from django.utils.text import slugify

__all__ = ["unique_slug", "RESERVED_SLUGS"]

# Words that are URL paths of their own under /scenarios/ and /policies/.
RESERVED_SLUGS = frozenset({"new", "editor"})


def unique_slug(name: str, model: type[models.Model], fallback: str) -> str:
    """``slugify(name)``, then ``-2``, ``-3`` … until no row of ``model`` has it."""
    base = slugify(name)[:110].strip("-") or fallback
    taken = set(model._default_manager.filter(slug__startswith=base).values_list("slug", flat=True))
    taken |= RESERVED_SLUGS
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    return slug
