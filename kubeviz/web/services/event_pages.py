"""How many stored trace events one answer holds: the run page's events.json and the API.

A trace can hold millions of events; a page of them is bounded so one request cannot make the
server build an answer of hundreds of megabytes (the whole trace streams as a download instead).
"""

from __future__ import annotations

__all__ = ["EVENTS_DEFAULT_LIMIT", "EVENTS_MAX_LIMIT"]

EVENTS_DEFAULT_LIMIT = 1000
EVENTS_MAX_LIMIT = 5000
