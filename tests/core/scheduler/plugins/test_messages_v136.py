"""What a learner reads under v1.36: filter statuses and the FailedScheduling message.

Sources (v1.36.2): plugins/noderesources/fit.go fitsRequest (InsufficientResource.Unresolvable:
a request larger than the node's whole allocatable) and Filter (UnschedulableAndUnresolvable
then); plugins/tainttoleration/taint_toleration.go Filter ("node(s) had untolerated taint(s)");
plugins/dynamicresources/dynamicresources.go PreFilter / PostFilter ("no new claims to
deallocate"); framework/types.go FitError.Error (" %v" join of the PostFilter message);
framework/runtime/framework.go RunPostFilterPlugins (reasons of every plugin that did not succeed).
The end-to-end messages are ones real v1.36 clusters print (kubectl describe / get events).
"""

from __future__ import annotations

import pytest

from scheduler_core.api.model import NO_SCHEDULE, Taint
from scheduler_core.scheduler.framework import Code, CycleState, FitError, Handle, Status
from scheduler_core.scheduler.framework.node_table import node_table
from scheduler_core.scheduler.plugins.dynamic_resources import MSG_NO_NEW_CLAIMS, DynamicResources
from scheduler_core.scheduler.plugins.node_resources_fit import NodeResourcesFit
from scheduler_core.scheduler.plugins.taint_toleration import TaintToleration
from scheduler_core.scheduler.profile import default_profile
from scheduler_core.scheduler.versions import V1_31, V1_36, gate_defaults
from tests.core.builders import cluster, framework_for, make_node, make_pod, run_filter

U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def handle(version: str) -> Handle:
    h = Handle()
    h.kubernetes_version = version
    h.feature_gates = gate_defaults(version)
    return h


def fit_status(version: str, pod_cpu: str, node_cpu: str, placed_cpu: str | None, pods: int = 110, memory=None):
    node = make_node("n", cpu=node_cpu, pods=pods)
    placed = {"n": [make_pod("old", cpu=placed_cpu)]} if placed_cpu else {}
    _, snapshot = cluster([node], placed)
    plugin = NodeResourcesFit(handle(version))
    return run_filter(plugin, make_pod("p", cpu=pod_cpu, memory=memory), snapshot)["n"]


# -- NodeResourcesFit: beyond allocatable is Unresolvable (fit.go fitsRequest) --------------


@pytest.mark.parametrize(
    ("version", "pod_cpu", "node_cpu", "placed_cpu", "pods", "code", "reasons"),
    [
        (V1_36, "5", "4", None, 110, UU, ("Insufficient cpu",)),  # 5 > allocatable 4
        (V1_36, "3", "4", "2", 110, U, ("Insufficient cpu",)),  # 3 > free 2, fits an empty node
        (V1_36, "4", "4", "1", 110, U, ("Insufficient cpu",)),  # equal to allocatable: resolvable
        (V1_36, "1", "4", "1", 1, U, ("Too many pods",)),  # never Unresolvable
        (V1_36, "5", "4", "1", 1, UU, ("Too many pods", "Insufficient cpu")),
        (V1_31, "5", "4", None, 110, U, ("Insufficient cpu",)),  # v1.31: always Unschedulable
        (V1_31, "5", "4", "1", 1, U, ("Too many pods", "Insufficient cpu")),
    ],
)
def test_fit_filter_code(version, pod_cpu, node_cpu, placed_cpu, pods, code, reasons) -> None:
    status = fit_status(version, pod_cpu, node_cpu, placed_cpu, pods)
    assert (status.code, status.reasons) == (code, reasons)


def test_fit_one_resource_beyond_allocatable_makes_the_whole_status_unresolvable() -> None:
    """Filter keeps every reason; one Unresolvable InsufficientResource sets the code."""
    status = fit_status(V1_36, "3", "4", "2", memory="16Gi")  # cpu: > free only; memory: > 8Gi allocatable
    assert status.code == UU
    assert status.reasons == ("Insufficient cpu", "Insufficient memory")


