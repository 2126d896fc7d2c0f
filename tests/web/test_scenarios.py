"""The scenario library, scenario pages, uploads, downloads and the policy pages."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from kubeviz.web.models import Cluster, Policy, Run, RunStatus, Scenario, Visibility
from kubeviz.web.services.scenarios import first_sentence, format_ms, numbered_lines, unique_slug
from scheduler_core.documents.errors import Problem

pytestmark = pytest.mark.django_db


SMALL = """\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata:
  name: two-nodes
spec:
  seed: 4
  description: Two nodes and a pod. The second sentence is not on the card.
  watchFor:
    - "the pod lands on the emptier node"
  nodes:
    - {name: node-a, allocatable: {cpu: "4", memory: 8Gi}}
    - {name: node-b, allocatable: {cpu: "2", memory: 4Gi}, taints: [{key: gpu, effect: NoSchedule}]}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web}
      spec:
        containers: [{name: c, image: "web:1", resources: {requests: {cpu: 500m}}}]
  timeline:
    - {at: 30s, action: cordon, target: node/node-a}
"""

# Line 8 has a bad quantity and line 11 an unknown field.
INVALID = """\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata:
  name: broken
spec:
  nodes:
    - name: node-a
      allocatable: {cpu: "4x"}
  objects: []
  timeline: []
  bogus: 1
"""

MANIFESTS = """\
apiVersion: v1
kind: Node
metadata:
  name: worker-1
status:
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata:
  name: hello
spec:
  containers:
    - name: hello
      image: nginx
      resources: {requests: {cpu: 250m, memory: 64Mi}}
