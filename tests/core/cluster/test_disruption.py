"""PodDisruptionBudget accounting (FIDELITY §7 "PDB accounting").

Two halves, as upstream:
- the disruption controller's status (``pkg/controller/disruption/disruption.go``:
  ``getExpectedPodCount``, ``countHealthyPods``, ``updatePdbStatus``), modelled by
  ``scheduler_core.cluster.disruption.update_pdb_status``;
- the scheduler's ``filterPodsWithPDBViolation`` (``framework/preemption/preemption.go``),
  which only reads ``status.disruptionsAllowed`` and spends it pod by pod.
"""

from __future__ import annotations

import pytest

from scheduler_core.api.model import LabelSelector, LabelSelectorRequirement, Pod, PodDisruptionBudget
from scheduler_core.cluster.disruption import scaled_value, update_pdb_status
from scheduler_core.scheduler.plugins.default_preemption import filter_pods_with_pdb_violation

APP_A = LabelSelector(match_labels=(("app", "a"),))


def running(name: str, labels: dict[str, str] | None = None, namespace: str = "default", **kwargs) -> Pod:
    """A bound, running pod (healthy unless it is terminating)."""
    return Pod(
        name=name,
        namespace=namespace,
        labels=dict({"app": "a"} if labels is None else labels),
        node_name="n1",
        phase="Running",
        **kwargs,
    )


def pending(name: str, labels: dict[str, str] | None = None) -> Pod:
    return Pod(name=name, labels=dict({"app": "a"} if labels is None else labels))


def terminating(name: str) -> Pod:
    return running(name, deletion_timestamp_ms=0)


def three_running() -> list[Pod]:
    return [running(f"p{i}") for i in range(3)]


# -- intstr.GetScaledValueFromIntOrPercent -----------------------------------------------


@pytest.mark.parametrize(
    ("value", "total", "round_up", "expected"),
    [
        (2, 10, True, 2),
        ("50%", 3, True, 2),
        ("50%", 3, False, 1),
        ("34%", 3, True, 2),
        ("10%", 3, True, 1),
        ("100%", 7, True, 7),
        ("0%", 7, True, 0),
        ("50%", 0, True, 0),
    ],
    ids=[
        "an integer is used as is whatever the total",
        "50 percent of 3 rounds 1.5 up to 2",
        "50 percent of 3 rounds down to 1 when asked to",
        "34 percent of 3 rounds 1.02 up to 2",
        "10 percent of 3 rounds 0.3 up to 1",
        "100 percent is the whole total",
        "0 percent is zero",
        "a percentage of nothing is zero",
    ],
)
def test_scaled_value(value, total, round_up, expected):
    assert scaled_value(value, total, round_up) == expected


# -- the disruption controller's status ----------------------------------------------------


@pytest.mark.parametrize(
    ("pdb_kwargs", "pods", "allowed"),
    [
        ({"min_available": 2}, three_running(), 1),
        ({"min_available": 3}, three_running(), 0),
        ({"min_available": 5}, three_running(), 0),
        ({"min_available": 0}, three_running(), 3),
        ({"min_available": "50%"}, three_running(), 1),
        ({"min_available": "50%"}, [running(f"p{i}") for i in range(4)], 2),
        ({"min_available": "100%"}, three_running(), 0),
        ({"max_unavailable": 1}, three_running(), 1),
        ({"max_unavailable": 0}, three_running(), 0),
        ({"max_unavailable": 5}, three_running(), 3),
        ({"max_unavailable": "34%"}, three_running(), 2),
        ({"max_unavailable": "10%"}, three_running(), 1),
        ({}, three_running(), 0),
        ({"min_available": 2}, [*three_running()[:2], terminating("t")], 0),
        ({"min_available": 1}, [running("p0"), pending("q0"), pending("q1")], 0),
        (
            {"min_available": 1},
            [running("p0"), running("p1"), *(running(f"o{i}", namespace="other") for i in range(3))],
            1,
        ),
        ({"min_available": 1}, [running("p0"), running("p1"), *(running(f"b{i}", {"app": "b"}) for i in range(3))], 1),
        ({"min_available": 1}, [running("p0"), running("p1"), running("u", {})], 1),
        ({"min_available": 1}, [], 0),
    ],
    ids=[
        "minAvailable 2 of 3 healthy allows 1 disruption",
        "minAvailable equal to the healthy count allows none",
        "minAvailable above the healthy count allows none, never a negative number",
        "minAvailable 0 allows every healthy pod to go",
        "minAvailable 50 percent of 3 rounds up to 2 so 1 may go",
        "minAvailable 50 percent of 4 is exactly 2 so 2 may go",
        "minAvailable 100 percent allows none",
        "maxUnavailable 1 of 3 allows 1",
        "maxUnavailable 0 allows none",
        "maxUnavailable above the pod count allows every healthy pod, desired never below 0",
        "maxUnavailable 34 percent of 3 rounds up to 2 so 2 may go",
        "maxUnavailable 10 percent of 3 rounds up to 1",
        "a PDB with neither minAvailable nor maxUnavailable allows nothing",
        "a terminating pod is not healthy",
        "a pending pod not yet bound is not healthy",
        "pods in another namespace are ignored",
        "pods whose labels do not match are ignored",
        "a pod without labels is ignored",
        "a PDB that selects no pod allows nothing",
    ],
)
def test_disruptions_allowed(pdb_kwargs, pods, allowed):
    pdb = PodDisruptionBudget(name="pdb", selector=APP_A, **pdb_kwargs)
    update_pdb_status([pdb], pods)
    assert pdb.disruptions_allowed == allowed


