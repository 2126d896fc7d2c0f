"""URL slugs for user-named objects (scenarios, policies).

A new object's slug is its name and a short random token: ``my-cluster-k3f9qa``. Numbering
(``secret``, ``secret-2``, …) would tell whoever got ``secret-2`` that someone already has a
``secret`` — a private one included — and suffixing only when the name is taken would tell
the same by the token's presence. So every new slug gets a token, whoever owns what. Slugs
of existing objects never change, so their URLs stay.
"""

from __future__ import annotations

import secrets

from django.db import models
from django.utils.text import slugify

__all__ = ["RESERVED_SLUGS", "TOKEN_ALPHABET", "TOKEN_LENGTH", "unique_slug"]

# Words that are URL paths of their own under /scenarios/ and /policies/ (a token keeps any new
# slug off them; built-ins are named by hand).
RESERVED_SLUGS = frozenset({"new", "editor"})
# Lowercase letters and digits without the look-alikes (0/o, 1/l/i): 31**6 ≈ 887 million tokens.
TOKEN_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
TOKEN_LENGTH = 6


def unique_slug(name: str, model: type[models.Model], fallback: str) -> str:
    """``slugify(name)`` plus ``-`` and a random token, not yet used by any row of ``model``.

    The caller still inserts inside a retry loop: another request may take the slug between
    this check and its insert.
    """
    base = slugify(name)[:110].strip("-") or fallback
    while True:
        token = "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(TOKEN_LENGTH))
        slug = f"{base}-{token}"
        if not model._default_manager.filter(slug=slug).exists():
            return slug