"""


def private_scenario(owner: Any, slug: str = "secret-plan") -> Scenario:
    return Scenario.objects.create(
        slug=slug,
        name=slug,
        document=SMALL,
        owner=owner,
        visibility=Visibility.PRIVATE,
        preview={"nodes": 2, "pods": 1, "workloads": 0, "workload_kinds": {}, "timeline": 1, "pdbs": 0},
    )


def post_upload(client: Client, **data: Any) -> Any:
    payload = {"name": "", "visibility": "public", "cluster": "", "text": "", **data}
    return client.post(reverse("scenario-new"), payload)


# Library


def test_library_lists_builtins_with_previews(client: Client, builtins: None) -> None:
    """Every built-in has a card with its counts; the flagship is linked at the top."""
    response = client.get(reverse("home"))
    assert response.status_code == 200
    html = response.content.decode()
    for slug in Scenario.objects.filter(builtin=True).values_list("slug", flat=True):
        assert reverse("scenario-detail", args=[slug]) in html
    assert "Pick a scenario, pick a policy, press play" in html
    assert 'class="flagship-link" href="/scenarios/sts-upgrade-under-pressure/"' in html
    assert "StatefulSet" in html  # workloads by kind
    assert "timeline action" in html
    assert 'hx-trigger="keyup changed delay:300ms' in html


def test_library_search_via_htmx_returns_only_the_filtered_cards(client: Client, builtins: None) -> None:
    """An htmx request gets the #cards partial alone, filtered by name."""
    response = client.get(reverse("home"), {"q": "preempt"}, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="cards"')
    assert "<html" not in html
    assert "/scenarios/preemption-basics/" in html
    assert "/scenarios/preemption-cascade/" in html
    assert "/scenarios/mixed-small/" not in html


def test_library_search_without_htmx_renders_the_whole_page(client: Client, builtins: None) -> None:
    """The same search works as a plain GET (no JavaScript)."""
    html = client.get(reverse("home"), {"q": "no-such-scenario"}).content.decode()
    assert "<html" in html
    assert "No scenario has “no-such-scenario” in its name." in html


def test_library_shows_private_scenarios_only_to_their_owner(
    client: Client, builtins: None, user: Any, other_user: Any
) -> None:
    """A private scenario is a card (tagged private) for its owner and absent for everyone else."""
    private_scenario(user)
    assert "/scenarios/secret-plan/" not in client.get(reverse("home")).content.decode()
    client.force_login(other_user)
    assert "/scenarios/secret-plan/" not in client.get(reverse("home")).content.decode()
    client.force_login(user)
    html = client.get(reverse("home")).content.decode()
    assert "/scenarios/secret-plan/" in html
    assert "tag-private" in html


def test_first_sentence_stops_at_the_first_full_stop() -> None:
    """Cards show one sentence of the description."""
    assert first_sentence("Two nodes (4 CPU, 8Gi). Then more.") == "Two nodes (4 CPU, 8Gi)."
    assert first_sentence("") == ""


# Detail


def test_detail_shows_watch_for_tables_and_the_run_form(client: Client, builtins: None) -> None:
    """The flagship's page lists what to watch for, its nodes and timeline, and a run form."""
    response = client.get(reverse("scenario-detail", args=["sts-upgrade-under-pressure"]))
    assert response.status_code == 200
    html = response.content.decode()
    scenario = Scenario.objects.get(slug="sts-upgrade-under-pressure")
    assert "What to watch for" in html
    for item in scenario.watch_for:
        assert item.replace("'", "&#x27;") in html
    assert "<code>node-1</code>" in html
    assert "StatefulSet" in html
    assert "setImage" in html
    assert "statefulset/default/web" in html
    assert f'action="{reverse("run-create")}"' in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert '<input type="hidden" name="scenario" value="sts-upgrade-under-pressure">' in html
    assert 'name="seed" value="7"' in html
    for policy in Policy.objects.filter(builtin=True):
        assert f'<option value="{policy.slug}"' in html
    assert re.search(r'<option value="default" title="[^"]*" selected>', html)
    assert reverse("scenario-download", args=["sts-upgrade-under-pressure"]) in html


def test_detail_lists_recent_runs(client: Client, builtins: None, user: Any) -> None:
    """The last five listed runs of the scenario (here a signed-in user's) link to their pages, newest first."""
    scenario = Scenario.objects.get(slug="mixed-small")
    policy = Policy.objects.get(slug="default")
    runs = [
        Run.objects.create(scenario=scenario, policy=policy, seed=i, status=RunStatus.FINISHED, owner=user)
        for i in range(7)
    ]
    html = client.get(scenario.get_absolute_url()).content.decode()
    shown = [run for run in runs if run.get_absolute_url() in html]
    assert len(shown) == 5
    assert "Finished" in html


def test_private_scenario_is_404_for_others_and_visible_to_its_owner(
    client: Client, user: Any, other_user: Any
) -> None:
    """Detail and download of someone else's private scenario do not exist."""
    scenario = private_scenario(user)
    urls = [scenario.get_absolute_url(), reverse("scenario-download", args=[scenario.slug])]
    for url in urls:
        assert client.get(url).status_code == 404
    client.force_login(other_user)
    for url in urls:
        assert client.get(url).status_code == 404
    client.force_login(user)
    for url in urls:
        assert client.get(url).status_code == 200


def test_unknown_scenario_is_404(client: Client) -> None:
    assert client.get(reverse("scenario-detail", args=["nope"])).status_code == 404


# Download


def test_download_returns_the_document_as_an_attachment(client: Client, builtins: None) -> None:
    """The stored text, unchanged, named after the slug."""
    scenario = Scenario.objects.get(slug="job-burst")
    response = client.get(reverse("scenario-download", args=["job-burst"]))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/yaml")
    assert response["Content-Disposition"] == 'attachment; filename="job-burst.yaml"'
    assert response.content.decode() == scenario.document


# Upload


def test_upload_requires_login(client: Client) -> None:
    """Anonymous visitors are sent to the login page and back."""
    url = reverse("scenario-new")
    for response in (client.get(url), client.post(url, {"text": SMALL})):
        assert response.status_code == 302
        assert response["Location"] == f"{reverse('login')}?next={url}"
    assert Scenario.objects.count() == 0


def test_upload_form_renders(logged_in_client: Client) -> None:
    html = logged_in_client.get(reverse("scenario-new")).content.decode()
    assert 'enctype="multipart/form-data"' in html
    assert 'name="text"' in html
    assert 'name="file"' in html
    assert 'name="visibility"' in html


def test_valid_pasted_upload_creates_a_scenario_and_redirects(logged_in_client: Client, user: Any) -> None:
    """Name defaults to metadata.name; preview, owner and visibility are stored."""
    response = post_upload(logged_in_client, text=SMALL, visibility="private")
    scenario = Scenario.objects.get()
    assert re.fullmatch(r"two-nodes-[a-z0-9]{6}", scenario.slug)
    assert response.status_code == 302
    assert response["Location"] == scenario.get_absolute_url()
    assert scenario.name == "two-nodes"
    assert scenario.owner == user
    assert scenario.visibility == Visibility.PRIVATE
    assert not scenario.builtin
    assert scenario.watch_for == ["the pod lands on the emptier node"]
    assert scenario.preview["nodes"] == 2
    assert scenario.preview["pods"] == 1
    assert scenario.preview["timeline"] == 1
    page = logged_in_client.get(response["Location"])
    assert "saved" in page.content.decode()


def test_an_upload_with_the_change_actions_is_accepted(logged_in_client: Client) -> None:
    """label / unlabel / taint / untaint / setAllocatable are timeline actions like the others."""
    text = SMALL + (
        "    - {at: 40s, action: label, target: node/node-b, labels: {disk: ssd}}\n"
        "    - {at: 41s, action: unlabel, target: pod/web, keys: [tier]}\n"
        "    - {at: 42s, action: taint, target: node/node-a, taint: {key: k, effect: NoSchedule}}\n"
        "    - {at: 43s, action: untaint, target: node/node-b, key: gpu}\n"
        "    - {at: 44s, action: setAllocatable, target: node/node-b, allocatable: {cpu: '8'}}\n"
    )
    response = post_upload(logged_in_client, text=text)
    assert response.status_code == 302
    assert Scenario.objects.get().preview["timeline"] == 6


def test_a_change_action_with_a_bad_field_is_refused_at_its_line(logged_in_client: Client) -> None:
    text = SMALL + "    - {at: 40s, action: taint, target: node/node-b, taint: {key: k}}\n"
    html = post_upload(logged_in_client, text=text).content.decode()
    assert Scenario.objects.count() == 0
    assert "scenario.yaml:21 spec.timeline[1].taint.effect: is required" in html


def test_upload_slugs_are_unique(logged_in_client: Client) -> None:
    """The same name three times gives three slugs: the name and a random token each."""
    for _ in range(3):
        post_upload(logged_in_client, text=SMALL, name="My Cluster!")
    slugs = set(Scenario.objects.values_list("slug", flat=True))
    assert len(slugs) == 3
    assert all(re.fullmatch(r"my-cluster-[a-z0-9]{6}", slug) for slug in slugs)
    assert set(Scenario.objects.values_list("name", flat=True)) == {"My Cluster!"}


def test_unique_slug_never_takes_a_url_of_its_own() -> None:
    """/scenarios/new/ is the upload page, so a scenario called "new" gets another slug."""
    assert re.fullmatch(r"new-[a-z0-9]{6}", unique_slug("New"))
    assert re.fullmatch(r"scenario-[a-z0-9]{6}", unique_slug("日本"))


def test_a_slug_does_not_reveal_someone_elses_private_scenario(
    logged_in_client: Client, user: Any, other_user: Any
) -> None:
    """bob's slug for "secret" looks the same whether or not alice has a private "secret" (no -2)."""
    private_scenario(other_user, slug="secret")
    post_upload(logged_in_client, text=SMALL, name="secret")
    taken = Scenario.objects.get(owner=user).slug
    Scenario.objects.filter(owner=other_user).delete()
    post_upload(logged_in_client, text=SMALL, name="secret")
    free = Scenario.objects.filter(owner=user).exclude(slug=taken).get().slug
    for slug in (taken, free):
        assert re.fullmatch(r"secret-[a-z0-9]{6}", slug), slug
    assert taken != "secret-2"


def test_existing_slugs_keep_their_urls(logged_in_client: Client, user: Any) -> None:
    """A scenario stored before tokens keeps its plain slug and its page."""
    private_scenario(user, slug="old-plain-slug")
    assert logged_in_client.get(reverse("scenario-detail", args=["old-plain-slug"])).status_code == 200


def test_valid_file_upload_creates_a_scenario(logged_in_client: Client) -> None:
    """A .yaml file works like pasted text and keeps its file name."""
    upload = SimpleUploadedFile("two.yaml", SMALL.encode(), content_type="application/yaml")
    response = post_upload(logged_in_client, file=upload, name="From a file")
    scenario = Scenario.objects.get(slug__startswith="from-a-file-")
    assert response.status_code == 302
    assert scenario.source_name == "two.yaml"
    assert scenario.document == SMALL


def test_plain_kubernetes_manifests_are_accepted(logged_in_client: Client) -> None:
    """A Node and a Pod as kubectl prints them: named after the file."""
    upload = SimpleUploadedFile("cluster.yaml", MANIFESTS.encode())
    response = post_upload(logged_in_client, file=upload)
    scenario = Scenario.objects.get()
    assert response.status_code == 302
    assert scenario.name == "cluster"
    assert scenario.preview["nodes"] == 1
    assert scenario.preview["pods"] == 1


def test_manifests_without_nodes_take_a_clusters_nodes(logged_in_client: Client, user: Any) -> None:
    """A chosen cluster supplies the nodes when the document has none."""
    cluster = Cluster.objects.create(
        name="three",
        document="apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {name: three}\nspec:\n"
        "  nodeGroups: [{count: 3, namePrefix: n-, template: {allocatable: {cpu: '4', memory: 8Gi}}}]\n",
    )
    pod_only = MANIFESTS.split("---\n", 1)[1]
    response = post_upload(logged_in_client, text=pod_only, name="pod on three", cluster=str(cluster.pk))
    scenario = Scenario.objects.get()
    assert response.status_code == 302
    assert scenario.cluster == cluster
    assert scenario.preview["nodes"] == 3
    assert "<code>n-2</code>" in logged_in_client.get(scenario.get_absolute_url()).content.decode()


def test_invalid_upload_shows_problems_at_their_lines_and_saves_nothing(logged_in_client: Client) -> None:
    """Each problem reads file:line path: message, and its line is marked in the numbered document."""
    before = Scenario.objects.count()
    response = post_upload(logged_in_client, text=INVALID)
    html = response.content.decode()
    assert response.status_code == 400
    assert Scenario.objects.count() == before
    assert "nothing was saved" in html
    assert "scenario.yaml:8 spec.nodes[0].allocatable.cpu: &quot;4x&quot; is not a quantity" in html
    assert "scenario.yaml:11 spec.bogus: unknown field" in html
    assert re.search(
        r'<li id="line-8" value="8" class="bad">\s*<code>      allocatable: \{cpu: &quot;4x&quot;\}</code>', html
    )
    assert re.search(r'<li id="line-11" value="11" class="bad">', html)
    assert re.search(r'<li id="line-7" value="7">', html)  # a good line is not marked
    # The text comes back in the textarea to be fixed.
    assert "  bogus: 1" in html
    assert "<textarea" in html


def test_invalid_file_upload_names_the_file_in_its_problems(logged_in_client: Client) -> None:
    upload = SimpleUploadedFile("mine.yml", INVALID.encode())
    html = post_upload(logged_in_client, file=upload).content.decode()
    assert "mine.yml:8 spec.nodes[0].allocatable.cpu" in html
    assert 'name="source_name" value="mine.yml"' in html
    assert Scenario.objects.count() == 0


def test_user_text_is_escaped_in_problems(logged_in_client: Client) -> None:
    """A document cannot inject markup into the error page."""
    html = post_upload(logged_in_client, text="<script>alert(1)</script>: [").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_oversize_file_is_rejected_before_parsing(logged_in_client: Client, settings: Any) -> None:
    """A file over KUBEVIZ_MAX_UPLOAD_BYTES is a field error naming the limit."""
    settings.KUBEVIZ_MAX_UPLOAD_BYTES = 100
    upload = SimpleUploadedFile("big.yaml", SMALL.encode())
    response = post_upload(logged_in_client, file=upload)
    html = response.content.decode()
    assert response.status_code == 400
    assert "File: The file is" in html
    assert "the limit is 100" in html
    assert "nothing was saved" not in html  # never reached the loader
    assert Scenario.objects.count() == 0


def test_oversize_pasted_text_is_rejected(logged_in_client: Client, settings: Any) -> None:
    settings.KUBEVIZ_MAX_UPLOAD_BYTES = 100
    html = post_upload(logged_in_client, text=SMALL).content.decode()
    assert "Pasted text: The pasted text is" in html
    assert Scenario.objects.count() == 0


def test_non_utf8_file_is_rejected(logged_in_client: Client) -> None:
    """Latin-1 bytes are a clear error on the file field."""
    upload = SimpleUploadedFile("latin.yaml", "metadata: {name: café}\n".encode("latin-1"))
    html = post_upload(logged_in_client, file=upload).content.decode()
    assert "File: The file is not UTF-8: line 1: byte 0xe9 at column 21 is not UTF-8 text" in html
    assert Scenario.objects.count() == 0


def test_wrong_extension_and_empty_submissions_are_rejected(logged_in_client: Client) -> None:
    upload = SimpleUploadedFile("notes.txt", SMALL.encode())
    assert "is not a .yaml, .yml or .json file" in post_upload(logged_in_client, file=upload).content.decode()
    assert "Choose a file or paste a document." in post_upload(logged_in_client).content.decode()
    assert Scenario.objects.count() == 0


def test_numbered_lines_show_only_context_in_long_documents() -> None:
    """A 1,000-line document shows the lines around its problem, with a gap marker."""
    text = "\n".join(f"line {i}" for i in range(1, 1001))
    lines = numbered_lines(text, [Problem("s.yaml", 500, "x", "bad")], "s.yaml", context=2)
    assert [line.number for line in lines] == [498, 499, 500, 501, 502]
    assert lines[0].gap_before
    assert lines[2].problems[0].message == "bad"


def test_format_ms_writes_durations_like_the_documents() -> None:
    assert [format_ms(v) for v in (0, 250, 40_000, 90_000, 1_500, 3_600_000)] == [
        "0s",
        "250ms",
        "40s",
        "1m30s",
        "1.5s",
        "1h",
    ]


def test_real_kubernetes_examples_upload_or_explain_why_not(
    logged_in_client: Client, public_data: Callable[[str], Path]
) -> None:
    """Every kubernetes/website example either becomes a scenario or shows located problems."""
    for path in sorted(public_data("k8s-examples").glob("*.yaml")):
        before = Scenario.objects.count()
        upload = SimpleUploadedFile(path.name, path.read_bytes())
        response = post_upload(logged_in_client, file=upload)
        if response.status_code == 302:
            assert Scenario.objects.count() == before + 1, path.name
        else:
            html = response.content.decode()
            assert response.status_code == 400, path.name
            assert "nothing was saved" in html, path.name
            assert f"{path.name}:" in html, path.name
            assert Scenario.objects.count() == before, path.name
    stored = {s.source_name: s for s in Scenario.objects.all()}
    assert stored["zookeeper.yaml"].preview["workload_kinds"] == {"StatefulSet": 1}
    assert stored["node-with-taint.yaml"].preview["nodes"] == 1
    assert "high-priority-pod.yaml" not in stored  # PriorityClass "high" is defined nowhere


# Hostile uploads: refused with field path and line, nothing saved; or saved with warnings

NODE_LINE = '    - {name: n%04d, allocatable: {cpu: "4", memory: 8Gi}}\n'
SCENARIO_HEAD = "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata:\n  name: hostile\nspec:\n"


def test_a_paste_over_the_limit_is_a_form_error_without_the_text(logged_in_client: Client) -> None:
    """2.3 MiB pasted: the form says so in figures that differ, and does not send the megabytes back."""
    text = "# " + "x" * (int(2.3 * 1024 * 1024) - 3) + "\n"
    response = post_upload(logged_in_client, text=text)
    html = response.content.decode()
    assert response.status_code == 400
    assert "Pasted text: The pasted text is 2.3 MiB; the limit is 2.0 MiB." in html
    assert "x" * 1000 not in html
    assert len(response.content) < 100_000
    assert Scenario.objects.count() == 0


def test_a_paste_one_byte_over_the_limit_reads_in_bytes(logged_in_client: Client) -> None:
    html = post_upload(logged_in_client, text="#" * 2 * 1024 * 1024 + "\n").content.decode()
    assert "The pasted text is 2,097,153 bytes; the limit is 2,097,152 bytes." in html


def test_a_body_too_big_to_read_gets_the_form_with_the_size(logged_in_client: Client, settings: Any) -> None:
    """Over DATA_UPLOAD_MAX_MEMORY_SIZE Django cannot read the body: the page says what was sent, not a bare 400."""
    settings.KUBEVIZ_MAX_UPLOAD_BYTES = 5000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    response = post_upload(logged_in_client, text="#" * 20_000)
    html = response.content.decode()
    assert response.status_code == 413
    assert re.search(
        r"The form sent 19\.\d KiB; the limit is 4\.9 KiB\. Upload a smaller document; nothing was saved\.", html
    )
    assert 'name="text"' in html
    assert "#" * 100 not in html
    assert Scenario.objects.count() == 0


def test_the_upload_still_checks_csrf_when_the_body_can_be_read(user: Any) -> None:
    """The size check runs before Django's CSRF check; an ordinary post must still carry the token."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert post_upload(client, text=SMALL).status_code == 403
    client.get(reverse("scenario-new"))
    assert post_upload(client, text=SMALL, csrfmiddlewaretoken=client.cookies["csrftoken"].value).status_code == 302
    assert Scenario.objects.count() == 1


def fan_out() -> str:
    """Five levels of ten aliases (111,111 values at *e) and a list of two *e."""
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for name, prev in zip("bcde", "abcd", strict=True):
        text += f"{name}: &{name} [{', '.join(['*' + prev] * 10)}]\n"
    return text + "f: [*e, *e]\n"


HOSTILE = [
    (
        fan_out(),
        "scenario.yaml:6 f[0]: alias *e expands to 111,111 values, which takes the document past 200,000",
    ),
    (
        "a: " + "[" * 70 + "]" * 70 + "\n",
        "scenario.yaml:1 a" + "[0]" * 64 + ": nested more than 64 levels deep",
    ),
    (
        SCENARIO_HEAD + "  nodes:\n" + "".join(NODE_LINE % i for i in range(5)),
        "scenario.yaml:10 spec.nodes[3]: too many nodes: this is node 4; a scenario holds at most 3",
    ),
    (
        SCENARIO_HEAD + "  nodes: []\n  bogus: 1\n",
        "scenario.yaml:7 spec.bogus: unknown field",
    ),
    (
        SCENARIO_HEAD + "  nodes:\n    - name: n\n      labels: {bad key!: x}\n",
        'scenario.yaml:8 spec.nodes[0].labels: "bad key!" is not a valid label key',
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    HOSTILE,
    ids=[
        "an alias fan-out is refused at the alias",
        "deep nesting is refused",
        "too many nodes are refused at the first one past the cap",
        "an unknown field is refused",
        "a bad label key is refused",
    ],
)
def test_hostile_uploads_are_refused_with_path_and_line_and_nothing_saved(
    logged_in_client: Client, monkeypatch: pytest.MonkeyPatch, text: str, expected: str
) -> None:
    monkeypatch.setattr("scheduler_core.documents.scenario.MAX_NODES", 3)
    response = post_upload(logged_in_client, text=text)
    html = response.content.decode()
    assert response.status_code == 400
    assert "nothing was saved" in html
    assert escape(expected) in html
    assert Scenario.objects.count() == 0


def test_an_upload_past_the_cpu_budget_is_refused_and_nothing_saved(logged_in_client: Client, settings: Any) -> None:
    settings.KUBEVIZ_READ_CPU_SECONDS = 1e-9
    text = SCENARIO_HEAD + "  nodes:\n" + "".join(NODE_LINE % i for i in range(500))
    html = post_upload(logged_in_client, text=text).content.decode()
    assert "gave up after 1e-09 s of CPU time" in html
    assert Scenario.objects.count() == 0


def test_a_cluster_that_no_longer_loads_saves_nothing(logged_in_client: Client) -> None:
    cluster = Cluster.objects.create(name="broken", document="kind: Node\nmetadata: {name: Bad_Name}\n")
    pod_only = MANIFESTS.split("---\n", 1)[1]
    html = post_upload(logged_in_client, text=pod_only, cluster=str(cluster.pk)).content.decode()
    assert "cluster.yaml:2 metadata.name: &quot;Bad_Name&quot; is not a valid name" in html
    assert Scenario.objects.count() == 0


def test_a_long_document_with_problems_is_not_sent_back(logged_in_client: Client, settings: Any) -> None:
    settings.KUBEVIZ_UPLOAD_ECHO_BYTES = 100
    html = post_upload(logged_in_client, text=INVALID).content.decode()
    assert "too long to send back here" in html
    assert re.search(r'<textarea name="text"[^>]*>\s*</textarea>', html)
    assert "scenario.yaml:8 spec.nodes[0].allocatable.cpu" in html  # the problems and their lines still show


def test_a_pod_on_a_missing_node_is_saved_with_a_warning(logged_in_client: Client) -> None:
    pod_spec = "metadata: {name: web}\n      spec:\n"
    text = SMALL.replace(pod_spec, pod_spec + "        nodeName: x\n")
    response = post_upload(logged_in_client, text=text)
    assert response.status_code == 302
    page = logged_in_client.get(response["Location"]).content.decode()
    warning = escape('scenario.yaml:18 spec.objects[0].spec.nodeName: node "x" is not in the scenario')
    assert page.count(warning) == 2  # once as the upload's message, once on the scenario page
    assert "1 warning" in page


def test_a_scenario_without_nodes_is_saved_with_a_warning(logged_in_client: Client) -> None:
    response = post_upload(logged_in_client, text=MANIFESTS.split("---\n", 1)[1])
    page = logged_in_client.get(response["Location"]).content.decode()
    assert "Warning: scenario.yaml: no nodes: every pod stays pending unless the scenario runs on a cluster" in page


# Policies


def test_policy_list_shows_builtins_with_suggestions(client: Client, builtins: None) -> None:
    html = client.get(reverse("policy-list")).content.decode()
    for policy in Policy.objects.filter(builtin=True):
        assert policy.name in html
    assert "Try it on" in html
    assert reverse("scenario-detail", args=["sts-upgrade-under-pressure"]) in html


def test_policy_detail_shows_the_document(client: Client, builtins: None) -> None:
    policy = Policy.objects.get(slug="upgrade-aware")
    response = client.get(reverse("policy-detail", args=["upgrade-aware"]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "<pre" in html
    assert "upgradeAwareReservation: true" in html
    assert reverse("scenario-detail", args=["sts-upgrade-under-pressure"]) in html
    assert policy.description[:30] in html


def test_private_policy_is_404_for_others(client: Client, user: Any) -> None:
    Policy.objects.create(slug="mine", name="mine", document="x", owner=user, visibility=Visibility.PRIVATE)
    assert client.get(reverse("policy-detail", args=["mine"])).status_code == 404
    client.force_login(user)
    assert client.get(reverse("policy-detail", args=["mine"])).status_code == 200


def test_detail_of_a_document_that_no_longer_loads_shows_its_problems(client: Client) -> None:
    """A stored scenario the engine now refuses still has a page, with the run button disabled."""
    scenario = Scenario.objects.create(slug="old", name="old", document=INVALID)
    html = client.get(scenario.get_absolute_url()).content.decode()
    assert "This scenario no longer loads" in html
    assert "spec.bogus: unknown field" in html
    assert re.search(r'<button type="submit" class="btn run-btn" disabled>', html)


def test_htmx_history_restore_gets_the_whole_page(client: Client, builtins: None) -> None:
    """Going back after a live search restores the full page, not the bare partial."""
    headers = {"HX-Request": "true", "HX-History-Restore-Request": "true"}
    assert "<html" in client.get(reverse("home"), {"q": "pre"}, headers=headers).content.decode()
