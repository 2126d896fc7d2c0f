"""What a lesson's page says of the pods its words are about: a reserved place names the pod it
is held for and what it holds (not "phase gone"), and a snapshot pod's story gives its real
start time (the preemption lesson's criterion 5 compares start times)."""

from __future__ import annotations

import html as html_lib
import re

import pytest
from django.test import Client
from django.urls import reverse

from kubeviz.lessons import lesson
from kubeviz.web.models import Run

from .test_lessons import open_lesson, quiet_start  # noqa: F401 -- the fixture, for every test here

pytestmark = pytest.mark.django_db


def test_a_reserved_place_names_its_pod_and_what_it_holds(client: Client, builtins: None) -> None:
    paired = lesson("statefulset-upgrade")
    assert open_lesson(client, paired.slug).status_code == 200
    index = next(i for i, m in enumerate(paired.moments) if m.id == "reserve")
    page = client.get(reverse("lesson-columns", args=[paired.slug]), {"m": index, "answered": "1"}).content.decode()
    right = page[page.index('id="lesson-col-1"') :]
    held = re.search(r'<div class="held-pods">.*?</div>', right, re.S)
    assert held, "node-3's card shows the place it holds"
    title = html_lib.unescape(re.search(r'title="([^"]*)"', held.group(0)).group(1))  # type: ignore[union-attr]
    assert "phase gone" not in title
    assert "no requests" not in title
    assert title.startswith("default/web-2 · being recreated: its place on node-3 is reserved for it · holds cpu 2")


def test_a_snapshot_pods_story_gives_its_real_start_time(client: Client, builtins: None) -> None:
    assert open_lesson(client, "preemption").status_code == 200
    run = Run.objects.get(policy__slug="default", scenario__name="lesson-adv-preemption-criteria")
    old = client.get(reverse("run-pod", args=[run.id]), {"name": "default/cache-old", "seq": 60}).content.decode()
    new = client.get(reverse("run-pod", args=[run.id]), {"name": "default/cache-new", "seq": 60}).content.decode()
    assert "Running on age-2, started 1h 55m 00s before the run began (status.startTime)" in old
    assert "Running on age-1" in new
    assert "before the run began" not in new
