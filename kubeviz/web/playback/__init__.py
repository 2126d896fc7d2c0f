"""Playback: watching a recording, each viewer with a playhead of their own (docs/architecture.md).

A worker computes a run and stores it (``services/``); everything here reads what is stored and
shows it. This package sits above ``services/``: it imports services, and nothing in
``services/`` imports it (``tests/web/test_layers.py``). The views, the websocket routes and the
templates sit above both.

How data flows, from the database to a viewer's browser:

1. **Recordings** read the stored run: :mod:`.recording` (``RunRecording``: the run's row, its
   decision stops, view-state cursors over the stored events, an LRU of rendered frames) and
   :mod:`.compare_recording` (``CompareRecording``: every column of a comparison on one clock).
2. **Rendering of a frame** turns one moment's view state into HTML fragments:
   :mod:`.run_frames` (a run page's frame, its recording status, a viewer's playhead line),
   :mod:`.rendering` (the partials' contexts: lanes, cycle, narration, summary),
   :mod:`.node_view` and :mod:`.node_grid` (node cards, or a big cluster's grid as data),
   :mod:`.comparison_moment` (a comparison's columns and clock at one moment) and
   :mod:`.lesson_columns` (a side-by-side lesson's two columns). :mod:`.frames` holds what they
   make (``Frame``: fragments and node groups) and what each viewer is sent (``FrameDiff``:
   only the fragments that changed, in messages of at most 192 KB).
3. **Playheads** move over a recording: :mod:`.playhead` (``Playhead`` and ``Timeline``, pure
   Python) and :mod:`.comparison_steps` (what a comparison's playhead counts: time or
   decisions).
4. **The hub** (:mod:`.hub`) is one recording watched in this process: one channel-layer
   subscription to the worker's nudges, one re-read loop, one render per moment for all its
   viewers; it notices when its recording is deleted and tells the viewers.
5. **Consumers** (:mod:`.consumers`) are the websockets: the base ``PlaybackConsumer`` (the
   protocol, one viewer's playhead and diff) and its subclasses for a run and a comparison;
   :mod:`.presenting` lets one viewer's playhead lead the others who opened their link, on
   any web process (a row and a channel-layer group per presentation).
   What one client may cost is bounded before any of it is read: :mod:`.budgets` (messages per
   socket, sockets per address and user, a pause after a flood), :mod:`.control_values` (what a
   control's action and value may hold), and ``consumers/guards.py`` (the receive path that
   applies them, and answers controls without waiting for renders).
"""

from __future__ import annotations
