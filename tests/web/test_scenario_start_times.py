"""The scenario page shows when each pod the document gives as running started (status.startTime)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from kubeviz.web.models import Scenario

pytestmark = pytest.mark.django_db

DOCUMENT = """apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: Node, metadata: {name: a}, status: {allocatable: {cpu: "2", memory: 4Gi}}}
  - apiVersion: v1
    kind: Pod
    metadata: {name: old}
    spec: {nodeName: a, containers: [{name: c, image: app}]}
    status: {startTime: "2024-05-01T09:55:00Z"}
  - apiVersion: v1
    kind: Pod
    metadata: {name: new}
    spec: {nodeName: a, containers: [{name: c, image: app}]}
    status: {startTime: "2024-05-01T10:00:00Z"}
  - apiVersion: v1
    kind: Pod
    metadata: {name: pending}
    spec: {containers: [{name: c, image: app}]}
"""


@pytest.fixture(autouse=True)
def empty_cache(settings: Any) -> None:
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "test-start-times"}
    }
    cache.clear()


def test_bound_pods_show_their_start_relative_to_t0(client: Client) -> None:
    scenario = Scenario.objects.create(slug="snap", name="snap", document=DOCUMENT, source_name="snap.yaml")
    html = client.get(scenario.get_absolute_url()).content.decode()
    rows = {
        name: re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row)).strip()
        for name, row in re.findall(r"<tr>\s*<td><code>([a-z]+)</code></td>(.*?)</tr>", html, re.S)
    }
    assert "a started 5m before t=0" in rows["old"]
    assert "a started at t=0" in rows["new"]
    assert "started" not in rows["pending"]
