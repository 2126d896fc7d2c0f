"""docs/api.md's examples run against a live server, so the doc cannot drift from the API.

Every ```sh block of the doc is one curl command, followed by a ```json block whose info string
names the status (```json 201) and whose body is the example response. Each command runs in bash
against pytest-django's live_server with the doc's variables set ($KUBEVIZ, $TOKEN, $RUN,
$COMPARISON); the status must be the one named, and the response must have every key of the
example (in nested objects too, and in the first item of lists that both have).
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rest_framework.authtoken.models import Token

from kubeviz.web.models import Policy, Run, Scenario
from kubeviz.web.services import comparisons, dispatch
from kubeviz.web.services.runner import step_loop

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
FENCE = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)
# Quiet curl that prints the status on a line of its own after the body.
CURL = 'curl() { command curl --silent --show-error --max-time 60 --write-out "\\n%{http_code}" "$@"; }\n'


@dataclass
class Example:
    command: str
    status: int
    response: Any

    @property
    def name(self) -> str:
        return " ".join(self.command.split())[:90]


def examples(text: str) -> list[Example]:
    """The doc's (curl command, status, example response) triples; a ```sh block must be followed
    by a ```json <status> block."""
    fences = [(m["info"].strip(), m["body"]) for m in FENCE.finditer(text)]
    found = []
    for index, (info, body) in enumerate(fences):
        if info != "sh":
            continue
        assert "curl " in body, f"a ```sh block of docs/api.md is not a curl example: {body[:80]!r}"
        answer_info, answer = fences[index + 1] if index + 1 < len(fences) else ("", "")
        match = re.fullmatch(r"json (\d{3})", answer_info)
        assert match, f"the curl example {body[:60]!r} is not followed by a ```json <status> block"
        found.append(Example(body.strip(), int(match[1]), json.loads(answer)))
    return found


def missing_keys(example: Any, actual: Any, path: str = "") -> list[str]:
    """Paths of the example's keys that the actual response lacks."""
    if isinstance(example, dict):
        if not isinstance(actual, dict):
            return [path or "(top)"]
        return [
            missing
            for key, value in example.items()
            for missing in (
                [f"{path}.{key}"] if key not in actual else missing_keys(value, actual[key], f"{path}.{key}")
            )
        ]
    if isinstance(example, list) and example and isinstance(actual, list) and actual:
        return missing_keys(example[0], actual[0], f"{path}[0]")
    return []


DOC_EXAMPLES = examples(DOC.read_text(encoding="utf-8"))


def test_the_doc_has_an_example_for_every_endpoint() -> None:
    """One curl example at least per URL of kubeviz/api/urls.py."""
    from kubeviz.api.urls import urlpatterns

    shown = " ".join(example.command for example in DOC_EXAMPLES)
    for pattern in urlpatterns:
        route = re.sub(r"<[^>]+>", "[^/ ]+", str(pattern.pattern))
        assert re.search(rf"/api/{route}(\?|\"|'|\s|$)", shown), f"no curl example for /api/{pattern.pattern}"


@pytest.fixture
def doc_world(settings: Any, finished_run: Run, user: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """What the doc's variables name: a token of ada's, a finished run and a finished comparison.

    Runs the examples start are queued and left there (start_run recorded, not executed): the
    examples are about the answers, tests/web/test_api.py runs a run to its end.
    """
    settings.KUBEVIZ_RUN_MODE = "thread"
    settings.KUBEVIZ_REAPER_SECONDS = 0  # no background thread in the test process
    monkeypatch.setattr(dispatch, "start_run", lambda run: None)
    scenario = Scenario.objects.get(slug="preemption-basics")
    policies = [Policy.objects.get(slug=slug) for slug in ("default", "spread")]
    comparison = comparisons.create_comparison(scenario, policies, [3], user)
    for entry in comparison.entries.all():
        step_loop(entry.run_id, lambda group, message: None)
    return {
        "TOKEN": Token.objects.create(user=user).key,
        "RUN": str(finished_run.id),
        "COMPARISON": str(comparison.id),
    }


@pytest.mark.django_db(transaction=True)
def test_every_curl_example_answers_as_the_doc_says(live_server: Any, doc_world: dict[str, str]) -> None:
    assert len(DOC_EXAMPLES) >= 12
    env = {"PATH": "/usr/bin:/bin", "KUBEVIZ": live_server.url, **doc_world}
    for example in DOC_EXAMPLES:
        done = subprocess.run(
            ["bash", "-c", CURL + example.command], env=env, capture_output=True, text=True, timeout=90, check=False
        )
        assert done.returncode == 0, f"{example.name}: {done.stderr}"
        body, _, status = done.stdout.rpartition("\n")
        assert int(status) == example.status, f"{example.name}: {status} {body[:500]}"
        missing = missing_keys(example.response, json.loads(body))
        assert not missing, f"{example.name}: the answer has no {missing}: {body[:500]}"
