"""The policy editor: knobs ⇄ YAML, the htmx endpoints, saving and who may edit what."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
import yaml
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

import scheduler_core.scheduler.config
from kubeviz.web.forms_policy import PolicyKnobsForm
from kubeviz.web.models import Policy, Visibility
from kubeviz.web.services import policy_editor as editor
from kubeviz.web.services.read_limits import editor_check_wait
from scheduler_core.scheduler.policy import builtin_policy, builtin_policy_names, load_policy

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def unlimited_checks(settings: Any) -> None:
    """The live checks' rate limit is off unless a test sets it (the tests here check fast)."""
    settings.KUBEVIZ_EDITOR_CHECKS = 0


PRESETS = (
    "default",
    "bin-packing",
    "spread",
    "no-preemption",
    "legacy-v1.5",
    "upgrade-aware",
    "dra-device-preemption",
    "score-all-nodes",
    "rtcr-binpack",
    "gpu-random",
    "gpu-dot-product",
    "gpu-clustering",
    "gpu-packing",
    "gpu-best-fit",
    "gpu-fgd",
    "queueing-hints",
    "kubernetes-v1-31",
    "kubernetes-v1-36",
)

# Line 12 holds a weight of 101.
BAD_WEIGHT = """\
apiVersion: kubeviz.dev/v1
kind: Policy
metadata:
  name: too-heavy
spec:
  configuration:
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    profiles:
      - plugins:
          score:
            enabled: [{name: ImageLocality, weight: 101}]
"""
BAD_WEIGHT_PROBLEM = (
    "policy.yaml:12 spec.configuration.profiles[0].plugins.score.enabled[0].weight: must be between 1 and 100, got 101"
)

# A score-point override: ImageLocality moves to the front of the score plugins.
SCORE_OVERRIDE = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - plugins:
      score:
        enabled: [{name: ImageLocality, weight: 5}]
"""


def _comparable(policy: scheduler_core.scheduler.config.Policy) -> scheduler_core.scheduler.config.Policy:
    return dataclasses.replace(policy, name="", source="")


def _load(text: str) -> scheduler_core.scheduler.config.Policy:
    return load_policy(text, "policy.yaml")


def _knobs(**changes: Any) -> dict[str, Any]:
    knobs = editor.default_knobs()
    knobs.update(changes)
    return knobs


def _v131_knobs(**changes: Any) -> dict[str, Any]:
    """The knobs of v1.31's default configuration (its profile, QueueingHints off), changed."""
    knobs = editor.default_knobs("v1.31")
    assert (knobs["kubernetes_version"], knobs["queueing_hints"]) == ("v1.31", False)
    knobs.update(changes)
    return knobs


def _post_data(knobs: dict[str, Any], **extra: str) -> dict[str, Any]:
    """What the browser posts for these knobs: checkboxes only when on, the shape as rows."""
    data: dict[str, Any] = {}
    for key, value in knobs.items():
        if key == "shape":
            for i, (utilization, score) in enumerate(value):
                data[f"shape_{i}_utilization"] = utilization
                data[f"shape_{i}_score"] = score
        elif value is True:
            data[key] = "on"
        elif value is not False:
            data[key] = value
    data.update(extra)
    return data


# Round trip


def test_every_builtin_preset_is_covered() -> None:
    """The round trip below names every preset scheduler_core ships."""
    assert set(builtin_policy_names()) == set(PRESETS)


@pytest.mark.parametrize("name", PRESETS)
def test_preset_round_trips_through_the_knobs(name: str) -> None:
    """document_from_knobs(knobs_from_document(preset)) loads to the preset's Policy."""
    document = editor.preset_document(name)
    rewritten = editor.document_from_knobs(editor.knobs_from_document(document))
    assert _comparable(_load(rewritten)) == _comparable(builtin_policy(name))
    assert editor.unexpressed(document) == []


@pytest.mark.parametrize("name", PRESETS)
def test_preset_round_trips_through_the_form(name: str) -> None:
    """The knobs survive being shown in the form and posted back."""
    knobs = editor.knobs_from_document(editor.preset_document(name))
    form = PolicyKnobsForm(_post_data(knobs))
    assert form.is_valid(), form.errors
    rewritten = editor.document_from_knobs(form.knobs())
    assert _comparable(_load(rewritten)) == _comparable(builtin_policy(name))


def test_default_knobs_write_a_minimal_document() -> None:
    """Nothing differs from upstream, so nothing but the wrapper is written."""
    document = yaml.safe_load(editor.document_from_knobs(editor.default_knobs()))
    assert document == {"apiVersion": "kubeviz.dev/v1", "kind": "Policy", "metadata": {"name": "my-policy"}, "spec": {}}


