"""5,000 nodes end to end: every websocket message a viewer gets stays under 256 KB, and the grid
the browser builds from the messages is the grid of the frame at the viewer's moment.

The browser side is emulated the way ``static/kubeviz/playback.js`` reads the messages: a whole
grid (``data-names`` / ``data-values``) replaces what it had; a ``.grid-delta`` element's
``index=token`` pairs change those cells.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from kubeviz.web.models import Comparison, ComparisonRun, Policy, Run, Scenario
from kubeviz.web.playback.node_grid import PENDING, parse_token, read_grid
from kubeviz.web.routing import websocket_urlpatterns
from kubeviz.web.services import comparisons as service
from kubeviz.web.services import dispatch
from kubeviz.web.services.builtins import load_builtins
from kubeviz.web.services.engine import parse_scenario, scenario_preview
from kubeviz.web.services.runner import step_loop
from kubeviz.web.services.shared_runs import scenario_seed

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

LIMIT = 256 * 1024  # bytes: docs/architecture.md, "Big clusters"
TIMEOUT = 120
NODES_GPU = 400  # six runs of the GPU policies: moderate, as the result charts aggregate past 120 nodes
application = URLRouter(websocket_urlpatterns)
ENGINE_SCENARIOS = Path(__file__).resolve().parents[2] / "scheduler_core" / "scenarios"


def big_document(nodes: int, pods: int) -> str:
    """``nodes`` 4-CPU nodes in three zones (one nodeGroup) and ``pods`` 1-CPU pods."""
    objects = "\n".join(
        f"    - {{apiVersion: v1, kind: Pod, metadata: {{name: p{i}}}, spec: {{containers: "
        f'[{{name: c, image: "app:1", resources: {{requests: {{cpu: "1", memory: 2Gi}}}}}}]}}}}'
        for i in range(pods)
    )
    return (
        "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {name: grid}\nspec:\n  seed: 1\n"
        f"  nodeGroups:\n    - count: {nodes}\n      namePrefix: general-\n      zones: [zone-a, zone-b, zone-c]\n"
        '      template: {allocatable: {cpu: "4", memory: 16Gi}}\n'
        f"  objects:\n{objects}\n"
    )


def scenario_sync(slug: str, text: str) -> Scenario:
    load_builtins()
    return Scenario.objects.create(
        slug=slug, name=slug, document=text, preview=scenario_preview(parse_scenario(text, slug + ".yaml"))
    )


def recorded_sync(nodes: int, pods: int) -> Run:
    run = Run.objects.create(
        scenario=scenario_sync("grid-5000", big_document(nodes, pods)), policy=Policy.objects.get(slug="default")
    )
    step_loop(run.id, publish=lambda group, message: None)
    run.refresh_from_db()
    assert run.status == "finished", run.error
    return run


class Viewer:
    """What a browser holds of each grid after applying the messages (playback.js's rules)."""

    def __init__(self, communicator: WebsocketCommunicator, playhead_id: str) -> None:
        self.communicator = communicator
        self.playhead_id = playhead_id
        self.grids: dict[str, list[str]] = {}  # prefix -> tokens, in cell order
        self.names: dict[str, list[str]] = {}
        self.sizes: list[int] = []

    def apply(self, message: str) -> None:
        for prefix in set(re.findall(r'<div id="([a-z0-9-]*?)run-nodes-body" class="nodes-body nodes-grid"', message)):
            grid = read_grid(message, prefix)
            self.names[prefix] = grid["names"]
            self.grids[prefix] = [grid["tokens"][name] for name in grid["names"]]
        for prefix, pairs in re.findall(r'<i id="([a-z0-9-]*?)run-nodes-delta"[^>]* data-changes="([^"]*)"', message):
            tokens = self.grids[prefix]  # a delta only ever follows a whole grid of its layout
            for pair in pairs.split(" ") if pairs else []:
                index, token = pair.split("=")
                tokens[int(index)] = token

    async def until_playhead(self) -> str:
        """Every message of one answer (its last carries the playhead line); the playhead line."""
        while True:
            message = str(await self.communicator.receive_from(timeout=TIMEOUT))
            self.sizes.append(len(message.encode()))
            self.apply(message)
            found = re.search(rf'<p id="{self.playhead_id}"[^>]*>', message)
            if found:
                return found.group(0)

    async def move(self, action: str, value: Any = None) -> str:
        await self.communicator.send_to(text_data=json.dumps({"action": action, "value": value}))
        return await self.until_playhead()


def position(playhead: str) -> int:
    found = re.search(r'data-position="(-?\d+)"', playhead)
    assert found, playhead
    return int(found.group(1))


async def test_a_viewer_of_a_5000_node_run_never_gets_a_message_over_256_kb() -> None:
    """Connect at event 0, seek to the middle, the end, back to 0, step, step back, seek to a
    quarter: every message ≤ 256 KB, and the grid the browser builds is the frame's."""
    run = await database_sync_to_async(recorded_sync)(5000, 300)
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run.id}/")
    communicator.scope["user"] = AnonymousUser()
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert connected, code
    viewer = Viewer(communicator, "run-playhead")
    assert position(await viewer.until_playhead()) == 0
    assert len(viewer.grids[""]) == 5000, "the grid is drawn at event 0, before any node_added event"
    assert set(viewer.grids[""]) == {PENDING}

    async def expect_frame(at: int) -> None:
        frame = await database_sync_to_async(_frame_html)(run, at)
        expected = read_grid(frame)
        assert viewer.names[""] == expected["names"]
        assert viewer.grids[""] == [expected["tokens"][n] for n in expected["names"]], f"the grid at {at}"

    end = run.last_seq
    assert position(await viewer.move("seek", end // 2)) == end // 2
    await expect_frame(end // 2)
    assert position(await viewer.move("seek", end)) == end
    await expect_frame(end)
    bound = sum(parse_token(t)["pods"] for t in viewer.grids[""])
    assert bound == 300, "at the end every 1-CPU pod is on a node"
    assert position(await viewer.move("seek", 0)) == 0
    await expect_frame(0)
    first = position(await viewer.move("step", "decision"))
    assert first > 5000  # past the cluster's 5,000 node_added events
    await expect_frame(first)
    assert [t for t in viewer.grids[""] if "s" in parse_token(t)["flags"]], "the chosen node is marked"
    second = position(await viewer.move("step", "decision"))
    await expect_frame(second)
    assert position(await viewer.move("back", "decision")) == first
    await expect_frame(first)
    assert position(await viewer.move("seek", end // 4)) == end // 4
    await expect_frame(end // 4)
    assert position(await viewer.move("seek", end)) == end
    await expect_frame(end)
    await communicator.disconnect()
    assert max(viewer.sizes) <= LIMIT, sorted(viewer.sizes)[-5:]
    assert max(viewer.sizes) > 50 * 1024, "a whole 5,000-node grid did travel (names and tokens)"


def _frame_html(run: Run, at: int) -> str:
    from kubeviz.web.playback.recording import RunRecording

    recording = RunRecording(run.id)
    recording.refresh()
    return recording.frame(at).whole()


def gpu_document(nodes: int) -> str:
    """The built-in GPU sample with its node list repeated to ``nodes`` GPU nodes (same pods)."""
    text = (ENGINE_SCENARIOS / "gpu-sharing-small.yaml").read_text()
    head, rest = text.split("    nodesCsv: |\n", 1)
    rows, tail = rest.split("    podsCsv: |\n", 1)
    lines = rows.splitlines()
    header, sample = lines[0], [line for line in lines[1:] if line.strip()]
    repeated = []
    for i in range(nodes):
        _, *fields = sample[i % len(sample)].strip().split(",")
        repeated.append(f"      big-{i:05d}," + ",".join(fields))
    body = "\n".join([header, *repeated])
    return (
        head.replace('name: "gpu-sharing-small"', 'name: "gpu-grid"')
        + "    nodesCsv: |\n"
        + body
        + "\n    podsCsv: |\n"
        + tail
    )


def gpu_comparison_sync(nodes: int) -> Comparison:
    scenario = scenario_sync("gpu-grid", gpu_document(nodes))
    spec = service.BUILTIN_COMPARISONS["gpu-sharing-small"]
    original = dispatch.start_run
    dispatch.start_run = lambda run: None  # type: ignore[assignment]
    try:
        comparison = service.create_comparison(
            scenario, [Policy.objects.get(slug=p) for p in spec.policies], [scenario_seed(scenario)], None
        )
    finally:
        dispatch.start_run = original  # type: ignore[assignment]
    for entry in ComparisonRun.objects.filter(comparison=comparison):
        step_loop(entry.run_id, lambda group, message: None)
    assert set(Run.objects.filter(comparison_entries__comparison=comparison).values_list("status", flat=True)) == {
        "finished"
    }
    return comparison


async def test_a_six_column_gpu_comparison_sends_grids_under_256_kb() -> None:
    """The six GPU policies side by side on 400 GPU nodes: the end frame is six grids, each its
    own message under the limit (the cells' HTML of six columns was 1.3 MB)."""
    comparison = await database_sync_to_async(gpu_comparison_sync)(NODES_GPU)
    communicator = WebsocketCommunicator(application, f"/ws/compare/{comparison.id}/")
    communicator.scope["user"] = AnonymousUser()
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert connected, code
    viewer = Viewer(communicator, "compare-playhead")
    await viewer.until_playhead()
    assert sorted(viewer.grids) == [f"c{i}-" for i in range(6)]
    assert all(len(tokens) == NODES_GPU for tokens in viewer.grids.values())
    end = re.search(r'data-end="(\d+)"', await viewer.move("seek", 10**9))
    assert end
    at_end = {prefix: list(tokens) for prefix, tokens in viewer.grids.items()}
    assert all(any(parse_token(t)["gpu"] for t in tokens) for tokens in at_end.values()), "GPUs in use at the end"
    await viewer.move("seek", int(end.group(1)) // 2)
    await viewer.move("seek", 0)
    await viewer.move("seek", int(end.group(1)))
    assert viewer.grids == at_end, "back at the end, by deltas: the same six grids"
    await communicator.disconnect()
    assert max(viewer.sizes) <= LIMIT, sorted(viewer.sizes)[-5:]