@pytest.mark.parametrize(
    ("pdb_kwargs", "pods", "status"),
    [
        ({"min_available": 2}, three_running(), (3, 3, 2, 1)),
        ({"min_available": "50%"}, three_running(), (3, 3, 2, 1)),
        ({"max_unavailable": "34%"}, three_running(), (3, 3, 1, 2)),
        ({"max_unavailable": 1}, [running("p0"), running("p1"), pending("q0")], (3, 2, 2, 0)),
        ({"min_available": 1}, [running("p0"), pending("q0"), pending("q1")], (3, 1, 1, 0)),
    ],
    ids=[
        "minAvailable 2: expected 3, healthy 3, desired 2, allowed 1",
        "minAvailable 50 percent: desired is 1.5 rounded up",
        "maxUnavailable 34 percent: desired is 3 minus 1.02 rounded up",
        "a pending pod is expected but not healthy",
        "two pending pods leave one healthy pod that must stay",
    ],
)
def test_status_fields(pdb_kwargs, pods, status):
    pdb = PodDisruptionBudget(name="pdb", selector=APP_A, **pdb_kwargs)
    update_pdb_status([pdb], pods)
    assert (pdb.expected_pods, pdb.current_healthy, pdb.desired_healthy, pdb.disruptions_allowed) == status


def test_each_pdb_gets_its_own_status():
    pods = [running("a0"), running("a1"), running("b0", {"app": "b"})]
    pdb_a = PodDisruptionBudget(name="a", selector=APP_A, min_available=1)
    pdb_b = PodDisruptionBudget(name="b", selector=LabelSelector(match_labels=(("app", "b"),)), min_available=1)
    update_pdb_status([pdb_a, pdb_b], pods)
    assert (pdb_a.disruptions_allowed, pdb_b.disruptions_allowed) == (1, 0)


def test_a_nil_selector_selects_no_pod():
    """policy/v1: "A null selector will match no pods" (LabelSelectorAsSelector(nil) = Nothing)."""
    pdb = PodDisruptionBudget(name="pdb", selector=None, min_available=0)
    update_pdb_status([pdb], three_running())
    assert (pdb.expected_pods, pdb.current_healthy, pdb.disruptions_allowed) == (0, 0, 0)


def test_the_disruption_controller_counts_every_pod_of_the_namespace_for_an_empty_selector():
    """policy/v1 PodDisruptionBudgetSpec.selector: "an empty ({}) selector will select all pods
    within the namespace". disruption.go getPodsForPdb (≈v1.21+) lists
    ``Pods(ns).List(LabelSelectorAsSelector({}))`` = Everything; the ``if sel.Empty() return []``
    early exit belonged to the policy/v1beta1 era. Only the *scheduler* ignores empty
    selectors (see test_an_empty_selector_never_makes_a_pod_violate below)."""
    pods = [*three_running(), running("other-labels", {"tier": "web"}), running("x", namespace="other")]
    pdb = PodDisruptionBudget(name="pdb", selector=LabelSelector(), min_available=0)
    update_pdb_status([pdb], pods)
    assert (pdb.expected_pods, pdb.current_healthy, pdb.disruptions_allowed) == (4, 4, 4)


