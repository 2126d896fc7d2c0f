"""The policy editor offers what the engine has: its lists and defaults are the registry's and the parsers'.

Each test holds the editor's catalog (``policy_catalog``, the form and ``default_knobs``) against
a source it does not read from: the registry's classes, the loader's default profile, the
framework built from a document the editor wrote, the plugins' argument parsers, docs/gpu.md,
or upstream's default_plugins.go written out as the table of the rule.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from kubeviz.web.forms_policy import PolicyKnobsForm
from kubeviz.web.services import policy_catalog as offered
from kubeviz.web.services import policy_editor as editor
from scheduler_core.scheduler.framework import (
    FilterPlugin,
    Handle,
    PluginArgsError,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
)
from scheduler_core.scheduler.framework.runtime import Framework
from scheduler_core.scheduler.plugins import REGISTRY
from scheduler_core.scheduler.plugins.default_preemption import DefaultPreemption
from scheduler_core.scheduler.plugins.gpu_score import GpuScorePlugin
from scheduler_core.scheduler.plugins.node_resources_fit import NodeResourcesFit, parse_fit_args
from scheduler_core.scheduler.plugins.resource_allocation import DEFAULT_RESOURCES
from scheduler_core.scheduler.policy import builtin_policy, load_policy
from scheduler_core.scheduler.profile import DEFAULT_PLUGINS
from scheduler_core.scheduler.versions import DEFAULT_KUBERNETES_VERSION, V1_31, V1_36

# A configuration that names no profile: the loader gives upstream's default one.
NO_PROFILES = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
GPU_DOC = Path(__file__).resolve().parents[2] / "docs" / "gpu.md"

# pkg/scheduler/apis/config/v1/default_plugins.go (volume plugins and SchedulingGates aside).
UPSTREAM_FILTERS = (
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "PodTopologySpread",
    "InterPodAffinity",
)
UPSTREAM_SCORE_WEIGHTS = (
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
)
# v1.36.2's default_plugins.go applyDynamicResources (DynamicResourceAllocation GA, locked on):
# DynamicResources, weight 2, right before DefaultPreemption, so last at filter and after
# InterPodAffinity at score.
UPSTREAM_FILTERS_V136 = (*UPSTREAM_FILTERS, "DynamicResources")
UPSTREAM_SCORE_WEIGHTS_V136 = (*UPSTREAM_SCORE_WEIGHTS[:5], ("DynamicResources", 2), *UPSTREAM_SCORE_WEIGHTS[5:])


def _framework(document: str) -> Framework:
    """The engine's plugins, built with their args from the document's first profile."""
    return Framework(load_policy(document).profiles[0], REGISTRY, Handle())


def _plugin(framework: Framework, name: str) -> Any:
    plugins = {p.name: p for p in (*framework.filter_plugins, *framework.post_filter_plugins)}
    return plugins[name]


# Plugin lists


def test_the_filter_knobs_are_the_default_profiles_filter_plugins_in_order() -> None:
    """Every filter knob is a FilterPlugin of the registry, and together they are the default
    profile's filter list as the loader resolves it, in its order (upstream's). Pinned to v1.31:
    UPSTREAM_FILTERS is v1.31's default_plugins.go (v1.36's is the test below)."""
    filters = offered.filter_plugins(V1_31)
    for name in filters:
        assert issubclass(REGISTRY[name], FilterPlugin), name
    loaded = load_policy(NO_PROFILES, kubernetes_version=V1_31)
    assert loaded.profiles[0].plugins["filter"] == filters
    assert tuple(name for name, _ in DEFAULT_PLUGINS if issubclass(REGISTRY[name], FilterPlugin)) == filters
    assert filters == UPSTREAM_FILTERS


def test_the_score_knobs_are_the_default_score_plugins_with_upstream_weights() -> None:
    """Each score knob is a ScorePlugin of the registry with its default weight, in the
    default profile's score order. Pinned to v1.31 (UPSTREAM_SCORE_WEIGHTS is v1.31's table)."""
    scores = offered.score_plugins(V1_31)
    for name, _ in scores:
        assert issubclass(REGISTRY[name], ScorePlugin), name
    profile = load_policy(NO_PROFILES, kubernetes_version=V1_31).profiles[0]
    assert tuple((name, profile.weights[name]) for name in profile.plugins["score"]) == scores
    assert scores == UPSTREAM_SCORE_WEIGHTS


def test_the_v1_36_knobs_are_v1_36s_default_profile_with_dynamic_resources() -> None:
    """Under v1.36 (the default version) the knobs are v1.36.2's default profile: DynamicResources
    at filter and score (weight 2), in the loader's order; the form of each version offers its own."""
    assert DEFAULT_KUBERNETES_VERSION == V1_36
    profile = load_policy(NO_PROFILES).profiles[0]
    assert profile.plugins["filter"] == offered.filter_plugins(V1_36) == offered.FILTER_PLUGINS
    assert offered.FILTER_PLUGINS == UPSTREAM_FILTERS_V136
    scores = tuple((name, profile.weights[name]) for name in profile.plugins["score"])
    assert scores == offered.score_plugins(V1_36) == offered.SCORE_PLUGINS == UPSTREAM_SCORE_WEIGHTS_V136
    for version, filters in ((V1_31, UPSTREAM_FILTERS), (V1_36, UPSTREAM_FILTERS_V136)):
        form = PolicyKnobsForm.from_knobs(editor.default_knobs(version))
        assert [field.label for field in form.filter_fields()] == list(filters), version
    v131 = PolicyKnobsForm.from_knobs(editor.default_knobs(V1_31))
    assert [(name, default) for name, default, _, _ in v131.score_rows()] == list(UPSTREAM_SCORE_WEIGHTS)


