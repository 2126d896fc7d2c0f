"""The playback websockets: one consumer per viewer.

- :mod:`.base`: ``PlaybackConsumer``, the protocol every page shares (the controls, one viewer's
  playhead and what it was sent, present mode, the hub it joins);
- :mod:`.run`: ``RunConsumer``, a run page's (``ws/runs/<id>/``);
- :mod:`.compare`: ``CompareConsumer``, a comparison page's (``ws/compare/<id>/``).

``kubeviz/web/routing.py`` routes to the two subclasses.
"""

from __future__ import annotations