def test_the_default_knobs_are_the_engine_policy_defaults() -> None:
    """The editor shows config.Policy's field defaults for the settings the wrapper holds."""
    knobs = editor.default_knobs()
    defaults = {f.name: f.default for f in dataclasses.fields(scheduler_core.scheduler.config.Policy)}
    assert {name: knobs[name] for name in editor._POLICY_SETTINGS} == {
        name: defaults[name] for name in editor._POLICY_SETTINGS
    }


def test_the_editor_spells_no_policy_default_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """With other engine defaults, the knobs start from them and a document of those knobs
    still says nothing: the editor reads every default it leaves out from the engine's Policy."""
    default = editor._DEFAULT_POLICY
    other = dataclasses.replace(
        default,
        profiles=(dataclasses.replace(default.profiles[0], scheduler_name="other-scheduler"),),
        percentage_of_nodes_to_score=50,
        pod_initial_backoff_seconds=3,
        pod_max_backoff_seconds=30,
        queue_mode="fifo",
        scheduler_mode="legacy",
        upgrade_aware_reservation=not default.upgrade_aware_reservation,
        kep5690_dra_preemption=not default.kep5690_dra_preemption,
        queueing_hints=not default.queueing_hints,
        tie_break="shuffled-first-fit",
        bind_latency_ms=250,
        kubernetes_version="v1.36" if default.kubernetes_version == "v1.31" else "v1.31",
    )
    assert [name for name in editor._POLICY_SETTINGS if getattr(other, name) == getattr(default, name)] == []
    monkeypatch.setattr(editor, "_DEFAULT_POLICY", other)
    knobs = editor.default_knobs()
    assert {name: knobs[name] for name in editor._POLICY_SETTINGS} == {
        name: getattr(other, name) for name in editor._POLICY_SETTINGS
    }
    assert yaml.safe_load(editor.document_from_knobs(knobs))["spec"] == {}


# Knob edits


def test_most_allocated_with_cpu_weight_3() -> None:
    """MostAllocated with cpu weight 3 reaches NodeResourcesFit's args."""
    policy = _load(editor.document_from_knobs(_knobs(scoring_strategy="MostAllocated", cpu_weight=3)))
    assert policy.profiles[0].plugin_args["NodeResourcesFit"] == {
        "scoringStrategy": {
            "type": "MostAllocated",
            "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}],
        }
    }


def test_preemption_off_removes_default_preemption_from_post_filter() -> None:
    """Preemption off disables DefaultPreemption at postFilter and nowhere else."""
    policy = _load(editor.document_from_knobs(_knobs(preemption=False)))
    assert "DefaultPreemption" not in policy.profiles[0].plugins["postFilter"]
    assert _comparable(policy) == _comparable(builtin_policy("no-preemption"))


def test_percentage_of_nodes_to_score_100() -> None:
    """percentageOfNodesToScore 100 is the score-all-nodes preset."""
    policy = _load(editor.document_from_knobs(_knobs(percentage_of_nodes_to_score=100)))
    assert policy.percentage_of_nodes_to_score == 100
    assert _comparable(policy) == _comparable(builtin_policy("score-all-nodes"))


def test_tie_break_shuffled_first_fit_is_written_in_the_wrapper_and_random_is_left_out() -> None:
    """tieBreak is a kubeviz extension: the editor writes it only when it is not upstream's rule."""
    text = editor.document_from_knobs(_knobs(tie_break="shuffled-first-fit"))
    assert "tieBreak: shuffled-first-fit" in text
    assert _load(text).tie_break == "shuffled-first-fit"
    assert "tieBreak" not in editor.document_from_knobs(_knobs())
    assert editor.knobs_from_document(editor.preset_document("gpu-fgd"))["tie_break"] == "shuffled-first-fit"


def test_weight_change_keeps_the_upstream_score_order() -> None:
    """A changed weight is written in multiPoint, so the plugin keeps its place."""
    policy = _load(editor.document_from_knobs(_knobs(score_ImageLocality_weight=5)))
    default = builtin_policy("default").profiles[0]
    assert policy.profiles[0].plugins["score"] == default.plugins["score"]
    assert policy.profiles[0].weights["ImageLocality"] == 5


def test_score_and_filter_offs_are_per_point() -> None:
    """Switching TaintToleration's filter off keeps its score, and the other way round."""
    policy = _load(editor.document_from_knobs(_knobs(filter_TaintToleration=False, score_ImageLocality_on=False)))
    plugins = policy.profiles[0].plugins
    assert "TaintToleration" not in plugins["filter"]
    assert "TaintToleration" in plugins["score"]
    assert "ImageLocality" not in plugins["score"]
    assert "ImageLocality" not in policy.profiles[0].weights


