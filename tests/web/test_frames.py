"""Sending frames: what a viewer gets, in messages Daphne will send."""

from __future__ import annotations

import pytest

from kubeviz.web.playback import frames
from kubeviz.web.playback.frames import WHOLE_GROUP_SHARE, Frame, FrameDiff, Group, message_batches
from kubeviz.web.playback.node_grid import PENDING, delta_html, grid_html, names_attribute, parse_token, read_grid


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


def test_message_batches_count_bytes_not_characters() -> None:
    """The 256 KB a browser may get is bytes: a fragment of non-ASCII text weighs what it encodes to."""
    parts = ['<p id="a">' + "é" * 400 + "</p>", '<p id="b">' + "é" * 400 + "</p>"]  # 400 chars, 800 bytes of é each
    assert len(message_batches(parts, limit=1200)) == 2
    assert len(message_batches(parts, limit=2000)) == 1


# A big cluster's grid: values, not HTML per cell (kubeviz/web/playback/node_grid.py)


def grid_frame(tokens: list[str], layout: str = "grid:1") -> Frame:
    names = [f"n{i}" for i in range(len(tokens))]
    cells = [(name, "zone-a") for name in names]
    html = grid_html("run-nodes-body", cells, tokens, "<h2>Nodes</h2>", names_attribute(cells))
    group = Group(id="run-nodes-body", layout=layout, html=html, values=tokens, delta_id="run-nodes-delta")
    return Frame(position=0, groups=[group])


def test_a_grid_diff_is_one_element_with_the_changed_cells_values() -> None:
    diff = FrameDiff()
    tokens = ["0.0.0..0"] * 100
    first = diff.changed_parts(grid_frame(tokens))
    assert len(first) == 1
    assert 'data-values="0.0.0..0 0.0.0..0' in first[0], "a viewer first gets the whole grid"
    assert diff.changed_parts(grid_frame(tokens)) == [], "nothing changed, nothing sent"
    moved = list(tokens)
    moved[3] = "2s.25.13..1"  # the chosen node, now with a pod
    moved[42] = "0x.0.0..0"  # rejected by a filter
    delta = diff.changed_parts(grid_frame(moved))
    element = '<i id="run-nodes-delta" class="grid-delta" hx-swap-oob="true" hidden data-changes="{}"></i>'
    assert delta == [element.format("3=2s.25.13..1 42=0x.0.0..0")]
    back = diff.changed_parts(grid_frame(tokens))
    assert back == [element.format("3=0.0.0..0 42=0.0.0..0")]


def test_viewers_going_between_the_same_shared_grids_share_one_delta(monkeypatch: pytest.MonkeyPatch) -> None:
    """A class watching together gets the same frames; the delta between two of them is worked
    out once, and a list that only reuses a freed list's id is not taken for it."""
    worked: list[int] = []
    plain = frames.delta_html

    def counting(delta_id: str, changed: list[tuple[int, str]]) -> str:
        worked.append(len(changed))
        return plain(delta_id, changed)

    monkeypatch.setattr(frames, "delta_html", counting)
    tokens = ["0.0.0..0"] * 100
    moved = list(tokens)
    moved[7] = "2s.25.13..1"
    before, after = grid_frame(tokens), grid_frame(moved)
    viewers = [FrameDiff() for _ in range(20)]
    for diff in viewers:
        diff.changed_parts(before)
    deltas = {diff.changed_parts(after)[0] for diff in viewers}
    assert len(deltas) == 1
    assert "7=2s.25.13..1" in deltas.pop()
    assert worked == [1]
    other = FrameDiff()
    other.changed_parts(grid_frame(list(tokens)))  # equal values, another list: its own delta
    assert "7=2s.25.13..1" in other.changed_parts(after)[0]
    assert worked == [1, 1]


def test_a_grid_is_sent_whole_when_its_layout_or_most_of_it_changed() -> None:
    diff = FrameDiff()
    tokens = ["0.0.0..0"] * 10
    diff.changed_parts(grid_frame(tokens))
    (whole,) = diff.changed_parts(grid_frame(tokens, layout="grid:2"))  # a node added or removed
    assert 'class="node-cells" data-grid="1" data-count="10"' in whole
    most = ["5.50.50..3"] * 5 + tokens[5:]  # 5 of 10 > 40 %: one swap of the whole grid
    (again,) = diff.changed_parts(grid_frame(most, layout="grid:2"))
    assert again.startswith('<div id="run-nodes-body" class="nodes-body nodes-grid" hx-swap-oob="true">')
    diff.reset()  # a reconnecting browser: the whole grid again
    assert diff.changed_parts(grid_frame(most, layout="grid:2"))[0].startswith('<div id="run-nodes-body"')


def test_a_token_reads_back_as_the_browser_reads_it() -> None:
    assert parse_token("4sx.45.30..12") == {"level": 4, "flags": "sx", "cpu": 45, "mem": 30, "gpu": None, "pods": 12}
    assert parse_token("10.100.20.75.3")["gpu"] == 75
    assert parse_token(PENDING) == {"pending": True}


def test_a_5000_node_grid_and_its_diffs_stay_small() -> None:
    """5,000 nodes × (a name of 12 characters + a token of about 12): well under 256 KB whole."""
    tokens = [f"{i % 11}.{i % 100}.{(3 * i) % 100}..{i % 30}" for i in range(5000)]
    names = sorted(
        ((f"general-{i:04d}", ("zone-a", "zone-b", "zone-c")[i % 3]) for i in range(5000)), key=lambda c: c[1]
    )
    html = grid_html("run-nodes-body", names, tokens, "<h2>Nodes</h2>", names_attribute(names))
    assert len(html.encode()) < 256 * 1024 / 2
    assert read_grid(html)["tokens"][names[-1][0]] == tokens[-1]
    changed = [(i, "10sx.100.100..110") for i in range(0, 5000, 3)][: int(WHOLE_GROUP_SHARE * 5000)]
    assert len(delta_html("run-nodes-delta", changed).encode()) < 64 * 1024