@pytest.mark.parametrize("version", [V1_31, V1_36])
def test_fit_batch_form_says_what_filter_says(version: str) -> None:
    """filter_nodes (the fast scheduler's) gives each node the same status as filter."""
    nodes = [make_node(f"n{i}", cpu=c, pods=p) for i, (c, p) in enumerate([("4", 110), ("2", 110), ("8", 1), ("1", 1)])]
    placed = {"n0": [make_pod("a", cpu="2")], "n2": [make_pod("b", cpu="1")], "n3": [make_pod("c", cpu="1")]}
    _, snapshot = cluster(nodes, placed)
    h = handle(version)
    fwk = framework_for(snapshot, default_profile(version=version), h)
    plugin = fwk.plugins["NodeResourcesFit"]
    pod = make_pod("p", cpu="3")
    state = CycleState()
    plugin.pre_filter(state, pod, snapshot.node_info_list)
    table = node_table(h)
    assert table is not None
    assert plugin.prepare_filter_nodes(state, pod, table)
    codes, statuses = plugin.filter_nodes(state, pod, snapshot.node_info_list)
    assert type(statuses).__name__ == "_MaskStatuses"  # the array form ran, not filter_each
    batch = [Status() if int(c) == 0 else statuses[int(c) - 1] for c in codes]
    plain = [plugin.filter(state, pod, ni) for ni in snapshot.node_info_list]
    assert [(s.code, s.reasons) for s in batch] == [(s.code, s.reasons) for s in plain]
    expected_n1 = UU if version == V1_36 else U  # 3 cpu > allocatable 2
    assert plain[1].code == expected_n1
    assert plain[0].code == U


# -- TaintToleration (taint_toleration.go Filter) --------------------------------------------


@pytest.mark.parametrize(
    ("version", "reason"),
    [(V1_36, "node(s) had untolerated taint(s)"), (V1_31, "node(s) had untolerated taint {dedicated: infra}")],
)
def test_taint_message(version: str, reason: str) -> None:
    node = make_node("n", taints=(Taint(key="dedicated", value="infra", effect=NO_SCHEDULE),))
    _, snapshot = cluster([node])
    status = run_filter(TaintToleration(handle(version)), make_pod("p"), snapshot)["n"]
    assert (status.code, status.reasons) == (UU, (reason,))


# -- DynamicResources for a pod without claims (dynamicresources.go) -------------------------


def test_dynamic_resources_skips_a_pod_without_claims() -> None:
    plugin = DynamicResources(handle(V1_36))
    _, snapshot = cluster([make_node("n")])
    pod = make_pod("p")
    _, status = plugin.pre_filter(CycleState(), pod, snapshot.node_info_list)
    assert status.code == Code.SKIP
    result, status = plugin.post_filter(CycleState(), pod, {})
    assert result is None
    assert (status.code, status.reasons) == (U, (MSG_NO_NEW_CLAIMS,))
    assert plugin.score(CycleState(), pod, snapshot.node_info_list[0]) == 0


def test_run_post_filter_joins_both_plugins_reasons() -> None:
    """RunPostFilterPlugins: DynamicResources' reason, then DefaultPreemption's."""
    _, snapshot = cluster([make_node("n", cpu="1")])
    fwk = framework_for(snapshot, default_profile(version=V1_36), handle(V1_36))
    pod = make_pod("p", cpu="2")
    state = CycleState()
    fwk.run_pre_filter(state, pod, snapshot.node_info_list)
    statuses = {"n": fwk.run_filter(state, pod, snapshot.node_info_list[0])}
    assert "DynamicResources" in state.skip_filter_plugins
    _, status = fwk.run_post_filter(state, pod, statuses)
    assert status.message() == (
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


# -- FitError.Error (framework/types.go) ------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "post", "expected"),
    [
        (
            V1_36,
            "no new claims to deallocate",
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate",
        ),
        (
            V1_31,
            "no new claims to deallocate",
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate.",
        ),
        (V1_36, "preemption: x.", "0/1 nodes are available: 1 Insufficient cpu. preemption: x."),
        (V1_31, "preemption: x.", "0/1 nodes are available: 1 Insufficient cpu. preemption: x."),
    ],
)
def test_fit_error_join(version: str, post: str, expected: str) -> None:
    """v1.36 appends " %v" as is; the v1.31 model ends the message with one period."""
    err = FitError(1, {"n": Status.unschedulable("Insufficient cpu")}, post_filter_msg=post, kubernetes_version=version)
    assert err.message() == expected