def test_rtcr_shape_and_extra_resource() -> None:
    """The shape rows and an extra resource reach RequestedToCapacityRatio's args."""
    knobs = _knobs(
        scoring_strategy="RequestedToCapacityRatio",
        memory_weight=0,
        extra_resource="nvidia.com/gpu",
        extra_weight=4,
        shape=[[0, 10], [100, 0]],
    )
    strategy = _load(editor.document_from_knobs(knobs)).profiles[0].plugin_args["NodeResourcesFit"]["scoringStrategy"]
    assert strategy["resources"] == [{"name": "cpu", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 4}]
    assert strategy["requestedToCapacityRatio"] == {
        "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
    }


def test_wrapper_switches_backoff_and_preemption_args() -> None:
    """Queue, scheduler mode, reservation, bind latency, backoff and preemption args all load.
    Pinned to v1.31: the FIFO queue and the legacy scheduler have no QueueingHints, which v1.36
    locks on (the loader refuses fifo/legacy under v1.36)."""
    knobs = _v131_knobs(
        queue_mode="fifo",
        scheduler_mode="legacy",
        upgrade_aware_reservation=True,
        bind_latency_ms=250,
        pod_initial_backoff_seconds=2,
        pod_max_backoff_seconds=30,
        min_candidate_nodes_percentage=50,
        min_candidate_nodes_absolute=5,
    )
    policy = _load(editor.document_from_knobs(knobs))
    assert (policy.queue_mode, policy.scheduler_mode, policy.upgrade_aware_reservation) == ("fifo", "legacy", True)
    assert (policy.bind_latency_ms, policy.pod_initial_backoff_seconds, policy.pod_max_backoff_seconds) == (250, 2, 30)
    assert policy.profiles[0].plugin_args["DefaultPreemption"] == {
        "minCandidateNodesPercentage": 50,
        "minCandidateNodesAbsolute": 5,
    }
    assert editor.knobs_from_document(editor.document_from_knobs(knobs)) == knobs


def test_base_document_keeps_what_the_form_does_not_show() -> None:
    """metadata, nodeUsageEvery, other plugins' args and extra profiles survive a knob edit."""
    base = """\
apiVersion: kubeviz.dev/v1
kind: Policy
metadata: {name: mine, labels: {team: a}}
spec:
  nodeUsageEvery: 5s
  configuration:
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    parallelism: 4
    profiles:
      - schedulerName: default-scheduler
        pluginConfig:
          - name: NodeAffinity
            args:
              addedAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                  nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]
          - name: NodeResourcesFit
            args: {ignoredResources: [example.com/foo]}
      - schedulerName: packer
"""
    assert editor.unexpressed(base) == []
    rewritten = editor.document_from_knobs(_knobs(scoring_strategy="MostAllocated"), base)
    policy = _load(rewritten)
    assert policy.name == "mine"
    assert policy.node_usage_every_ms == 5000
    assert [p.scheduler_name for p in policy.profiles] == ["default-scheduler", "packer"]
    args = policy.profiles[0].plugin_args
    assert "addedAffinity" in args["NodeAffinity"]
    assert args["NodeResourcesFit"]["ignoredResources"] == ["example.com/foo"]
    assert args["NodeResourcesFit"]["scoringStrategy"]["type"] == "MostAllocated"


def test_unexpressed_names_what_a_rewrite_would_change() -> None:
    """A score override reorders the score plugins; the form cannot, and says so."""
    assert editor.unexpressed(SCORE_OVERRIDE) == ["profiles[0] score order"]


# Validation


def test_invalid_yaml_gives_problems_with_line_and_path() -> None:
    """The loader's problems come back with the line and the field path."""
    problems = editor.validate(BAD_WEIGHT)
    assert [str(p) for p in problems] == [BAD_WEIGHT_PROBLEM]


def test_unparsable_yaml_gives_a_line() -> None:
    """Broken YAML syntax is a problem too, with a line number."""
    problems = editor.validate("apiVersion: kubeviz.dev/v1\nkind: [Policy\n")
    assert problems
    assert problems[0].line is not None


# Pages and saving


@pytest.fixture
def mine(user: Any) -> Policy:
    return Policy.objects.create(
        slug="mine", name="Mine", document=editor.preset_document("bin-packing"), owner=user, visibility="private"
    )


def test_new_page_needs_login(client: Client) -> None:
    """Anonymous visitors are sent to log in."""
    response = client.get(reverse("policy-new"))
    assert response.status_code == 302
    assert reverse("login") in response["Location"]


