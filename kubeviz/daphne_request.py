"""daphne's HTTP request without Twisted's own parsing of form bodies.

Twisted's ``http.Request`` parses every URL-encoded or multipart POST body into ``request.args``
before daphne sees it (``parsePOSTFormSubmission``, on by default; Twisted's docs warn that it
"can use large amounts of memory for large uploads"). daphne never reads ``args``: it passes the
raw body to Django, which parses it again under DATA_UPLOAD_MAX_MEMORY_SIZE. Measured here
(bench/bench_hostile.py), a 6 MB body of ``%5B`` took daphne from 125 MB to 580 MB of memory
before Django refused it as too big. :func:`install` makes daphne build requests that skip it.
"""

from __future__ import annotations

from typing import Any

from daphne import http_protocol  # type: ignore[import-untyped]

__all__ = ["RawBodyRequest", "install"]


class RawBodyRequest(http_protocol.WebRequest):  # type: ignore[misc]  # daphne is untyped
    """daphne's WebRequest with ``parsePOSTFormSubmission=False``: the body stays raw bytes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("parsePOSTFormSubmission", False)
        super().__init__(*args, **kwargs)


def install() -> None:
    """Make daphne's HTTPFactory build RawBodyRequest (it looks ``WebRequest`` up in its module
    each time it builds a connection's protocol)."""
    http_protocol.WebRequest = RawBodyRequest
