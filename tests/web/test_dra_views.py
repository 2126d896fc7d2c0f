"""DRA on the run page: a node card's slices and devices, the grid shaded by devices in use, the
cycle panel's per-node account of a pod's claims, a pod's story of its claims, the glossary's
words. Hand-written traces (tests/core/results/test_replay_dra.py's ``dra_trace``), stored as a
run's events where a page is asked for, so the views are pinned whatever the engine does today."""

from __future__ import annotations

import html as html_lib
import json
import re

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse

from kubeviz.web.models import Policy, Run, RunStatus, Scenario, TraceEvent
from kubeviz.web.playback.node_grid import GRID_PIECE_BYTES, GRID_WHOLE_BYTES, parse_token, read_grid
from kubeviz.web.playback.node_view import GRID_AFTER, NodeMemo, card_context, node_group
from kubeviz.web.playback.rendering import cycle_context
from kubeviz.web.services import glossary
from kubeviz.web.services.pod_story import pod_story, story_chapters, with_claim_events
from scheduler_core.results import ViewState
from tests.core.results.test_replay_dra import GPU, MEMORY, Trace, dra_trace, gpu, state_after

MILLI_UNIT = re.compile(r"\b\d+m\b")  # "500m": a unit a learner should not meet on a device


def card_html(state: ViewState, node: str) -> str:
    return render_to_string("web/runs/partials/node_card.html", {"node": card_context(state, node, None)})


def text_of(html: str) -> str:
    return html_lib.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


# -- the node card --------------------------------------------------------------------------------


def test_a_node_card_lists_its_slices_devices_and_who_holds_each() -> None:
    t = dra_trace()
    state = state_after(t, t.seq_of("pod_deleted") - 1)
    ctx = card_context(state, "node-1", None)
    (own, fabric) = ctx["slices"]
    assert (own["slice"], own["local"], own["in_use"], own["count"]) == ("node-1-gpus", True, 2, 2)
    assert (fabric["slice"], fabric["local"], fabric["reach"]) == ("fabric", False, 2)
    gpu0, gpu1 = own["devices"]
    assert gpu0["status"] == "held"
    assert gpu0["summary"] == "A100 · 1.2.3 · 80 Gi memory"
    assert [(h["claim"], h["request"], [c["key"] for c in h["pods"]]) for h in gpu0["holders"]] == [
        ("train-gpu-x7k2p", "gpu", ["default/train"])
    ]
    assert [c["name"] for c in gpu1["holders"][0]["pods"]] == ["infer-1", "infer-2"]
    assert fabric["devices"][0]["status"] == "free"

    html = card_html(state, "node-1")
    said = text_of(html)
    assert "gpu.example.com slice node-1-gpus · pool node-1 · 2 of 2 in use" in said
    assert "network-attached, 2 nodes · 0 of 1 in use" in said
    assert "↳ claim train-gpu-x7k2p (gpu) train" in said
    assert 'data-pod="default/infer-2"' in html  # a holder's pods are chips: a click opens their story
    assert 'href="/glossary/#resourceslice"' in html


def test_a_shared_device_shows_each_claims_share_and_what_is_left_in_gi() -> None:
    state = state_after(dra_trace())
    (own, _) = card_context(state, "node-2", None)["slices"]
    (device,) = own["devices"]
    assert device["status"] == "shared"
    assert [(h["claim"], h["consumed"]) for h in device["holders"]] == [
        ("share-a-claim", "20 Gi memory"),
        ("share-b-claim", "40 Gi memory"),
    ]
    (share,) = device["shares"]
    assert share["label"] == "20 Gi of 80 Gi memory left"
    assert share["used_pct"] == 75.0
    said = text_of(card_html(state, "node-2"))
    assert "shared" in said
    assert "(gpu, takes 20 Gi memory)" in said
    assert not MILLI_UNIT.search(said), said


def test_a_claim_without_consumers_is_shown_as_such_and_a_freed_device_as_free() -> None:
    t = dra_trace()
    released = card_context(state_after(t, t.seq_of("claim_released")), "node-1", None)
    holder = released["slices"][0]["devices"][0]["holders"][0]
    assert holder["unused"] is True
    assert "allocated, no pod in its" in text_of(card_html(state_after(t, t.seq_of("claim_released")), "node-1"))
    freed = card_context(state_after(t, t.seq_of("claim_deallocated")), "node-1", None)
    assert freed["slices"][0]["devices"][0]["status"] == "free"


