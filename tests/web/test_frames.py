"""Sending frames: what a viewer gets, in messages Daphne will send."""

from __future__ import annotations

from kubeviz.web.frames import message_batches


def test_a_big_frame_goes_as_several_messages_that_keep_every_fragment_in_order() -> None:
    """Daphne refuses to send a message over 1 MiB: the fragments are batched under the limit."""
    parts = [f'<div id="n{i}" hx-swap-oob="true">{"x" * 90}</div>' for i in range(100)]
    batches = message_batches(parts, limit=1000)
    assert "".join(batches) == "".join(parts)
    assert all(len(b) <= 1000 for b in batches)
    assert len(batches) > 1
    assert all(b.startswith('<div id="n') and b.endswith("</div>") for b in batches), "never cut inside a fragment"
    assert message_batches(["y" * 5000], limit=1000) == ["y" * 5000], "a fragment larger than the limit goes alone"
    assert message_batches([]) == []
