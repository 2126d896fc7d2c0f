"""Policy loading: upstream's plugin merge rules, validation with paths and lines, presets."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest

import scheduler_core.scheduler.policy as policy_module
from scheduler_core.documents.errors import LoadError
from scheduler_core.scheduler.config import Policy, ProfileConfig
from scheduler_core.scheduler.plugins import REGISTRY
from scheduler_core.scheduler.policy import builtin_policies, builtin_policy, load_policy
from scheduler_core.scheduler.profile import default_policy
from scheduler_core.scheduler.versions import GATE_DEFAULTS, V1_31

KSC = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
WRAPPER = "apiVersion: kubeviz.dev/v1\nkind: Policy\n"
DEFAULT = default_policy().profiles[0]


def profile_of(plugins_yaml: str, extra: str = "") -> tuple[dict[str, tuple[str, ...]], dict[str, int]]:
    text = KSC + "profiles:\n  - schedulerName: default-scheduler\n    plugins:\n" + plugins_yaml + extra
    profile = load_policy(text).profiles[0]
    return profile.plugins, profile.weights


def errors_of(text: str) -> list[str]:
    with pytest.raises(LoadError) as info:
        load_policy(text)
    return [str(p) for p in info.value.problems]


def test_an_empty_configuration_is_the_default_policy() -> None:
    policy = load_policy(KSC)
    assert replace(policy, name="default", source="") == default_policy()
    assert (policy.name, policy.source) == ("policy", "policy.yaml")


# The settings a document fills in, by field of config.Policy (the others are the profiles,
# the document's name and where it came from).
SETTINGS = tuple(f.name for f in fields(Policy) if f.name not in ("profiles", "name", "source"))
# Defaults other than config.Policy's, each set one the loader accepts (a tie-break rule other
# than random needs the framework scheduler).
OTHER_DEFAULTS = (
    Policy(
        profiles=(),
        percentage_of_nodes_to_score=50,
        pod_initial_backoff_seconds=3,
        pod_max_backoff_seconds=30,
        queue_mode="fifo",
        scheduler_mode="legacy",
        upgrade_aware_reservation=True,
        bind_latency_ms=250,
        node_usage_every_ms=5_000,
        # v1.31, the version other than the default, and the one a FIFO/legacy scheduler runs
        kubernetes_version=V1_31,
        feature_gates=tuple(sorted(GATE_DEFAULTS[V1_31].items())),
        queueing_hints=False,
    ),
    Policy(
        profiles=(),
        tie_break="shuffled-first-fit",
        # KEP-5690's what-if needs v1.36, the default version
        kep5690_dra_preemption=True,
    ),
)


@pytest.mark.parametrize("text", [KSC, WRAPPER], ids=["configuration", "wrapper"])
def test_what_a_document_leaves_out_is_the_dataclass_default(text: str) -> None:
    """config.py's field defaults are the one place a policy default is spelled: an empty
    document loads to them, field by field."""
    policy = load_policy(text)
    assert {name: getattr(policy, name) for name in SETTINGS} == {
        f.name: f.default for f in fields(Policy) if f.name in SETTINGS
    }
    (profile,) = policy.profiles
    defaults = ProfileConfig()
    assert profile.scheduler_name == defaults.scheduler_name
    assert profile.percentage_of_nodes_to_score == defaults.percentage_of_nodes_to_score


@pytest.mark.parametrize("other", OTHER_DEFAULTS, ids=["fifo-legacy", "shuffled"])
def test_the_loader_spells_no_default_of_its_own(monkeypatch: pytest.MonkeyPatch, other: Policy) -> None:
    """With other defaults in the loader's copy of config.Policy's, what a document leaves out
    follows them: a default spelled a second time in policy.py would not move."""
    monkeypatch.setattr(policy_module, "_DEFAULT", other)
    monkeypatch.setattr(
        policy_module, "_DEFAULT_PROFILE", ProfileConfig("other-scheduler", percentage_of_nodes_to_score=40)
    )
    policy = load_policy(WRAPPER)
    assert {name: getattr(policy, name) for name in SETTINGS} == {name: getattr(other, name) for name in SETTINGS}
    (profile,) = policy.profiles
    assert (profile.scheduler_name, profile.percentage_of_nodes_to_score) == ("other-scheduler", 40)


def test_the_other_defaults_move_every_setting() -> None:
    """Between them the cases above change every setting, so a new one is covered too."""
    default = Policy(profiles=())
    moved = {name for other in OTHER_DEFAULTS for name in SETTINGS if getattr(other, name) != getattr(default, name)}
    assert set(SETTINGS) - moved == set()


def test_the_default_preset_equals_default_policy() -> None:
    assert builtin_policy("default") == default_policy()


def test_disabling_every_score_plugin_and_enabling_one_keeps_the_default_filters() -> None:
    plugins, weights = profile_of(
        "      score:\n        disabled: [{name: '*'}]\n        enabled: [{name: NodeResourcesFit, weight: 1}]\n"
    )
    assert plugins["score"] == ("NodeResourcesFit",)
    assert weights == {"NodeResourcesFit": 1}
    for point in ("queueSort", "preFilter", "filter", "preScore", "bind"):
        assert plugins[point] == DEFAULT.plugins[point], point


def test_a_multipoint_weight_override_keeps_the_plugin_in_place() -> None:
    plugins, weights = profile_of("      multiPoint:\n        enabled: [{name: NodeAffinity, weight: 9}]\n")
    assert plugins == DEFAULT.plugins
    assert weights == {**DEFAULT.weights, "NodeAffinity": 9}


def test_a_score_point_override_moves_the_plugin_first_as_upstream_does() -> None:
    # expandMultiPointPlugins: plugins enabled at the point that are also multiPoint plugins come
    # first (in the point's order), then the other multiPoint plugins, then the point's others.
    plugins, weights = profile_of("      score:\n        enabled: [{name: ImageLocality, weight: 5}]\n")
    assert plugins["score"] == ("ImageLocality", *(n for n in DEFAULT.plugins["score"] if n != "ImageLocality"))
    assert weights["ImageLocality"] == 5
    assert plugins["filter"] == DEFAULT.plugins["filter"]


def test_the_score_weight_wins_over_the_multipoint_weight() -> None:
    _, weights = profile_of(
        "      multiPoint:\n        enabled: [{name: TaintToleration, weight: 7}]\n"
        "      score:\n        enabled: [{name: TaintToleration, weight: 4}]\n"
    )
    assert weights["TaintToleration"] == 4


def test_disabling_a_plugin_at_multipoint_removes_it_everywhere() -> None:
    plugins, weights = profile_of("      multiPoint:\n        disabled: [{name: TaintToleration}]\n")
    assert all("TaintToleration" not in names for names in plugins.values())
    assert "TaintToleration" not in weights


def test_disabling_a_plugin_at_one_point_keeps_it_at_the_others() -> None:
    plugins, _ = profile_of("      score:\n        disabled: [{name: NodeResourcesBalancedAllocation}]\n")
    assert "NodeResourcesBalancedAllocation" not in plugins["score"]
    assert "NodeResourcesBalancedAllocation" in plugins["preScore"]


def test_disabling_all_at_multipoint_leaves_only_explicit_plugins() -> None:
    plugins, weights = profile_of(
        "      multiPoint:\n        disabled: [{name: '*'}]\n"
        "        enabled: [{name: PrioritySort}, {name: NodeResourcesFit, weight: 3}, {name: DefaultBinder}]\n"
    )
    assert plugins["filter"] == ("NodeResourcesFit",)
    assert plugins["queueSort"] == ("PrioritySort",)
    assert plugins["bind"] == ("DefaultBinder",)
    assert weights == {"NodeResourcesFit": 3}


def test_top_level_and_profile_settings() -> None:
    policy = load_policy(
        KSC
        + "parallelism: 8\nleaderElection: {leaderElect: false}\nclientConnection: {kubeconfig: /x}\n"
        + "percentageOfNodesToScore: 30\npodInitialBackoffSeconds: 2\npodMaxBackoffSeconds: 20\n"
        + "profiles:\n  - schedulerName: a\n    percentageOfNodesToScore: 100\n  - schedulerName: b\n"
    )
    assert (policy.percentage_of_nodes_to_score, policy.pod_initial_backoff_seconds) == (30, 2)
    assert policy.pod_max_backoff_seconds == 20
    assert [(p.scheduler_name, p.percentage_of_nodes_to_score) for p in policy.profiles] == [("a", 100), ("b", None)]


def test_the_kubeviz_wrapper() -> None:
    policy = load_policy(
        "apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata: {name: slow-binds}\n"
        "spec:\n  queueMode: fifo\n  schedulerMode: legacy\n  upgradeAwareReservation: true\n"
        "  bindLatency: 250ms\n  configuration:\n    " + KSC.replace("\n", "\n    ") + "percentageOfNodesToScore: 50\n",
        kubernetes_version=V1_31,  # FIFO and legacy have no queueing hints, which v1.36 locks on
    )
    assert (policy.name, policy.queue_mode, policy.scheduler_mode) == ("slow-binds", "fifo", "legacy")
    assert policy.upgrade_aware_reservation
    assert policy.bind_latency_ms == 250
    assert policy.percentage_of_nodes_to_score == 50


def test_node_affinity_added_affinity_is_parsed_into_the_plugin() -> None:
    policy = load_policy(
        KSC
        + "profiles:\n  - pluginConfig:\n      - name: NodeAffinity\n        args:\n"
        + "          kind: NodeAffinityArgs\n          apiVersion: kubescheduler.config.k8s.io/v1\n"
        + "          addedAffinity:\n            requiredDuringSchedulingIgnoredDuringExecution:\n"
        + "              nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [a]}]}]\n"
    )
    args = policy.profiles[0].plugin_args["NodeAffinity"]
    assert "kind" not in args
    assert "addedAffinity" in args


BAD_POLICIES = [
    (
        KSC + "profiles:\n  - plugins:\n      filter:\n        enabled: [{name: NodeFrobnicator}]\n",
        'policy.yaml:6 profiles[0].plugins.filter.enabled[0].name: unknown plugin "NodeFrobnicator"; known plugins: '
        + ", ".join(REGISTRY),
    ),
    (
        KSC + "profiles:\n  - plugins:\n      filter:\n        enabled: [{name: ImageLocality}]\n",
        "policy.yaml:6 profiles[0].plugins.filter.enabled[0].name: ImageLocality does not implement filter "
        "(it implements score)",
    ),
    (
        KSC + "profiles:\n  - plugins:\n      score:\n        enabled: [{name: ImageLocality, weight: 101}]\n",
        "policy.yaml:6 profiles[0].plugins.score.enabled[0].weight: must be between 1 and 100, got 101",
    ),
    (
        KSC + "profiles:\n  - plugins:\n      score:\n        enabled: [{name: ImageLocality, weight: 0}]\n",
        "policy.yaml:6 profiles[0].plugins.score.enabled[0].weight: must be between 1 and 100, got 0",
    ),
    (
        KSC + "percentageOfNodesToScore: 101\n",
        "policy.yaml:3 percentageOfNodesToScore: must be at most 100, got 101",
    ),
    (
        KSC + "profiles:\n  - percentageOfNodesToScore: -1\n",
        "policy.yaml:4 profiles[0].percentageOfNodesToScore: must be at least 0, got -1",
    ),
    (
        KSC + "podInitialBackoffSeconds: 20\npodMaxBackoffSeconds: 10\n",
        "policy.yaml:4 podMaxBackoffSeconds: must be at least podInitialBackoffSeconds (20), got 10",
    ),
    (
        KSC + "profile: []\n",
        "policy.yaml:3 profile: unknown field; expected one of apiVersion, kind, parallelism, leaderElection, "
        "clientConnection, healthzBindAddress, metricsBindAddress, enableProfiling, enableContentionProfiling, "
        "delayCacheUntilActive, percentageOfNodesToScore, podInitialBackoffSeconds, podMaxBackoffSeconds, profiles, "
        "extenders",
    ),
    (
        KSC + "profiles:\n  - plugins:\n      scores: {}\n",
        "policy.yaml:5 profiles[0].plugins.scores: unknown field; expected one of multiPoint, preEnqueue, queueSort, "
        "preFilter, filter, postFilter, preScore, score, reserve, permit, preBind, bind, postBind",
    ),
    (
        KSC + "profiles:\n  - {schedulerName: a}\n  - {schedulerName: a}\n",
        'policy.yaml:5 profiles[1].schedulerName: duplicate schedulerName "a"',
    ),
    (
        KSC + "profiles:\n  - plugins:\n      queueSort:\n        disabled: [{name: '*'}]\n",
        "policy.yaml:4 profiles[0].plugins: exactly one queueSort plugin must be enabled, got 0",
    ),
    (
        KSC + "profiles:\n  - pluginConfig:\n      - name: NodeAffinity\n        args:\n          addedAffinity:\n"
        "            requiredDuringSchedulingIgnoredDuringExecution:\n"
        "              nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: Near}]}]\n",
        "policy.yaml:9 profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        '.nodeSelectorTerms[0].matchExpressions[0].operator: "Near" is not one of In, NotIn, Exists, DoesNotExist, '
        "Gt, Lt",
    ),
    (
        KSC + "profiles:\n  - pluginConfig:\n      - name: NodeAffinity\n        args: {addedAfinity: {}}\n",
        "policy.yaml:6 profiles[0].pluginConfig[0].args.addedAfinity: unknown field; NodeAffinityArgs has "
        "addedAffinity only",
    ),
    (
        KSC + "profiles:\n  - pluginConfig:\n      - {name: NodeAffinity, args: {kind: FitArgs}}\n",
        'policy.yaml:5 profiles[0].pluginConfig[0].args.kind: expected NodeAffinityArgs, got a string ("FitArgs")',
    ),
    (
        KSC + "profiles:\n  - pluginConfig:\n      - {name: Frob}\n",
        'policy.yaml:5 profiles[0].pluginConfig[0].name: unknown plugin "Frob"; known plugins: ' + ", ".join(REGISTRY),
    ),
    (
        KSC + "profiles:\n  - plugins:\n      multiPoint:\n        enabled: [{name: VolumeBinding}]\n",
        "policy.yaml:6 profiles[0].plugins.multiPoint.enabled[0].name: VolumeBinding is not modelled by kubeviz "
        "(no volumes, scheduling gates or dynamic resources)",
    ),
    (
        "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
        "policy.yaml:1 apiVersion: expected kubescheduler.config.k8s.io/v1, got a string "
        '("kubescheduler.config.k8s.io/v1beta3")',
    ),
    (
        "apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata: {name: x}\nspec: {queueMode: lifo}\n",
        'policy.yaml:4 spec.queueMode: "lifo" is not one of priority, fifo',
    ),
    (
        "apiVersion: kubeviz.dev/v1\nkind: Policy\nspec:\n  configuration:\n    kind: KubeSchedulerConfiguration\n"
        "    apiVersion: kubescheduler.config.k8s.io/v1\n    podMaxBackoffSeconds: soon\n",
        'policy.yaml:7 spec.configuration.podMaxBackoffSeconds: expected an integer, got a string ("soon")',
    ),
    (
        "apiVersion: kubeviz.dev/v1\nkind: Policy\nspec: {bindLatency: fast}\n",
        'policy.yaml:3 spec.bindLatency: "fast" is not a duration (examples: "90s", "5m", "1h30m", "250ms")',
    ),
    (
        "apiVersion: v1\nkind: Pod\n",
        'policy.yaml:2 kind: expected KubeSchedulerConfiguration or Policy (kubeviz.dev/v1), got a string ("Pod")',
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    BAD_POLICIES,
    ids=[
        "an unknown plugin lists the known ones",
        "a plugin enabled at a point it does not implement is rejected",
        "a weight above 100 is rejected",
        "a weight of 0 is rejected",
        "percentageOfNodesToScore above 100 is rejected",
        "a negative profile percentageOfNodesToScore is rejected",
        "an initial backoff above the max is rejected",
        "an unknown top-level field lists the known ones",
        "an unknown extension point lists the known ones",
        "duplicate scheduler names are rejected",
        "a profile without a queueSort plugin is rejected",
        "plugin args errors carry the path inside args and the line",
        "unknown plugin args fields are rejected",
        "a wrong args kind is rejected",
        "pluginConfig for an unknown plugin is rejected",
        "enabling an upstream plugin kubeviz does not model is explained",
        "an old config apiVersion is rejected",
        "an unknown queue mode is rejected",
        "wrapper configuration errors carry the spec.configuration prefix",
        "a bad bind latency is rejected",
        "a non-policy document is rejected",
    ],
)
def test_bad_policies_name_line_and_path(text: str, expected: str) -> None:
    assert errors_of(text)[0] == expected


def test_disabling_unmodelled_upstream_plugins_is_accepted() -> None:
    plugins, _ = profile_of(
        "      multiPoint:\n        disabled: [{name: VolumeBinding}, {name: SchedulingGates}]\n",
        "    pluginConfig:\n      - {name: DefaultPreemption, args: {minCandidateNodesPercentage: 10}}\n",
    )
    assert plugins == DEFAULT.plugins


def test_builtin_presets() -> None:
    presets = builtin_policies()
    assert {"default", "bin-packing", "spread", "score-all-nodes", "rtcr-binpack"} <= set(presets)
    fit = presets["bin-packing"].profiles[0].plugin_args["NodeResourcesFit"]
    assert fit["scoringStrategy"]["type"] == "MostAllocated"
    assert presets["spread"].profiles[0].plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"] == "LeastAllocated"
    assert presets["score-all-nodes"].percentage_of_nodes_to_score == 100
    rtcr = presets["rtcr-binpack"].profiles[0].plugin_args["NodeResourcesFit"]["scoringStrategy"]
    assert rtcr["type"] == "RequestedToCapacityRatio"
    assert all(p.name == name for name, p in presets.items())
    with pytest.raises(KeyError, match="no built-in policy"):
        builtin_policy("nope")