def test_a_node_without_devices_has_no_device_section() -> None:
    t = dra_trace()
    t("node_added", 500, node="plain", allocatable={"cpu": 8000}, labels={}, taints=[], unschedulable=False)
    state = state_after(t)
    assert card_context(state, "plain", None)["slices"] == []
    assert "dra-slices" not in card_html(state, "plain")


# -- the grid -------------------------------------------------------------------------------------


def big_cluster(nodes: int, *, devices: bool) -> Trace:
    """``nodes`` nodes with 8 GPUs each (when ``devices``); node-000's claim holds 2 of them, and
    node-001's shared GPU 0 has half its memory taken."""
    t = Trace()
    for n in range(nodes):
        name = f"node-{n:03d}"
        t("node_added", node=name, allocatable={"cpu": 8000, "pods": 110}, labels={}, taints=[], unschedulable=False)
        if devices:
            gpus = [gpu(f"gpu-{i}", shared=(n == 1 and i == 0)) for i in range(8)]
            t(
                "resource_slice_added",
                slice=f"{name}-gpus",
                driver=GPU,
                pool=name,
                node=name,
                nodes=[name],
                devices=gpus,
            )
    if devices:
        rows = [
            {"request": "gpu", "driver": GPU, "pool": "node-000", "device": f"gpu-{i}", "node": "node-000"}
            for i in (0, 1)
        ]
        t("claim_added", claim="default/two", requests=[{"name": "gpu", "device_class": GPU, "count": 2}])
        t("claim_allocated", claim="default/two", pod="default/p", node="node-000", devices=rows)
        half = {"request": "gpu", "driver": GPU, "pool": "node-001", "device": "gpu-0", "node": "node-001"}
        t("claim_added", claim="default/half", requests=[{"name": "gpu", "device_class": GPU, "count": 1}])
        t("claim_allocated", claim="default/half", pod="default/q", node="node-001",
          devices=[{**half, "share_id": "a", "consumed": {MEMORY: "40Gi"}}])  # fmt: skip
    return t


def test_the_grid_is_shaded_by_devices_in_use_with_its_legend() -> None:
    state = state_after(big_cluster(GRID_AFTER + 2, devices=True))
    group = node_group(state, NodeMemo())
    grid = read_grid(group.html)
    first, second, third = (parse_token(grid["tokens"][f"node-{n:03d}"]) for n in range(3))
    assert first["devices"] == 25  # 2 of 8 GPUs
    assert first["level"] == 3  # shaded by devices: 20-29 %
    assert second["devices"] == 6  # half of one of 8: 6.25 %
    assert second["level"] == 1
    assert third["devices"] == 0
    assert third["level"] == 0  # nothing in use: the pale cell, however busy its CPUs
    assert 'class="device-legend' in group.html
    assert "coloured by its devices in use" in group.html


def test_the_grid_of_a_cluster_without_devices_keeps_its_tokens() -> None:
    state = state_after(big_cluster(GRID_AFTER + 2, devices=False))
    group = node_group(state, NodeMemo())
    token = read_grid(group.html)["tokens"]["node-000"]
    assert token.count(".") == 4  # five fields, as ever
    assert "devices" not in parse_token(token)
    assert "device-legend" not in group.html


def test_devices_appearing_change_the_grid_layout_so_the_legend_is_sent() -> None:
    """At t = 0 the nodes come before their slices: the frame after the slices must carry the
    heading with the device legend, not only the changed cells."""
    t = big_cluster(GRID_AFTER + 2, devices=True)
    first_slice = t.seq_of("resource_slice_added")
    nodes_only = node_group(state_after(t, first_slice - 1), NodeMemo())
    with_devices = node_group(state_after(t), NodeMemo())
    assert nodes_only.layout != with_devices.layout