def test_status_is_recomputed_from_scratch_each_time():
    pdb = PodDisruptionBudget(name="pdb", selector=APP_A, min_available=1)
    pods = three_running()
    update_pdb_status([pdb], pods)
    assert pdb.disruptions_allowed == 2
    pods[0].deletion_timestamp_ms = 5
    update_pdb_status([pdb], pods)
    assert pdb.disruptions_allowed == 1


# -- the scheduler's filterPodsWithPDBViolation --------------------------------------------


def pdb(name: str, allowed: int, selector: LabelSelector | None = APP_A, namespace: str = "default"):
    return PodDisruptionBudget(name=name, namespace=namespace, selector=selector, disruptions_allowed=allowed)


WEB = LabelSelector(match_labels=(("tier", "web"),))


def names(pods: list[Pod]) -> list[str]:
    return [p.name for p in pods]


@pytest.mark.parametrize(
    ("pods", "pdbs", "violating", "non_violating"),
    [
        ([running("p1"), running("p2")], [pdb("a", 1)], ["p2"], ["p1"]),
        ([running("p1"), running("p2"), running("p3")], [pdb("a", 2)], ["p3"], ["p1", "p2"]),
        ([running("p1"), running("p2")], [pdb("a", 0)], ["p1", "p2"], []),
        ([running("p1"), running("p2")], [pdb("a", 5)], [], ["p1", "p2"]),
        ([running("p1"), running("p2"), running("p3")], [pdb("a", 1)], ["p2", "p3"], ["p1"]),
        (
            [running("u", {}), running("l", {"app": "b"})],
            [pdb("a", 0, LabelSelector(match_expressions=(LabelSelectorRequirement("x", "DoesNotExist"),)))],
            ["l"],
            ["u"],
        ),
        ([running("p1", {"app": "a", "tier": "web"})], [pdb("a", 5), pdb("w", 0, WEB)], ["p1"], []),
        ([running("p1", {"app": "a", "tier": "web"})], [pdb("a", 1), pdb("w", 1, WEB)], [], ["p1"]),
        (
            [running("p1", {"app": "a", "tier": "web"}), running("p2")],
            [pdb("a", 1), pdb("w", 1, WEB)],
            ["p2"],
            ["p1"],
        ),
        (
            [running("p1", {"app": "a", "tier": "web"}), running("p2", {"tier": "web"})],
            [pdb("a", 0), pdb("w", 1, WEB)],
            ["p1", "p2"],
            [],
        ),
        ([running("p1", namespace="other")], [pdb("a", 0)], [], ["p1"]),
        ([running("p1")], [pdb("a", 0, LabelSelector())], [], ["p1"]),
        ([running("p1")], [pdb("a", 0, None)], [], ["p1"]),
        ([running("p1", {"app": "b"})], [pdb("a", 0)], [], ["p1"]),
        ([running("p1"), running("p2")], [], [], ["p1", "p2"]),
    ],
    ids=[
        "the allowance is spent in pod order so the second pod over a budget of 1 violates",
        "a budget of 2 covers the first two pods and the third violates",
        "a budget of 0 makes every matching pod violate",
        "a budget larger than the pods leaves none violating",
        "once a budget is negative every further matching pod violates",
        "a pod without labels never violates even if the selector would match it",
        "a pod matching two PDBs violates when either budget is exhausted",
        "a pod matching two PDBs with room in both does not violate",
        "a pod matching two PDBs spends both budgets so a later pod finds one exhausted",
        "a pod violating one PDB still spends the other PDB's allowance",
        "a PDB in another namespace is ignored",
        "an empty selector never makes a pod violate",
        "a nil selector never makes a pod violate",
        "a pod whose labels do not match is not covered",
        "with no PDBs nothing violates",
    ],
)
def test_filter_pods_with_pdb_violation(pods, pdbs, violating, non_violating):
    got_violating, got_non_violating = filter_pods_with_pdb_violation(pods, pdbs)
    assert (names(got_violating), names(got_non_violating)) == (violating, non_violating)


def test_filtering_does_not_spend_the_pdbs_own_status():
    budget = pdb("a", 1)
    filter_pods_with_pdb_violation([running("p1"), running("p2")], [budget])
    assert budget.disruptions_allowed == 1


def test_an_empty_selector_never_makes_a_pod_violate():
    """preemption.go: "A PDB with a nil or empty selector matches nothing" — even though the
    disruption controller counts every pod of the namespace for it."""
    budget = pdb("all", 0, LabelSelector())
    violating, non_violating = filter_pods_with_pdb_violation([running("p1"), running("p2", {"x": "y"})], [budget])
    assert (names(violating), names(non_violating)) == ([], ["p1", "p2"])
