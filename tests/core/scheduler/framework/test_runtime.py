"""The profile runtime (pkg/scheduler/framework/runtime/framework.go).

- RunPreFilterPlugins: a rejection ends the run; Skip disables that plugin's Filter; the
  PreFilterResults are intersected, and an empty intersection is UnschedulableAndUnresolvable.
- RunFilterPlugins: profile order, stopping at the first non-success, naming the plugin.
- RunFilterPluginsWithNominatedPods: the pod must fit with the nominated pods of priority >=
  its own added (on copies) *and* without them.
- RunScorePlugins: raw → NormalizeScore → range check → × weight, summed per node.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from scheduler_core.api.model import (
    Affinity,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
)
from scheduler_core.scheduler.config import ProfileConfig
from scheduler_core.scheduler.framework import (
    SKIP,
    SUCCESS,
    Code,
    CycleState,
    FilterPlugin,
    Handle,
    PreFilterPlugin,
    PreFilterResult,
    SchedulingError,
    ScorePlugin,
    Status,
)
from scheduler_core.scheduler.framework.runtime import Framework
from scheduler_core.scheduler.plugins import REGISTRY
from tests.core.builders import cluster, make_node, make_pod

# -- fake plugins, the way upstream's framework tests use them ----------------------------


class Spy(PreFilterPlugin, FilterPlugin):
    """Records every call and says yes."""

    name = "Spy"
    calls: list[str] = []

    def pre_filter(self, state, pod, nodes):
        Spy.calls.append("pre_filter")
        return None, SUCCESS

    def filter(self, state, pod, node_info):
        Spy.calls.append(f"filter {node_info.name}")
        return SUCCESS


class PinToNode(PreFilterPlugin):
    """A PreFilter that restricts the cycle to the nodes in its args."""

    name = "PinToNode"

    def __init__(self, handle, args=None):
        super().__init__(handle, args)
        self.nodes = frozenset((args or {}).get("nodes", ()))

    def pre_filter(self, state, pod, nodes):
        return PreFilterResult(self.nodes), SUCCESS


class AlwaysSkip(PreFilterPlugin, FilterPlugin):
    """Skips at PreFilter; its Filter would reject every node if it ever ran."""

    name = "AlwaysSkip"

    def pre_filter(self, state, pod, nodes):
        return None, SKIP

    def filter(self, state, pod, node_info):
        return Status.unschedulable("AlwaysSkip's filter ran")


class Broken(PreFilterPlugin, FilterPlugin):
    name = "Broken"

    def pre_filter(self, state, pod, nodes):
        return None, Status(Code.ERROR, ("boom",))

    def filter(self, state, pod, node_info):
        return Status(Code.ERROR, ("boom",))


class NeedsCompanion(FilterPlugin):
    """Fits only a node that already runs a pod labelled role=companion (like pod affinity)."""

    name = "NeedsCompanion"

    def filter(self, state, pod, node_info):
        if any(p.labels.get("role") == "companion" for p in node_info.pods):
            return SUCCESS
        return Status.unschedulable("no companion on the node")


class _Counter:
    def __init__(self):
        self.added = 0

    def clone(self):
        copy = _Counter()
        copy.added = self.added
        return copy


class CountNominated(PreFilterPlugin, FilterPlugin):
    """PreFilterExtensions: AddPod updates the cycle state of the what-if copy only."""

    name = "CountNominated"
    has_extensions = True
    seen: list[int] = []

    def pre_filter(self, state, pod, nodes):
        state.write("count", _Counter())
        return None, SUCCESS

    def add_pod(self, state, pod_to_schedule, pod_to_add, node_info):
        state.read("count").added += 1
        return SUCCESS

    def filter(self, state, pod, node_info):
        CountNominated.seen.append(state.read("count").added)
        return SUCCESS


class OutOfRange(ScorePlugin):
    name = "OutOfRange"

    def score(self, state, pod, node_info):
        return 101


FAKES = {cls.name: cls for cls in (Spy, PinToNode, AlwaysSkip, Broken, NeedsCompanion, CountNominated, OutOfRange)}
TEST_REGISTRY = {**REGISTRY, **FAKES}


@pytest.fixture(autouse=True)
def _reset_recorders():
    Spy.calls = []
    CountNominated.seen = []


def framework(snapshot, *, nominated=None, weights=None, args=None, **points: Sequence[str]):
    """A profile with just the given plugins at the given points (e.g. filter=("NodeName",))."""
    profile = ProfileConfig(
        plugins={point: tuple(names) for point, names in points.items()},
        weights=dict(weights or {}),
        plugin_args=dict(args or {}),
    )
    handle = Handle()
    handle.snapshot = snapshot
    if nominated is not None:
        handle.nominated_pods_for_node = lambda name: list(nominated.get(name, ()))
    return Framework(profile, TEST_REGISTRY, handle)


def req(key, op, *values):
    return NodeSelectorRequirement(key, op, tuple(values))


def pinned_to(*names):
    term = NodeSelectorTerm((), (req("metadata.name", "In", *names),))
    return Affinity(node_affinity=NodeAffinity(required=NodeSelector((term,))))


# -- the filter chain --------------------------------------------------------------------

FILTER_ORDER = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "Spy")
UNSCHEDULABLE_TOLERATION = Toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoSchedule")

CHAIN_CASES = [
    (
        {"unschedulable": True, "taints": (Taint("dedicated", "NoSchedule", "gpu"),)},
        {"node_name": "elsewhere"},
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) were unschedulable",), "NodeUnschedulable"),
        "the first failing plugin in profile order is the one reported",
    ),
    (
        {"unschedulable": True, "taints": (Taint("dedicated", "NoSchedule", "gpu"),)},
        {"node_name": "elsewhere", "tolerations": (UNSCHEDULABLE_TOLERATION,)},
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match the requested node name",), "NodeName"),
        "a plugin that passes hands over to the next one",
    ),
    (
        {"taints": (Taint("dedicated", "NoSchedule", "gpu"),)},
        {"node_selector": {"disk": "ssd"}},
        # v1.36's wording (taint_toleration.go Filter, v1.36.2), the Handle's default version
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had untolerated taint(s)",), "TaintToleration"),
        "a taint is reported before a selector mismatch because TaintToleration runs first",
    ),
    (
        {},
        {"node_selector": {"disk": "ssd"}},
        Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match Pod's node affinity/selector",), "NodeAffinity"
        ),
        "the last real plugin can fail too",
    ),
]


@pytest.mark.parametrize(("node_kw", "pod_kw", "expected", "rule"), CHAIN_CASES, ids=[c[3] for c in CHAIN_CASES])
def test_filter_chain_stops_at_the_first_failure(node_kw, pod_kw, expected, rule):
    _, snapshot = cluster([make_node("n1", **node_kw)])
    fwk = framework(snapshot, filter=FILTER_ORDER)
    status = fwk.run_filter(CycleState(), make_pod("p", **pod_kw), snapshot.get("n1"))
    assert status == expected
    assert Spy.calls == []  # nothing after the failing plugin ran


def test_filter_chain_runs_every_plugin_when_all_pass():
    _, snapshot = cluster([make_node("n1")])
    fwk = framework(snapshot, filter=FILTER_ORDER)
    assert fwk.run_filter(CycleState(), make_pod("p"), snapshot.get("n1")) == SUCCESS
    assert Spy.calls == ["filter n1"]


def test_a_filter_error_aborts_the_cycle():
    _, snapshot = cluster([make_node("n1")])
    fwk = framework(snapshot, filter=("Broken",))
    with pytest.raises(SchedulingError):
        fwk.run_filter(CycleState(), make_pod("p"), snapshot.get("n1"))


# -- PreFilter ---------------------------------------------------------------------------


def test_pre_filter_skip_disables_that_plugins_filter():
    _, snapshot = cluster([make_node("n1")])
    fwk = framework(snapshot, preFilter=("AlwaysSkip", "NodePorts"), filter=("AlwaysSkip", "NodePorts"))
    state = CycleState()
    result, status = fwk.run_pre_filter(state, make_pod("p"), snapshot.node_info_list)
    assert (result, status) == (None, SUCCESS)
    assert state.skip_filter_plugins == {"AlwaysSkip", "NodePorts"}
    assert fwk.run_filter(state, make_pod("p"), snapshot.get("n1")) == SUCCESS


def test_a_pre_filter_rejection_ends_the_run_and_names_the_plugin():
    """NodeAffinity's conflicting metadata.name terms reject before later PreFilters run."""
    _, snapshot = cluster([make_node("n1"), make_node("n2")])
    fwk = framework(snapshot, preFilter=("NodeAffinity", "Spy"))
    term = NodeSelectorTerm((), (req("metadata.name", "In", "n1"), req("metadata.name", "In", "n2")))
    pod = make_pod("p", affinity=Affinity(node_affinity=NodeAffinity(required=NodeSelector((term,)))))
    result, status = fwk.run_pre_filter(CycleState(), pod, snapshot.node_info_list)
    assert result is None
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("pod affinity terms conflict",), "NodeAffinity")
    assert Spy.calls == []