def test_a_big_device_grid_stays_within_a_message() -> None:
    """2,000 nodes × 8 devices: the grid is still one data string, a token per node, and every
    message (the whole grid, or each piece) under the 256 KB a client accepts."""
    state = state_after(big_cluster(2000, devices=True))
    group = node_group(state, NodeMemo())
    assert "dra-device" not in group.html  # no card markup in the grid
    size = len(group.html.encode())
    if size > GRID_WHOLE_BYTES:
        assert group.pieces is not None
        assert all(len(piece.encode()) <= GRID_PIECE_BYTES for piece in group.pieces())
    assert size < 256 * 1024
    assert len(read_grid(group.html)["tokens"]) == 2000


# -- the cycle panel ------------------------------------------------------------------------------


def test_the_cycle_panel_gives_the_allocators_account_per_node_rejected_first() -> None:
    t = dra_trace()
    state = state_after(t, t.seq_of("filter"))
    ctx = cycle_context(state)
    account = ctx["filter"]["devices"]
    assert [(row["node"], row["ok"]) for row in account["rows"]] == [("node-2", False), ("node-1", True)]
    html = render_to_string("web/runs/partials/cycle.html", {"cycle": ctx})
    said = text_of(html)
    assert "DynamicResources : the claims ' requests, node by node" in said
    assert f"request gpu asks 1 device of class {GPU}: 0 usable on node-2 (1 fail the request's selectors)" in said
    assert re.search(r'<li class="bad" data-node="node-2">', html)


def test_a_pod_without_claims_has_no_device_account() -> None:
    t = dra_trace()
    state = state_after(t, t.seq_of("cycle_start", pod="default/share-a"))
    t2 = Trace()
    for event in t.events[: t.seq_of("cycle_start", pod="default/share-a") + 1]:
        t2.events.append(event)
    t2("filter", pod="default/share-a", evaluated=2, feasible=2, histogram={}, nominated_node=None)
    state = state_after(t2)
    assert cycle_context(state)["filter"]["devices"] is None
    assert "device-account" not in render_to_string("web/runs/partials/cycle.html", {"cycle": cycle_context(state)})


# -- the pod's story ------------------------------------------------------------------------------


def story_of(t: Trace, pod: str) -> list[tuple[str, list[str]]]:
    own = [e for e in t.events if e.get("pod") == pod]
    events = with_claim_events(own, t.events)
    return [(line.text, line.details) for chapter in story_chapters(events) for line in chapter.lines]


def test_a_pods_story_tells_its_claims_from_template_to_deletion() -> None:
    lines = story_of(dra_trace(), "default/train")
    texts = [text for text, _ in lines]
    assert "ResourceClaim train-gpu-x7k2p generated for it from template gpu-template" in texts
    assert "Claim train-gpu-x7k2p allocated on node-1: 1 device" in texts
    assert "Left the reservedFor of claim train-gpu-x7k2p (pod deleted)" in texts
    assert "Claim train-gpu-x7k2p deallocated: its devices are free again (no pod uses it any more)" in texts
    assert "Claim train-gpu-x7k2p deleted (its pod is gone)" in texts
    (allocated,) = [d for text, d in lines if text.startswith("Claim train-gpu-x7k2p allocated")]
    assert allocated == [f"gpu-0 (pool node-1, driver {GPU}) on node-1 for request gpu"]
    (filtered,) = [d for text, d in lines if text.startswith("Filter:")]
    assert f"request gpu asks 1 device of class {GPU}: 0 usable on node-2 (1 fail the request's selectors)" in filtered


def test_a_shared_device_and_a_shared_claim_in_the_story() -> None:
    (allocated,) = [d for text, d in story_of(dra_trace(), "default/share-b") if "allocated" in text]
    assert allocated == [f"gpu-0 (pool node-2, driver {GPU}) on node-2 for request gpu, shared: takes 40 Gi of memory"]
    texts = [text for text, _ in story_of(dra_trace(), "default/infer-2")]
    assert "Joined the reservedFor of claim shared-claim: it uses the claim's devices too" in texts


def test_a_claims_end_before_the_pod_used_it_is_not_in_its_story() -> None:
    t = Trace()
    t("claim_added", claim="default/c", requests=[])
    t("claim_deallocated", claim="default/c", reason="earlier")
    t("claim_reserved", claim="default/c", pod="default/late")
    t("claim_deleted", claim="default/c", reason="deleted by the timeline")
    texts = [text for text, _ in story_of(t, "default/late")]
    assert texts == [
        "Joined the reservedFor of claim c: it uses the claim's devices too",
        "Claim c deleted (deleted by the timeline)",
    ]