def test_the_gpu_policies_are_the_registrys_gpu_score_plugins_in_the_docs_order() -> None:
    """Every GPU policy the form offers is a GPU score plugin of the registry, none is left
    out, and they come in the order docs/gpu.md presents them."""
    for name in offered.GPU_POLICIES:
        assert issubclass(REGISTRY[name], ScorePlugin), name
    assert set(offered.GPU_POLICIES) == {name for name, cls in REGISTRY.items() if issubclass(cls, GpuScorePlugin)}
    documented = re.findall(r"^### .*\(`(Gpu\w+)`", GPU_DOC.read_text(encoding="utf-8"), re.M)
    assert tuple(documented) == offered.GPU_POLICIES


def test_only_the_gpu_policies_that_are_prescore_plugins_are_enabled_at_pre_score() -> None:
    """GpuRandom draws its node at PreScore, so choosing it enables it there too; the others
    are score plugins only."""
    assert offered.GPU_PRESCORE_POLICIES == ("GpuRandom",)
    for name in offered.GPU_POLICIES:
        knobs = {**editor.default_knobs(), "gpu_sharing": True, "gpu_policy": name}
        profile = load_policy(editor.document_from_knobs(knobs)).profiles[0]
        assert (name in profile.plugins["preScore"]) == issubclass(REGISTRY[name], PreScorePlugin), name
        assert name in profile.plugins["score"]


def test_gpu_share_is_the_registrys_filter_and_reserve_plugin() -> None:
    """The GPU-sharing knob writes GpuShare, a filter and reserve plugin of the registry."""
    cls = REGISTRY[offered.GPU_SHARE]
    assert issubclass(cls, FilterPlugin)
    assert issubclass(cls, ReservePlugin)
    profile = load_policy(editor.document_from_knobs({**editor.default_knobs(), "gpu_sharing": True})).profiles[0]
    assert offered.GPU_SHARE in profile.plugins["filter"]
    assert offered.GPU_SHARE in profile.plugins["reserve"]


def test_the_form_shows_the_catalogs_plugins() -> None:
    """One field per filter and score plugin of the catalog, and its GPU policies as choices."""
    form = PolicyKnobsForm()
    assert [field.label for field in form.filter_fields()] == list(offered.FILTER_PLUGINS)
    assert [(name, default) for name, default, _, _ in form.score_rows()] == list(offered.SCORE_PLUGINS)
    choices = [value for value, _ in form.fields["gpu_policy"].choices]  # type: ignore[attr-defined]
    assert choices == ["", *offered.GPU_POLICIES]


# Strategies


def test_the_strategies_offered_are_exactly_those_the_fit_parser_accepts() -> None:
    """Each strategy the form offers parses; the parser's refusal names exactly those."""
    choices = [value for value, _ in PolicyKnobsForm().fields["scoring_strategy"].choices]  # type: ignore[attr-defined]
    assert choices == list(offered.STRATEGIES)
    for kind in choices:
        strategy: dict[str, Any] = {"type": kind}
        if kind == "RequestedToCapacityRatio":
            strategy["requestedToCapacityRatio"] = {"shape": [{"utilization": 0, "score": 0}]}
        assert parse_fit_args({"scoringStrategy": strategy}).strategy == kind
    with pytest.raises(PluginArgsError) as refused:
        parse_fit_args({"scoringStrategy": {"type": "Frob"}})
    supported = ", ".join(f'"{kind}"' for kind in choices)
    assert str(refused.value).endswith(f"supported values: {supported}")


def test_the_form_refuses_a_strategy_the_parser_does_not_know() -> None:
    """A posted scoring strategy outside the parser's list is a form error, not a document."""
    data = {key: value for key, value in editor.default_knobs().items() if key != "shape" and value is not False}
    data.update({key: "on" for key, value in data.items() if value is True})
    data["scoring_strategy"] = "Frob"
    form = PolicyKnobsForm(data)
    assert not form.is_valid()
    assert list(form.errors) == ["scoring_strategy"]


# Argument defaults