def test_a_pre_filter_error_aborts_the_cycle():
    _, snapshot = cluster([make_node("n1")])
    fwk = framework(snapshot, preFilter=("Broken",))
    with pytest.raises(SchedulingError):
        fwk.run_pre_filter(CycleState(), make_pod("p"), snapshot.node_info_list)


NARROW_CASES = [
    (
        ("NodeAffinity",),
        {},
        pinned_to("n1", "n3"),
        frozenset({"n1", "n3"}),
        SUCCESS,
        "NodeAffinity matchFields metadata.name narrows the cycle to the named nodes",
    ),
    (
        ("NodeAffinity",),
        {},
        None,
        None,
        SUCCESS,
        "without a PreFilterResult every node stays in the cycle",
    ),
    (
        ("NodeAffinity", "PinToNode"),
        {"PinToNode": {"nodes": ["n2", "n3"]}},
        pinned_to("n1", "n2"),
        frozenset({"n2"}),
        SUCCESS,
        "PreFilterResults of several plugins are intersected",
    ),
    (
        ("NodeAffinity", "PinToNode"),
        {"PinToNode": {"nodes": ["n2"]}},
        pinned_to("n1"),
        frozenset(),
        Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("node(s) didn't satisfy plugin(s) [NodeAffinity PinToNode] simultaneously",),
        ),
        "disjoint PreFilterResults leave no node, naming every plugin that narrowed (Go %v of a slice)",
    ),
    (
        ("PinToNode",),
        {"PinToNode": {"nodes": []}},
        None,
        frozenset(),
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't satisfy plugin PinToNode",)),
        "a single plugin that allows no node is named on its own",
    ),
]