# -- pages of a stored run ------------------------------------------------------------------------


@pytest.fixture
def dra_run(builtins: None) -> Run:
    """A run whose stored events are ``dra_trace`` (no engine involved)."""
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug="default"), seed=1
    )
    events = dra_trace().events
    TraceEvent.objects.bulk_create(
        TraceEvent(run=run, seq=e["seq"], t_ms=e["t_ms"], type=e["type"], data=e) for e in events
    )
    Run.objects.filter(id=run.id).update(status=RunStatus.FINISHED, last_seq=events[-1]["seq"], t_ms=400)
    run.refresh_from_db()
    return run


@pytest.mark.django_db
def test_the_story_endpoint_includes_the_claims_end(client: Client, dra_run: Run) -> None:
    story = pod_story(dra_run, "default/train", dra_run.last_seq)
    texts = [line.text for chapter in story.chapters for line in chapter.lines]
    assert texts[-1] == "Claim train-gpu-x7k2p deleted (its pod is gone)"
    response = client.get(reverse("run-pod", args=[dra_run.id]), {"name": "default/train", "seq": dra_run.last_seq})
    assert response.status_code == 200
    said = text_of(response.content.decode())
    assert "deallocated: its devices are free again" in said
    assert 'href="/glossary/#dra-allocation"' in response.content.decode()


@pytest.mark.django_db
def test_the_node_endpoint_and_the_run_page_show_devices(client: Client, dra_run: Run) -> None:
    t = dra_trace()
    seq = t.seq_of("pod_deleted") - 1
    card = client.get(reverse("run-node", args=[dra_run.id]), {"name": "node-2", "seq": seq})
    assert card.status_code == 200
    assert "20 Gi of 80 Gi memory left" in text_of(card.content.decode())
    page = client.get(reverse("run-detail", args=[dra_run.id]), {"seq": seq}).content.decode()
    assert 'data-device="gpu-1"' in page
    assert "infer-2 joins the reservedFor of shared-claim" in page


# -- words ----------------------------------------------------------------------------------------


DRA_WORDS = {
    "dra": "Dynamic Resource Allocation",
    "resourceclaim": "ResourceClaim",
    "resourceclaimtemplate": "ResourceClaimTemplate",
    "deviceclass": "DeviceClass",
    "resourceslice": "ResourceSlice",
    "device": "device",
    "cel-selector": "CEL selector",
    "dra-allocation": "allocation",
    "reservedfor": "reservedFor",
    "consumable-capacity": "consumable capacity",
    "firstavailable": "firstAvailable",
    "matchattribute": "matchAttribute",
    "dra-extended-resource": "extended resource backed by DRA",
    "dynamicresources": "DynamicResources",
}


def test_every_dra_word_has_a_glossary_entry() -> None:
    for slug, word in DRA_WORDS.items():
        entry = glossary.term(slug)
        assert word in entry.name, slug
        assert entry.section == "dra", slug


def test_every_term_the_dra_pieces_use_is_a_dra_word() -> None:
    """The node card, cycle panel and legend link only words the glossary has (a missing one would
    raise when rendered); the new ones are all DRA's."""
    t = dra_trace()
    pieces = [
        card_html(state_after(t, t.seq_of("claim_released")), "node-1"),
        card_html(state_after(t), "node-2"),
        render_to_string("web/runs/partials/cycle.html", {"cycle": cycle_context(state_after(t, t.seq_of("filter")))}),
    ]
    joined = " ".join(pieces)
    used = set(re.findall(r'href="/glossary/#([a-z0-9-]+)"', joined)) | set(
        re.findall(r'data-term="([a-z0-9-]+)"', joined)
    )
    assert {"resourceslice", "resourceclaim", "reservedfor", "consumable-capacity", "dynamicresources"} <= used


def test_device_rows_hold_no_json_unfriendly_values() -> None:
    """Cards are memoised by their context's JSON: device rows must serialise."""
    ctx = card_context(state_after(dra_trace()), "node-2", None)
    assert json.loads(json.dumps(ctx["slices"])) == ctx["slices"]
