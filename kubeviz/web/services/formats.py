"""How a virtual time and a pod's name are written for people, one way on every page.

The run page's frames (:mod:`kubeviz.web.playback.rendering`), a pod's story, the divergence bar,
a fork's story and the views all print times and pods with these two, so a time reads the same
in the narration, the clock and a story line.
"""

from __future__ import annotations

__all__ = ["format_time", "short_pod"]


def format_time(t_ms: int | float | None) -> str:
    """Virtual time for people: ``12.0s``, ``2m 05.0s``, ``1h 02m 05s``."""
    if t_ms is None:
        return "—"
    seconds = t_ms / 1000
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"{int(minutes)}m {rest:04.1f}s"
    hours, minutes = divmod(int(minutes), 60)
    return f"{hours}h {minutes:02d}m {int(rest):02d}s"


def short_pod(key: str) -> str:
    """A pod's ``namespace/name`` key as shown: the bare name in the default namespace."""
    ns, _, name = key.partition("/")
    return name if ns == "default" and name else key