@pytest.mark.parametrize(
    ("plugins", "args", "affinity", "names", "expected", "rule"), NARROW_CASES, ids=[c[5] for c in NARROW_CASES]
)
def test_pre_filter_result_narrowing(plugins, args, affinity, names, expected, rule):
    _, snapshot = cluster([make_node("n1"), make_node("n2"), make_node("n3")])
    fwk = framework(snapshot, args=args, preFilter=plugins)
    result, status = fwk.run_pre_filter(CycleState(), make_pod("p", affinity=affinity), snapshot.node_info_list)
    assert (None if result is None else result.node_names) == names
    # The plugin a status names is bookkeeping for the queue; the code and message are upstream's.
    assert (status.code, status.reasons) == (expected.code, expected.reasons)


# -- filters with nominated pods ---------------------------------------------------------


def nominated_case(priority, *, same_pod=False, node="n1"):
    pod = make_pod("p", cpu="1500m", priority=10)
    other = pod if same_pod else make_pod("q", cpu="1", priority=priority)
    return pod, {node: [other]}


INSUFFICIENT = Status(Code.UNSCHEDULABLE, ("Insufficient cpu",), "NodeResourcesFit")

NOMINATED_CASES = [
    (*nominated_case(10), INSUFFICIENT, "a nominated pod of equal priority keeps its room"),
    (*nominated_case(20), INSUFFICIENT, "a nominated pod of higher priority keeps its room"),
    (*nominated_case(5), SUCCESS, "a lower-priority nominated pod is ignored"),
    (*nominated_case(10, same_pod=True), SUCCESS, "the pod's own nomination is not counted against it"),
    (*nominated_case(10, node="n2"), SUCCESS, "a pod nominated to another node does not matter"),
    (make_pod("p", cpu="1500m", priority=10), {}, SUCCESS, "with no nominated pods there is a single pass"),
]


@pytest.mark.parametrize(("pod", "nominated", "expected", "rule"), NOMINATED_CASES, ids=[c[3] for c in NOMINATED_CASES])
def test_filter_with_nominated_pods(pod, nominated, expected, rule):
    """A 2-cpu node: the 1.5-cpu pod fits alone, not next to a 1-cpu nominated pod."""
    _, snapshot = cluster([make_node("n1", cpu="2"), make_node("n2", cpu="2")])
    fwk = framework(snapshot, nominated=nominated, preFilter=("NodeResourcesFit",), filter=("NodeResourcesFit",))
    state = CycleState()
    fwk.run_pre_filter(state, pod, snapshot.node_info_list)
    node = snapshot.get("n1")
    assert fwk.run_filter_with_nominated_pods(state, pod, node) == expected
    assert node.pods == []
    assert node.requested == {}


COMPANION_CASES = [
    (1, {}, "a pod that needs a nominated pod must also fit without it"),
    (0, {"n1": [make_pod("companion", labels={"role": "companion"})]}, "a pod that fits in both passes passes"),
]


@pytest.mark.parametrize(("nominated_priority", "placed", "rule"), COMPANION_CASES, ids=[c[2] for c in COMPANION_CASES])
def test_second_pass_runs_without_the_nominated_pods(nominated_priority, placed, rule):
    companion = make_pod("nominated-companion", priority=nominated_priority, labels={"role": "companion"})
    _, snapshot = cluster([make_node("n1")], placed)
    fwk = framework(snapshot, nominated={"n1": [companion]}, filter=("NeedsCompanion",))
    status = fwk.run_filter_with_nominated_pods(CycleState(), make_pod("p"), snapshot.get("n1"))
    if placed:
        assert status == SUCCESS
    else:
        assert status == Status(Code.UNSCHEDULABLE, ("no companion on the node",), "NeedsCompanion")