def test_the_default_knobs_are_what_the_engine_runs_with_no_args() -> None:
    """The plugins built from the default knobs' document (no pluginConfig) carry exactly the
    knobs' preemption minimums, strategy and resource weights."""
    knobs = editor.default_knobs()
    framework = _framework(editor.document_from_knobs(knobs))
    preemption: DefaultPreemption = _plugin(framework, "DefaultPreemption")
    assert preemption.min_candidate_nodes_percentage == knobs["min_candidate_nodes_percentage"]
    assert preemption.min_candidate_nodes_absolute == knobs["min_candidate_nodes_absolute"]
    fit: NodeResourcesFit = _plugin(framework, "NodeResourcesFit")
    assert fit.args.strategy == knobs["scoring_strategy"]
    assert [(spec.name, spec.weight) for spec in fit.args.resources] == [
        ("cpu", knobs["cpu_weight"]),
        ("memory", knobs["memory_weight"]),
    ]


def test_the_catalogs_defaults_are_the_parsers_defaults() -> None:
    """DefaultPreemption parsed with no args, and Fit's parser given none, say the catalog's
    defaults (upstream's defaults.go: 10 %, 100 nodes, LeastAllocated over cpu and memory at 1)."""
    plugin = DefaultPreemption(Handle(), None)
    assert (plugin.min_candidate_nodes_percentage, plugin.min_candidate_nodes_absolute) == (
        offered.DEFAULT_MIN_CANDIDATE_PERCENTAGE,
        offered.DEFAULT_MIN_CANDIDATE_ABSOLUTE,
    )
    assert (offered.DEFAULT_MIN_CANDIDATE_PERCENTAGE, offered.DEFAULT_MIN_CANDIDATE_ABSOLUTE) == (10, 100)
    assert parse_fit_args(None).strategy == offered.DEFAULT_STRATEGY == "LeastAllocated"
    assert tuple((s.name, s.weight) for s in DEFAULT_RESOURCES) == offered.DEFAULT_RESOURCE_WEIGHTS
    assert offered.DEFAULT_RESOURCE_WEIGHTS == (("cpu", 1), ("memory", 1))


@pytest.mark.parametrize(
    ("knob", "value", "written"),
    [
        ("min_candidate_nodes_percentage", 11, {"minCandidateNodesPercentage": 11}),
        ("min_candidate_nodes_absolute", 99, {"minCandidateNodesAbsolute": 99}),
    ],
    ids=[
        "a percentage one off the parser's default is written",
        "an absolute minimum one off the parser's default is written",
    ],
)
def test_a_preemption_knob_off_the_default_is_written_and_parsed(knob: str, value: int, written: Any) -> None:
    """Only a value the parser would not default to reaches pluginConfig, and the engine runs it."""
    document = editor.document_from_knobs({**editor.default_knobs(), knob: value})
    assert load_policy(document).profiles[0].plugin_args["DefaultPreemption"] == written
    preemption: DefaultPreemption = _plugin(_framework(document), "DefaultPreemption")
    assert getattr(preemption, knob) == value


def test_the_starting_shape_is_the_rtcr_binpack_presets() -> None:
    """Switching to RequestedToCapacityRatio starts from the rtcr-binpack preset's shape."""
    args = builtin_policy(offered.SHAPE_PRESET).profiles[0].plugin_args["NodeResourcesFit"]
    expected = [(p["utilization"], p["score"]) for p in args["scoringStrategy"]["requestedToCapacityRatio"]["shape"]]
    assert list(offered.DEFAULT_SHAPE) == expected
    assert [tuple(point) for point in editor.default_knobs()["shape"]] == expected


POLICY_SETTINGS = (
    "percentage_of_nodes_to_score",
    "pod_initial_backoff_seconds",
    "pod_max_backoff_seconds",
    "queue_mode",
    "scheduler_mode",
    "upgrade_aware_reservation",
    "kep5690_dra_preemption",
    "queueing_hints",
    "tie_break",
    "bind_latency_ms",
)


def test_the_default_knobs_write_a_document_that_loads_to_the_engines_policy_defaults() -> None:
    """What the form starts with is what a document that says nothing gets from the loader."""
    written = editor.document_from_knobs(editor.default_knobs())
    loaded = load_policy(written)
    unsaid = load_policy(NO_PROFILES)
    for setting in POLICY_SETTINGS:
        assert getattr(loaded, setting) == getattr(unsaid, setting), setting
        assert editor.default_knobs()[setting] == getattr(unsaid, setting), setting


def test_a_resource_weight_of_zero_reads_as_the_parsers_default_of_one() -> None:
    document = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: cpu, weight: 0}
        - {name: memory, weight: 3}
"""
    knobs = editor.knobs_from_document(document)
    assert (knobs["cpu_weight"], knobs["memory_weight"]) == (1, 3)
    assert [(r.name, r.weight) for r in NodeResourcesFit(Handle(), _fit_args(document)).args.resources] == [
        ("cpu", 1),
        ("memory", 3),
    ]


def _fit_args(document: str) -> dict[str, Any]:
    args: dict[str, Any] = load_policy(document).profiles[0].plugin_args["NodeResourcesFit"]
    return args
