"""The playback websockets: one consumer per viewer.

- :mod:`.base`: ``PlaybackConsumer``, the protocol every page shares (the controls, one viewer's
  playhead and what it was sent, present mode, the hub it joins);
- :mod:`.run`: ``RunConsumer``, a run page's (``ws/runs/<id>/``);
- :mod:`.compare`: ``CompareConsumer``, a comparison page's (``ws/compare/<id>/``).
- :mod:`.guards`: what keeps one socket from costing the others (its budgets, answers that
  share renders, a deleted recording's close), mixed into ``PlaybackConsumer``.

``kubeviz/web/routing.py`` routes to the two subclasses.
"""

from __future__ import annotations