def test_new_page_starts_from_a_preset(logged_in_client: Client) -> None:
    """?from= loads the preset's document and its knobs."""
    response = logged_in_client.get(reverse("policy-new"), {"from": "bin-packing"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "type: MostAllocated" in html
    assert re.search(r'<option value="MostAllocated" selected>', html)
    assert 'hx-post="/policies/editor/yaml/"' in html
    assert 'hx-trigger="keyup changed delay:500ms, change"' in html
    assert html.count('hx-sync="closest form:replace"') == 2  # the YAML and the settings: the newest wins


def test_new_page_shows_the_tie_break_of_a_gpu_preset(logged_in_client: Client) -> None:
    """The GPU presets break ties by shuffled-first-fit; the settings show it selected."""
    html = logged_in_client.get(reverse("policy-new"), {"from": "gpu-fgd"}).content.decode()
    assert "Tie-break (selectHost)" in html
    assert re.search(r'<option value="shuffled-first-fit" selected>', html)
    assert '<option value="random">random (kube-scheduler)</option>' in html


def test_new_page_unknown_preset_is_404(logged_in_client: Client) -> None:
    assert logged_in_client.get(reverse("policy-new"), {"from": "nope"}).status_code == 404


def test_saving_a_new_policy(logged_in_client: Client, user: Any) -> None:
    """A valid document is saved with a unique slug from the name, and the page redirects to it."""
    Policy.objects.create(slug="my-packing", name="taken", document=editor.preset_document("default"))
    document = editor.document_from_knobs(_knobs(scoring_strategy="MostAllocated"))
    data = _post_data(
        editor.default_knobs(), name="My packing", description="<b>fills</b>", visibility="private", document=document
    )
    response = logged_in_client.post(reverse("policy-new"), data)
    saved = Policy.objects.get(owner=user)
    assert re.fullmatch(r"my-packing-[a-z0-9]{6}", saved.slug)
    assert response.status_code == 302
    assert response["Location"] == reverse("policy-detail", args=[saved.slug])
    assert (saved.name, saved.owner, saved.visibility, saved.builtin) == ("My packing", user, Visibility.PRIVATE, False)
    # The YAML is authoritative, not the (default) knobs; only its metadata.name follows the name given.
    assert saved.document == document.replace("name: my-policy", 'name: "My packing"', 1)
    detail = logged_in_client.get(response["Location"]).content.decode()
    assert "&lt;b&gt;fills&lt;/b&gt;" in detail


def test_saving_without_a_name_uses_metadata_name(logged_in_client: Client) -> None:
    data = _post_data(editor.default_knobs(), name="", visibility="public", document=editor.preset_document("spread"))
    logged_in_client.post(reverse("policy-new"), data)
    assert Policy.objects.filter(slug__regex=r"^spread-[a-z0-9]{6}$", builtin=False).exists()


def test_invalid_document_is_not_saved(logged_in_client: Client) -> None:
    """Problems are shown with line and path next to the YAML; nothing is stored."""
    before = Policy.objects.count()
    data = _post_data(editor.default_knobs(), name="Heavy", visibility="public", document=BAD_WEIGHT)
    response = logged_in_client.post(reverse("policy-new"), data)
    html = response.content.decode()
    assert response.status_code == 400  # as the same document refused by the API
    assert Policy.objects.count() == before
    assert "nothing was saved" in html
    assert BAD_WEIGHT_PROBLEM in html
    assert "name: too-heavy" in html  # the text is shown back to be fixed


def test_apply_without_javascript_rewrites_the_yaml(logged_in_client: Client) -> None:
    """The no-JS "update the YAML" button renders the knobs' YAML and saves nothing."""
    knobs = _knobs(percentage_of_nodes_to_score=100)
    data = _post_data(knobs, name="x", visibility="public", document=editor.preset_document("default"), action="apply")
    response = logged_in_client.post(reverse("policy-new"), data)
    assert "percentageOfNodesToScore: 100" in response.content.decode()
    assert not Policy.objects.filter(name="x").exists()


def test_user_text_is_escaped(logged_in_client: Client) -> None:
    """A document with markup is shown as text in the textarea and the problems."""
    document = (
        "apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata: {name: x}\nspec: {queueMode: '<script>x</script>'}\n"
    )
    data = _post_data(editor.default_knobs(), name="x", visibility="public", document=document)
    html = logged_in_client.post(reverse("policy-new"), data).content.decode()
    assert "<script>x</script>" not in html
    assert "&lt;script&gt;" in html


# htmx endpoints


def test_render_yaml_returns_the_yaml_pane(logged_in_client: Client) -> None:
    """A knob change comes back as the textarea with the rewritten YAML and an OK status."""
    data = _post_data(
        _knobs(scoring_strategy="MostAllocated", cpu_weight=3), document=editor.preset_document("default")
    )
    response = logged_in_client.post(reverse("policy-yaml"), data, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html
    assert '<textarea name="document"' in html
    assert 'id="yaml-problems"' in html
    assert "Loads as a valid policy" in html
    assert "hx-swap-oob" not in html
    document = re.search(r"<textarea[^>]*>\n(.*?)</textarea>", html, re.S)
    assert document is not None
    text = document[1].replace("&#x27;", "'").replace("&quot;", '"')
    fit = _load(text).profiles[0].plugin_args["NodeResourcesFit"]["scoringStrategy"]
    assert fit["type"] == "MostAllocated"
    assert fit["resources"][0] == {"name": "cpu", "weight": 3}
    assert "name: default" in text  # metadata kept from the posted document


def test_render_yaml_with_invalid_knobs_keeps_the_yaml(logged_in_client: Client) -> None:
    """A weight out of range leaves the YAML as posted and sends the knobs back with the error."""
    data = _post_data(_knobs(score_ImageLocality_weight=500), document="kind: whatever\n")
    html = logged_in_client.post(reverse("policy-yaml"), data, HTTP_HX_REQUEST="true").content.decode()
    assert "kind: whatever" in html
    assert 'id="knob-pane" hx-swap-oob="innerHTML"' in html
    assert "Ensure this value is less than or equal to 100" in html


def test_render_yaml_shows_loader_problems_for_bad_knob_combinations(logged_in_client: Client) -> None:
    """Knobs the form accepts but the loader refuses (max backoff below initial) show as problems."""
    data = _post_data(_knobs(pod_initial_backoff_seconds=20, pod_max_backoff_seconds=10), document="")
    html = logged_in_client.post(reverse("policy-yaml"), data, HTTP_HX_REQUEST="true").content.decode()
    assert "podMaxBackoffSeconds: must be at least podInitialBackoffSeconds (20), got 10" in html


def test_validate_ok_swaps_the_knobs(logged_in_client: Client) -> None:
    """YAML that loads comes back as an OK box plus the knobs read from it, out of band."""
    response = logged_in_client.post(
        reverse("policy-validate"), {"document": editor.preset_document("no-preemption")}, HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert "<html" not in html
    assert "Loads as a valid policy" in html
    assert 'id="knob-pane" hx-swap-oob="innerHTML"' in html
    assert 'name="preemption"' in html
    assert not re.search(r'name="preemption"[^>]*checked', html)


def test_validate_error_leaves_the_knobs(logged_in_client: Client) -> None:
    """YAML with problems comes back as the problems only; the knobs are not touched."""
    html = logged_in_client.post(
        reverse("policy-validate"), {"document": BAD_WEIGHT}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert (
        "policy.yaml:12 spec.configuration.profiles[0].plugins.score.enabled[0].weight: must be between 1 and 100"
        in html
    )
    assert "knob-pane" not in html


def test_validate_notes_what_the_form_cannot_show(logged_in_client: Client) -> None:
    """A document the knobs cannot express loads, with a note of what a knob edit would change."""
    html = logged_in_client.post(reverse("policy-validate"), {"document": SCORE_OVERRIDE}).content.decode()
    assert "profiles[0] score order" in html


def test_htmx_endpoints_need_login_and_post(client: Client, logged_in_client: Client) -> None:
    assert logged_in_client.get(reverse("policy-validate")).status_code == 405
    assert logged_in_client.get(reverse("policy-yaml")).status_code == 405
    client.logout()
    assert client.post(reverse("policy-validate"), {"document": ""}).status_code == 302


# Who may edit what


def test_owner_can_edit(logged_in_client: Client, mine: Policy) -> None:
    """The owner sees the editor with the stored document and saves changes under the same slug."""
    page = logged_in_client.get(reverse("policy-edit", args=["mine"]))
    assert page.status_code == 200
    assert "type: MostAllocated" in page.content.decode()
    document = editor.preset_document("spread")
    data = _post_data(editor.default_knobs(), name="Mine, spread", visibility="public", document=document)
    response = logged_in_client.post(reverse("policy-edit", args=["mine"]), data)
    assert response.status_code == 302
    mine.refresh_from_db()
    named = document.replace("name: spread", 'name: "Mine, spread"', 1)  # metadata.name follows the name
    assert (mine.slug, mine.name, mine.visibility, mine.document) == ("mine", "Mine, spread", "public", named)


def test_invalid_edit_changes_nothing(logged_in_client: Client, mine: Policy) -> None:
    before = mine.document
    data = _post_data(editor.default_knobs(), name="Broken", visibility="public", document=BAD_WEIGHT)
    logged_in_client.post(reverse("policy-edit", args=["mine"]), data)
    mine.refresh_from_db()
    assert (mine.name, mine.document) == ("Mine", before)


def test_other_users_cannot_edit(client: Client, other_user: Any, mine: Policy) -> None:
    """Someone else's public policy is 403 with a copy link; their private one is 404."""
    client.force_login(other_user)
    assert client.get(reverse("policy-edit", args=["mine"])).status_code == 404
    mine.visibility = "public"
    mine.save()
    response = client.get(reverse("policy-edit", args=["mine"]))
    assert response.status_code == 403
    assert "?copy=mine" in response.content.decode()
    data = _post_data(
        editor.default_knobs(), name="hijack", visibility="public", document=editor.preset_document("default")
    )
    assert client.post(reverse("policy-edit", args=["mine"]), data).status_code == 403
    mine.refresh_from_db()
    assert mine.name == "Mine"


def test_builtins_are_not_editable(builtins: None, logged_in_client: Client) -> None:
    """A built-in can't be edited, only copied; the copy starts with its document."""
    response = logged_in_client.get(reverse("policy-edit", args=["legacy-v1.5"]))
    assert response.status_code == 403
    assert "Copy as new" in response.content.decode()
    detail = logged_in_client.get(reverse("policy-detail", args=["legacy-v1.5"])).content.decode()
    assert reverse("policy-edit", args=["legacy-v1.5"]) not in detail
    assert "?copy=legacy-v1.5" in detail
    copy = logged_in_client.get(reverse("policy-new"), {"copy": "legacy-v1.5"}).content.decode()
    assert "legacy-v1.5 (copy)" in copy
    assert "schedulerMode: legacy" in copy


def test_owner_sees_edit_link(logged_in_client: Client, mine: Policy) -> None:
    detail = logged_in_client.get(reverse("policy-detail", args=["mine"])).content.decode()
    assert reverse("policy-edit", args=["mine"]) in detail
    assert reverse("policy-new") in logged_in_client.get(reverse("policy-list")).content.decode()


def test_new_is_not_a_slug(logged_in_client: Client) -> None:
    """A policy named "new" or "editor" gets a slug the URL map does not use."""
    assert re.fullmatch(r"new-[a-z0-9]{6}", editor.unique_policy_slug("New"))
    assert re.fullmatch(r"editor-[a-z0-9]{6}", editor.unique_policy_slug("editor"))


# Limits on the live checks


@pytest.fixture
def three_checks(settings: Any, user: Any) -> None:
    """At most three live checks per user in ten seconds, counted from nothing."""
    settings.KUBEVIZ_EDITOR_CHECKS = 3
    settings.KUBEVIZ_EDITOR_WINDOW_SECONDS = 10
    cache.delete(f"kubeviz:editor-checks:{user.pk}")


def test_live_checks_past_the_limit_get_a_polite_429_in_the_problems_box(
    logged_in_client: Client, three_checks: None
) -> None:
    """Validate and render share the budget; the fourth check is refused with Retry-After, shown inline."""
    document = {"document": editor.preset_document("default")}
    answers = [
        logged_in_client.post(reverse("policy-validate"), document, HTTP_HX_REQUEST="true"),
        logged_in_client.post(reverse("policy-yaml"), _post_data(editor.default_knobs()), HTTP_HX_REQUEST="true"),
        logged_in_client.post(reverse("policy-validate"), document, HTTP_HX_REQUEST="true"),
        logged_in_client.post(reverse("policy-validate"), document, HTTP_HX_REQUEST="true"),
    ]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    refused = answers[-1]
    html = refused.content.decode()
    assert 1 <= int(refused["Retry-After"]) <= 10
    assert (refused["HX-Retarget"], refused["HX-Reswap"]) == ("#yaml-problems", "outerHTML")
    assert '<div id="yaml-problems"' in html
    assert "Checked too often" in html
    assert "at most 3 times in 10 s" in html


def test_the_limit_is_per_user(logged_in_client: Client, three_checks: None, other_user: Any) -> None:
    document = {"document": editor.preset_document("default")}
    for _ in range(3):
        logged_in_client.post(reverse("policy-validate"), document)
    assert logged_in_client.post(reverse("policy-validate"), document).status_code == 429
    other = Client()
    other.force_login(other_user)
    cache.delete(f"kubeviz:editor-checks:{other_user.pk}")
    assert other.post(reverse("policy-validate"), document).status_code == 200


def test_the_window_slides(three_checks: None, user: Any) -> None:
    """Checks older than the window no longer count; the wait is until the oldest one leaves it."""
    assert [editor_check_wait(user.pk, now=t) for t in (100.0, 101.0, 102.0)] == [0, 0, 0]
    assert editor_check_wait(user.pk, now=105.0) == 5
    assert editor_check_wait(user.pk, now=110.5) == 0


def test_the_page_loads_the_script_that_shows_refused_checks(logged_in_client: Client) -> None:
    html = logged_in_client.get(reverse("policy-new")).content.decode()
    assert "kubeviz/policy_editor.js" in html


def test_a_policy_over_its_size_limit_is_not_read(logged_in_client: Client, settings: Any) -> None:
    settings.KUBEVIZ_MAX_POLICY_BYTES = 1024
    document = editor.preset_document("default") + "#" * 2000 + "\n"
    html = logged_in_client.post(reverse("policy-validate"), {"document": document}).content.decode()
    assert re.search(r"policy\.yaml: the document is 2\.\d KiB; the limit is 1\.0 KiB\.", html)


def test_a_check_too_big_to_read_is_refused_in_the_problems_box(logged_in_client: Client, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    response = logged_in_client.post(reverse("policy-validate"), {"document": "#" * 20_000})
    assert response.status_code == 413
    assert response["HX-Retarget"] == "#yaml-problems"
    assert "Too big to check" in response.content.decode()


def test_saving_a_body_too_big_to_read_saves_nothing(logged_in_client: Client, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    before = Policy.objects.count()
    data = _post_data(editor.default_knobs(), name="Big", visibility="public", document="#" * 20_000)
    response = logged_in_client.post(reverse("policy-new"), data, follow=True)
    assert Policy.objects.count() == before
    assert "Nothing was saved." in response.content.decode()


def test_an_alias_fan_out_is_refused_by_the_live_check(logged_in_client: Client) -> None:
    """The 5-second fan-out of the issue: the alias is refused, with its line, before it is expanded."""
    document = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nleaderElection:\n"
        "  a: &a [" + ", ".join(["x"] * 1000) + "]\n  b: [" + ", ".join(["*a"] * 250) + "]\n"
    )
    html = logged_in_client.post(reverse("policy-validate"), {"document": document}).content.decode()
    assert "policy.yaml:5 leaderElection.b[198]: alias *a expands to 1,001 values" in html


def test_live_checks_run_under_the_cpu_budget(logged_in_client: Client, settings: Any) -> None:
    settings.KUBEVIZ_READ_CPU_SECONDS = 1e-9
    document = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nleaderElection:\n  x: ["
        + ", ".join(["1"] * 5000)
        + "]\n"
    )
    html = logged_in_client.post(reverse("policy-validate"), {"document": document}).content.decode()
    assert "gave up after 1e-09 s of CPU time" in html


# The Kubernetes version


def test_the_version_select_writes_spec_kubernetes_version_and_the_default_is_left_out() -> None:
    """v1.36 is the default version: it is left out; v1.31, when chosen, is written."""
    assert editor.default_knobs()["kubernetes_version"] == "v1.36"
    v136 = yaml.safe_load(editor.document_from_knobs(_knobs(kubernetes_version="v1.36", queueing_hints=True)))
    assert v136["spec"] == {}
    v131 = yaml.safe_load(editor.document_from_knobs(_v131_knobs()))
    assert v131["spec"] == {"kubernetesVersion": "v1.31"}
    assert _load(editor.document_from_knobs(_v131_knobs())).kubernetes_version == "v1.31"


def test_v1_31_knobs_have_no_dynamic_resources_and_write_no_override_of_it() -> None:
    """v1.31's default profile has no DynamicResources: its knobs leave it out, and a v1.31
    document from them is v1.31's default profile (nothing disabled)."""
    knobs = _v131_knobs()
    assert "filter_DynamicResources" not in knobs
    assert "score_DynamicResources_on" not in knobs
    assert _knobs()["filter_DynamicResources"] is True
    assert _knobs()["score_DynamicResources_weight"] == 2
    written = yaml.safe_load(editor.document_from_knobs(knobs))
    assert "configuration" not in written["spec"]
    assert editor.knobs_from_document(editor.document_from_knobs(knobs)) == knobs


def test_switching_to_v1_31_drops_the_gates_v1_31_does_not_have() -> None:
    base = (
        "apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata: {name: my-policy}\n"
        "spec:\n  kubernetesVersion: v1.36\n  featureGates: {SchedulerPopFromBackoffQ: false}\n"
    )
    assert _load(base).gate("SchedulerPopFromBackoffQ") is False
    rewritten = editor.document_from_knobs(_v131_knobs(), base)
    assert yaml.safe_load(rewritten)["spec"] == {"kubernetesVersion": "v1.31"}
    kept = editor.document_from_knobs(_knobs(kubernetes_version="v1.36", queueing_hints=True), base)
    assert yaml.safe_load(kept)["spec"] == {"featureGates": {"SchedulerPopFromBackoffQ": False}}


def test_under_v1_36_the_hints_box_is_checked_locked_and_posting_it_off_changes_nothing() -> None:
    form = PolicyKnobsForm(_post_data(_knobs(kubernetes_version="v1.36", queueing_hints=False)))
    assert form.is_valid(), form.errors
    assert form.knobs()["queueing_hints"] is True
    assert form.fields["queueing_hints"].disabled
    html = str(form["queueing_hints"])
    assert "disabled" in html
    assert "checked" in html
    assert _load(editor.document_from_knobs(form.knobs())).kubernetes_version == "v1.36"


def test_under_v1_31_the_hints_box_is_free() -> None:
    form = PolicyKnobsForm(_post_data(_knobs(kubernetes_version="v1.31", queueing_hints=True)))
    assert form.is_valid(), form.errors
    assert not form.fields["queueing_hints"].disabled
    assert form.knobs()["queueing_hints"] is True


def test_the_new_page_shows_the_version_select_and_the_v1_36_lock(logged_in_client: Client) -> None:
    page = logged_in_client.get(reverse("policy-new") + "?from=kubernetes-v1-36").content.decode()
    assert 'name="kubernetes_version"' in page
    assert '<option value="v1.36" selected>v1.36</option>' in page
    assert "QueueingHints are GA and locked on since v1.34" in page
    for gate in ("SchedulerPopFromBackoffQ", "SchedulerAsyncPreemption", "OpportunisticBatching"):
        assert f"<code>{gate}</code> on" in page
    page = logged_in_client.get(reverse("policy-new") + "?from=default").content.decode()
    assert '<option value="v1.36" selected>v1.36</option>' in page  # the default version
    assert "QueueingHints are GA and locked on since v1.34" in page
    page = logged_in_client.get(reverse("policy-new") + "?from=kubernetes-v1-31").content.decode()
    assert '<option value="v1.31" selected>v1.31</option>' in page
    assert "QueueingHints are GA and locked on since v1.34" not in page


def test_a_version_change_sends_the_knobs_back_locked(logged_in_client: Client) -> None:
    """The knobs were drawn for v1.31; the select says v1.36: the YAML and the knobs come back
    (locked, with v1.36's DynamicResources knobs); and the other way, v1.31 is written out."""
    data = _post_data(_v131_knobs(kubernetes_version="v1.36"), document="", shown_kubernetes_version="v1.31")
    body = logged_in_client.post(reverse("policy-yaml"), data).content.decode()
    assert "kubernetesVersion" not in body.split('id="knob-pane"')[0]  # v1.36 is the default: left out
    assert 'id="knob-pane" hx-swap-oob="innerHTML"' in body
    assert "QueueingHints are GA and locked on since v1.34" in body
    assert 'name="filter_DynamicResources"' in body
    back = _post_data(_knobs(kubernetes_version="v1.31"), document="", shown_kubernetes_version="v1.36")
    body = logged_in_client.post(reverse("policy-yaml"), back).content.decode()
    assert "kubernetesVersion: v1.31" in body
    assert 'id="knob-pane" hx-swap-oob="innerHTML"' in body
    assert "QueueingHints are GA and locked on since v1.34" not in body
    assert 'name="filter_DynamicResources"' not in body
    same = _post_data(_v131_knobs(), document="", shown_kubernetes_version="v1.31")
    assert 'hx-swap-oob="innerHTML"' not in logged_in_client.post(reverse("policy-yaml"), same).content.decode()


def test_knobs_posted_from_v1_31_under_v1_36_keep_dynamic_resources_on() -> None:
    """The v1.31 page had no DynamicResources boxes: switching the select to v1.36 must not read
    them as unchecked (which would disable the plugin); they take v1.36's defaults."""
    data = _post_data(_v131_knobs(kubernetes_version="v1.36"), shown_kubernetes_version="v1.31")
    assert "filter_DynamicResources" not in data
    form = PolicyKnobsForm(data)
    assert form.is_valid(), form.errors
    profile = _load(editor.document_from_knobs(form.knobs())).profiles[0]
    assert "DynamicResources" in profile.plugins["filter"]
    assert profile.weights["DynamicResources"] == 2
    # Drawn for v1.36, its box unchecked is off.
    off = PolicyKnobsForm(_post_data(_knobs(filter_DynamicResources=False), shown_kubernetes_version="v1.36"))
    assert off.is_valid(), off.errors
    assert "DynamicResources" not in _load(editor.document_from_knobs(off.knobs())).profiles[0].plugins["filter"]
