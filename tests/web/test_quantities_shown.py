"""Quantities and labels as people read them where they look (scheduler_core/api/units.py)."""

from __future__ import annotations

import re

from django.template.loader import render_to_string

from kubeviz.web.playback.node_view import card_context
from kubeviz.web.playback.rendering import _requests_text, gpu_amount
from kubeviz.web.services.scenarios import _node_row
from scheduler_core.api.model import Node
from scheduler_core.api.quantity import to_resource_int


def test_the_cluster_table_shows_binary_units_and_every_label_key_as_it_is() -> None:
    """An EKS node as `kubectl get nodes -o yaml` gives it: memory in Ki, storage in bytes."""
    node = Node(
        "ip-10-0-1-62.eu-west-1.compute.internal",
        {
            "cpu": to_resource_int("cpu", "3920m"),
            "memory": to_resource_int("memory", "15186992Ki"),
            "pods": 58,
            "ephemeral-storage": 76224326324,
        },
        {"topology.kubernetes.io/zone": "eu-west-1a", "kubernetes.io/arch": "amd64"},
    )
    row = _node_row(node)
    assert (row["cpu"], row["memory"], row["pods"]) == ("3.92", "14.5 Gi", "58")
    assert row["labels"] == [
        "kubernetes.io/arch=amd64",
        "kubernetes.io/hostname=ip-10-0-1-62.eu-west-1.compute.internal",
        "topology.kubernetes.io/zone=eu-west-1a",
    ]


def test_pod_requests_read_in_cores_and_binary_units() -> None:
    assert _requests_text({"cpu": 700, "memory": 2118 * 2**20}) == "cpu 700m, memory 2.07 Gi"


def test_the_cluster_page_prints_every_label_whole(client, builtins) -> None:
    """The page itself, not only its rows: each label key=value as it is, none left empty."""
    from kubeviz.web.models import Cluster

    cluster = Cluster.objects.get(name="three-zones")
    body = client.get(f"/clusters/{cluster.pk}/").content.decode()
    assert '<span class="label" title="kubernetes.io/hostname=node-a1">kubernetes.io/hostname=node-a1</span>' in body
    assert "topology.kubernetes.io/zone=zone-a</span>" in body
    assert '<span class="label" title=""></span>' not in body


# -- GPU shares: in GPUs, never in thousandths (issue #35) ---------------------------------


def test_gpu_amounts_read_in_whole_gpus_and_fractions() -> None:
    assert [gpu_amount(m) for m in (1000, 500, 0, 2250, 4000, 333, 125)] == [
        "1 GPU",
        "0.5 GPU",
        "0 GPU",
        "2.25 GPU",
        "4 GPU",
        "0.333 GPU",
        "0.125 GPU",
    ]


def test_a_gpu_nodes_card_says_what_is_free_and_used_in_gpus() -> None:
    """A node of four GPUs: one free, one half used by a sharing pod, two taken by a two-GPU pod."""
    from tests.web.test_gpu_views import cluster, fold

    ctx = card_context(fold(*cluster()), "g1", None)
    assert [(g["label"], g["used_label"]) for g in ctx["gpus"]] == [
        ("GPU 0 · 1 GPU free", "0 GPU used"),
        ("GPU 1 · 0.5 GPU free", "0.5 GPU used"),
        ("GPU 2 · 0 GPU free", "1 GPU used"),
        ("GPU 3 · 0 GPU free", "1 GPU used"),
    ]
    html = render_to_string("web/runs/partials/node_card.html", {"node": ctx})
    assert 'title="GPU 1 · 0.5 GPU free · 0.5 GPU used"' in html
    assert ">GPU 0 · 1 GPU free<" in html
    assert not re.search(r"\d+m (free|used)", html), "no milli-units on a learner's card"