def test_nominated_pods_reach_pre_filter_extensions_on_a_copy_of_the_state():
    """AddPod runs for each added nominated pod on the cloned state; the second pass sees the original."""
    _, snapshot = cluster([make_node("n1")])
    nominated = {"n1": [make_pod("q1", priority=5), make_pod("q2", priority=7), make_pod("low", priority=1)]}
    fwk = framework(snapshot, nominated=nominated, preFilter=("CountNominated",), filter=("CountNominated",))
    state = CycleState()
    pod = make_pod("p", priority=5)
    fwk.run_pre_filter(state, pod, snapshot.node_info_list)
    assert fwk.run_filter_with_nominated_pods(state, pod, snapshot.get("n1")) == SUCCESS
    assert CountNominated.seen == [2, 0]
    assert state.read("count").added == 0


# -- scoring -----------------------------------------------------------------------------


def scoring_world():
    prefer = Taint("spot", "PreferNoSchedule")
    nodes = [
        make_node("n1", labels={"disk": "ssd"}),
        make_node("n2", labels={"disk": "hdd"}, taints=(prefer,)),
        make_node("n3", labels={"disk": "ssd", "gpu": "yes"}, taints=(prefer, Taint("old", "PreferNoSchedule"))),
    ]
    terms = (
        PreferredSchedulingTerm(2, NodeSelectorTerm((req("disk", "In", "ssd"),))),
        PreferredSchedulingTerm(6, NodeSelectorTerm((req("gpu", "Exists"),))),
    )
    pod = make_pod("p", affinity=Affinity(node_affinity=NodeAffinity(preferred=terms)))
    return cluster(nodes)[1], pod


def run_scoring(fwk, pod, snapshot):
    state = CycleState()
    fwk.run_pre_score(state, pod, snapshot.node_info_list)
    return fwk.run_score(state, pod, snapshot.node_info_list)


def test_scores_are_normalized_then_weighted_and_summed():
    """TaintToleration counts [0,1,2] → [100,50,0] ×3; NodeAffinity weights [2,0,8] → [25,0,100] ×2."""
    snapshot, pod = scoring_world()
    points = ("TaintToleration", "NodeAffinity")
    fwk = framework(snapshot, weights={"TaintToleration": 3, "NodeAffinity": 2}, preScore=points, score=points)
    result = run_scoring(fwk, pod, snapshot)
    assert result.nodes == ["n1", "n2", "n3"]
    assert [(p.plugin, p.weight, p.raw, p.normalized) for p in result.plugins] == [
        ("TaintToleration", 3, [0, 1, 2], [100, 50, 0]),
        ("NodeAffinity", 2, [2, 0, 8], [25, 0, 100]),
    ]
    assert result.totals == [3 * 100 + 2 * 25, 3 * 50 + 2 * 0, 3 * 0 + 2 * 100]


def test_a_weight_of_zero_counts_as_one():
    snapshot, pod = scoring_world()
    fwk = framework(snapshot, weights={"TaintToleration": 0}, preScore=("TaintToleration",), score=("TaintToleration",))
    assert run_scoring(fwk, pod, snapshot).totals == [100, 50, 0]


def test_a_plugin_that_skips_pre_score_is_left_out_of_scoring():
    """NodeAffinity PreScore Skips a pod without preferred terms."""
    snapshot, _ = scoring_world()
    points = ("TaintToleration", "NodeAffinity")
    fwk = framework(snapshot, weights={"TaintToleration": 3, "NodeAffinity": 2}, preScore=points, score=points)
    result = run_scoring(fwk, make_pod("plain"), snapshot)
    assert [p.plugin for p in result.plugins] == ["TaintToleration"]
    assert result.totals == [300, 150, 0]


def test_without_score_plugins_every_node_scores_one():
    snapshot, pod = scoring_world()
    fwk = framework(snapshot)
    assert run_scoring(fwk, pod, snapshot).totals == [1, 1, 1]


def test_a_score_outside_0_to_100_is_an_error():
    snapshot, pod = scoring_world()
    fwk = framework(snapshot, score=("OutOfRange",))
    with pytest.raises(SchedulingError):
        run_scoring(fwk, pod, snapshot)


def test_a_plugin_at_an_extension_point_it_does_not_implement_is_refused():
    snapshot, _ = scoring_world()
    with pytest.raises(ValueError):
        framework(snapshot, score=("NodeName",))
