"""A grid too big for one websocket message goes in pieces, whatever the names
(kubeviz/web/playback/node_grid.py): 10,000 nodes with names of 253 characters (2.5 MB of names;
one message of 2.41 MB closed every viewer with 1011) reach the viewer in messages under the bound,
and the grid the browser builds from them is the whole grid, every name in full."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from kubeviz.web.models import Policy, Run
from kubeviz.web.playback.frames import Frame, FrameDiff, Group
from kubeviz.web.playback.node_grid import (
    GRID_PIECE_BYTES,
    PENDING,
    cell_token,
    grid_html,
    grid_pieces,
    names_attribute,
    parse_token,
    plan_pieces,
    read_grid,
    shade_level,
)
from kubeviz.web.services.runner import step_loop
from tests.web.test_big_grid import TIMEOUT, application, scenario_sync

NODES = 10_000
BOUND = 256 * 1024  # bytes: every message (frames.py packs at most 192 KB; never over 512 KiB)
# A DNS subdomain of 253 characters: four labels, the last ending in the group's 4-digit index.
PREFIX = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 57])
NAME_CHARS = len(PREFIX) + 4


def long_names_document(nodes: int, pods: int) -> str:
    objects = "\n".join(
        f"    - {{apiVersion: v1, kind: Pod, metadata: {{name: p{i}}}, spec: {{containers: "
        f'[{{name: c, image: "app:1", resources: {{requests: {{cpu: "1", memory: 1Gi}}}}}}]}}}}'
        for i in range(pods)
    )
    return (
        "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {name: long-names}\nspec:\n  seed: 1\n"
        f"  nodeGroups:\n    - count: {nodes}\n      namePrefix: {PREFIX}\n      zones: [zone-a, zone-b, zone-c]\n"
        '      template: {allocatable: {cpu: "4", memory: 16Gi}}\n'
        f"  objects:\n{objects}\n"
    )


def recorded_sync() -> Run:
    run = Run.objects.create(
        scenario=scenario_sync("long-names", long_names_document(NODES, 30)), policy=Policy.objects.get(slug="default")
    )
    step_loop(run.id, publish=lambda group, message: None)
    run.refresh_from_db()
    assert run.status == "finished", run.error
    return run


def frame_grid_sync(run: Run, at: int) -> dict[str, Any]:
    from kubeviz.web.playback.recording import RunRecording

    recording = RunRecording(run.id)
    recording.refresh()
    return read_grid(recording.frame(at).whole())


class Browser:
    """What playback.js holds after each answer: a whole grid (one element, or its container and
    pieces, all in the messages of one answer) replaces what it had; a delta changes cells."""

    def __init__(self, communicator: WebsocketCommunicator) -> None:
        self.communicator = communicator
        self.names: list[str] = []
        self.tokens: list[str] = []
        self.sizes: list[int] = []

    async def answer(self) -> int:
        messages = []
        while True:
            message = str(await self.communicator.receive_from(timeout=TIMEOUT))
            self.sizes.append(len(message.encode()))
            messages.append(message)
            found = re.search(r'<p id="run-playhead"[^>]*data-position="(-?\d+)"', message)
            if found:
                break
        joined = "".join(messages)
        if '<div id="run-nodes-body" class="nodes-body nodes-grid"' in joined:
            grid = read_grid(joined)
            self.names, self.tokens = grid["names"], [grid["tokens"][n] for n in grid["names"]]
        for pairs in re.findall(r'<i id="run-nodes-delta"[^>]* data-changes="([^"]*)"', joined):
            for pair in pairs.split(" ") if pairs else []:
                index, token = pair.split("=")
                self.tokens[int(index)] = token
        return int(found.group(1))

    async def move(self, action: str, value: Any = None) -> int:
        await self.communicator.send_to(text_data=json.dumps({"action": action, "value": value}))
        return await self.answer()


def node_holding(pods: int) -> dict[str, Any]:
    return {"pods": [f"default/p{i}" for i in range(pods)]}


def test_a_node_with_one_small_pod_is_shaded_apart_from_an_empty_one() -> None:
    """Issue #35: 600 of 5,000 nodes held one 250m pod (3 % of 8 CPUs), and shared the lowest
    shade with the empty ones, so the grid looked empty. Level 0 is a node holding nothing."""
    assert shade_level(0.0, 0) == 0
    assert shade_level(3.1, 1) == 1
    assert shade_level(0.0, 1) == 1  # a BestEffort pod requests nothing, but the node holds it
    assert cell_token(node_holding(0), "", 0.0, 0.0, None) == "0.0.0..0"
    assert cell_token(node_holding(1), "s", 3.1, 3.1, None) == "1s.3.3..1"
    assert parse_token(cell_token(node_holding(1), "", 0.4, 0.2, None))["level"] == 1


@pytest.mark.parametrize(
    ("share", "level"),
    [(0.1, 1), (9.99, 1), (10.0, 2), (25.0, 3), (45.4, 5), (62.5, 7), (89.9, 9), (90.0, 10), (100.0, 10), (130.0, 10)],
)
def test_a_busy_nodes_shade_steps_by_tenths_of_its_largest_share(share: float, level: int) -> None:
    assert shade_level(share, 1) == level
    assert parse_token(cell_token(node_holding(1), "", share, 0.0, None))["level"] == level
    assert parse_token(cell_token(node_holding(1), "", 0.0, 0.0, share))["level"] == level  # the GPU share counts too


def test_pieces_hold_every_name_and_stay_under_their_bound() -> None:
    """The unit: any layout cuts into pieces of at most GRID_PIECE_BYTES, read back whole, in order,
    also with a zone per node (label values are names too)."""
    for zones in (("zone-a", "zone-b"), tuple(f"z{i:05d}-" + "q" * 56 for i in range(NODES))):
        layout = sorted(((f"{PREFIX}{i:04d}", zones[i % len(zones)]) for i in range(NODES)), key=lambda c: c[1])
        tokens = ["10svnrxc.100.100.100.110"] * NODES  # the longest a token gets
        pieces = grid_pieces("run-nodes-body", plan_pieces(layout), tokens, "<h2>Nodes</h2>")
        assert max(len(p.encode()) for p in pieces) <= GRID_PIECE_BYTES
        grid = read_grid("".join(pieces))
        assert grid["names"] == [name for name, _ in layout]
        assert len(grid["zones"]) == len(zones)


def test_a_diff_sends_a_big_grid_in_pieces_and_a_small_one_whole() -> None:
    def frame(names: list[str]) -> Frame:
        layout = [(name, "zone-a") for name in names]
        tokens = ["1.10.10..1"] * len(names)
        html = grid_html("run-nodes-body", layout, tokens, "<h2>Nodes</h2>", names_attribute(layout))
        plan = plan_pieces(layout)
        group = Group(
            id="run-nodes-body",
            layout=str(len(names)),
            html=html,
            values=tokens,
            delta_id="run-nodes-delta",
            pieces=(lambda: grid_pieces("run-nodes-body", plan, tokens, "<h2>Nodes</h2>"))
            if len(html) > 160_000
            else None,
        )
        return Frame(position=0, groups=[group])

    small = FrameDiff().changed_parts(frame([f"n{i}" for i in range(100)]))
    assert len(small) == 1
    assert 'data-names="n0 n1' in small[0]
    big = FrameDiff().changed_parts(frame([f"{PREFIX}{i:04d}" for i in range(2000)]))
    assert len(big) > 2
    assert 'data-pieces="' in big[0]
    assert read_grid("".join(big))["count"] == 2000


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
async def test_10000_nodes_with_253_character_names_reach_a_viewer_whole_in_bounded_messages() -> None:
    run = await database_sync_to_async(recorded_sync)()
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run.id}/")
    communicator.scope["user"] = AnonymousUser()
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert connected, code
    browser = Browser(communicator)
    assert await browser.answer() == 0
    assert len(browser.names) == NODES
    assert {len(n) for n in browser.names} == {NAME_CHARS}
    assert set(browser.tokens) == {PENDING}, "the cluster of t = 0, before its node_added events"
    end = run.last_seq
    for at in (end, end // 2, end):
        assert await browser.move("seek", at) == at
        expected = await database_sync_to_async(frame_grid_sync)(run, at)
        assert browser.names == expected["names"], f"the names at {at}"
        assert browser.tokens == [expected["tokens"][n] for n in expected["names"]], f"the grid at {at}"
    step = await browser.move("back", "decision")
    expected = await database_sync_to_async(frame_grid_sync)(run, step)
    assert browser.tokens == [expected["tokens"][n] for n in expected["names"]], "a step: a delta applied"
    assert sum(parse_token(t)["pods"] for t in browser.tokens if t != PENDING) > 0
    await communicator.disconnect()
    assert max(browser.sizes) <= BOUND, sorted(browser.sizes)[-5:]
    assert sum(browser.sizes) > 2_500_000, "the names did travel, in full"
