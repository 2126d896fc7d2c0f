"""No page shows a template comment: Django's {# … #} is one line only, so a comment spread over
several lines is printed as text (the policy editor once showed "{# Typing posts the document …")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from kubeviz.web.models import Policy, Run, Scenario

from .test_forks import record

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).parents[2] / "templates"


def _clean(body: str) -> None:
    for mark in ("{#", "#}"):
        at = body.find(mark)
        assert at < 0, f"{mark!r} shown in the page: …{body[max(0, at - 80) : at + 80]}…"


def test_no_template_has_a_comment_over_several_lines() -> None:
    """The source check: every {# closes on its own line (use {% comment %} for more)."""
    for path in TEMPLATES.rglob("*.html"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            opened = [m.start() for m in re.finditer(r"\{#", line)]
            closed = [m.start() for m in re.finditer(r"#\}", line)]
            assert len(opened) == len(closed), (
                f"{path.relative_to(TEMPLATES)}:{number}: a {{# comment must close on its line"
            )


def test_the_pages_people_open_show_no_template_comment(logged_in_client: Client, builtins: None) -> None:
    run = record(
        Run.objects.create(
            scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug="default"), seed=1
        )
    )
    urls = [
        reverse("home"),
        reverse("lesson-list"),
        reverse("scenario-new"),
        reverse("scenario-detail", args=["mixed-small"]),
        reverse("cluster-list"),
        reverse("cluster-new"),
        reverse("policy-list"),
        reverse("policy-new"),
        reverse("policy-detail", args=["default"]),
        reverse("run-list"),
        run.get_absolute_url(),
        reverse("compare-list"),
        reverse("compare-new"),
        reverse("glossary"),
    ]
    for url in urls:
        response = logged_in_client.get(url)
        assert response.status_code == 200, url
        _clean(response.content.decode())


# -- the other copy slips -----------------------------------------------------------------------


def test_a_saved_policy_carries_its_own_name_in_its_document(user) -> None:
    """Saved as "my pack" from the default preset, the document no longer says name: default."""
    from kubeviz.web.services.policy_editor import save_policy
    from scheduler_core.scheduler.policy import load_policy

    document = "apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata:\n  name: default  # the preset\nspec: {}\n"
    saved = save_policy(
        policy=None, name="my pack", description="", visibility="private", document=document, owner=user
    )
    assert (
        saved.document
        == 'apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata:\n  name: "my pack"  # the preset\nspec: {}\n'
    )
    assert load_policy(saved.document, "p").name == "my pack"


def test_the_home_card_counts_a_gpu_traces_pods(builtins: None) -> None:
    """gpu-sharing-small has no pods at t=0 but 300 from its GPU trace."""
    assert Scenario.objects.get(slug="gpu-sharing-small").preview["pods"] == 300


def test_the_try_on_line_does_not_say_any_scenario_twice(client: Client, builtins: None, user) -> None:
    from kubeviz.web.services.policy_editor import save_policy

    save_policy(
        policy=None,
        name="mine",
        description="",
        visibility="public",
        document="apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata:\n  name: mine\nspec: {}\n",
        owner=user,
    )
    body = client.get(reverse("policy-list")).content.decode()
    assert body.count("any scenario") == body.count('">any scenario</a>')
