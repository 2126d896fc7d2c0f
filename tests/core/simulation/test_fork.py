"""What if? Forking a run at one of its events with one action (docs/forks.md).

Most cases fork ``mixed-small`` under the default policy (seed 1). Its parent trace, by hand:
events 0–43 set the cluster up at t=0; ``checkout`` is scheduled to node-b2 (cycle_start 44,
bound 49, running 50); then ``web-0`` is scheduled from event 51 and lands on node-a2 (selected
54). So event 50 is the end of a step, just before web-0's cycle: the fork point used below.

The run is pinned to Kubernetes v1.31: those nodes are v1.31's seeded random pick among equal
scores (selectHost), where v1.36 takes the first of its score heap. Forking itself does not
depend on the version; test_fork_version_v136.py forks a run at the default version (v1.36).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from scheduler_core.documents.scenario import load_scenario_file
from scheduler_core.results.replay import narrate
from scheduler_core.scheduler.framework import ActionType, ClusterEvent
from scheduler_core.scheduler.plugins.priority_sort import PrioritySort
from scheduler_core.scheduler.policy import builtin_policy
from scheduler_core.scheduler.queue.scheduling_queue import BACKOFF, SchedulingQueue
from scheduler_core.simulation.fork import ForkAction, ForkError, advance_to, fork_from, fork_simulation
from scheduler_core.simulation.simulation import Simulation
from scheduler_core.trace.stream import dumps
from tests.core.builders import make_pod

SCENARIOS = Path(__file__).parents[3] / "scheduler_core" / "scenarios"
SEED = 1
BEFORE_WEB_0 = 50  # pod_running of checkout; web-0's cycle starts at 51


def policy(name="default"):
    """A built-in policy at v1.31, the version this module's hand-traced run is (see above)."""
    return builtin_policy(name, kubernetes_version="v1.31")


def scenario(name="mixed-small"):
    return load_scenario_file(SCENARIOS / f"{name}.yaml")


@pytest.fixture(scope="module")
def parent():
    sim = Simulation(scenario(), policy("default"), SEED)
    sim.run()
    return sim


def fork(action, at_seq=BEFORE_WEB_0, continue_policy=None, name="mixed-small", run=True):
    sim = fork_simulation(scenario(name), policy("default"), SEED, at_seq, action, continue_policy)
    if run:
        sim.run()
    return sim


def selected(sim, pod):
    """The nodes ``pod`` was selected for, in order."""
    return [e["node"] for e in sim.trace.events if e["type"] == "selected" and e["pod"] == f"default/{pod}"]


# -- the fork point --------------------------------------------------------------------------


def test_the_parent_trace_is_as_the_module_docstring_says(parent):
    events = parent.trace.events
    assert (events[49]["type"], events[49]["pod"], events[49]["node"]) == ("bound", "default/checkout", "node-b2")
    assert (events[51]["type"], events[51]["pod"]) == ("cycle_start", "default/web-0")
    assert selected(parent, "web-0") == ["node-a2"]


@pytest.mark.parametrize(
    "action",
    [
        {"action": "cordon", "target": "node-a2"},
        {"action": "drain", "target": "node-b2"},
        {"action": "removeNode", "target": "node-b2"},
        {"action": "addNodes", "target": "node-b3", "count": 2},
        {"action": "deletePod", "target": "checkout"},
        {"action": "switchPolicy", "policy": "bin-packing"},
    ],
    ids=lambda a: a["action"],
)
def test_a_fork_shares_the_parent_trace_byte_for_byte_up_to_the_fork_point(parent, action):
    continue_policy = policy("bin-packing") if action["action"] == "switchPolicy" else None
    sim = fork(action, continue_policy=continue_policy)
    n = BEFORE_WEB_0 + 1
    assert dumps(sim.trace.events[:n]) == dumps(parent.trace.events[:n])
    assert sim.trace.events[n]["type"] == "action"
    assert sim.trace.events[n]["fork_seq"] == BEFORE_WEB_0


def test_the_fork_point_is_the_end_of_the_step_that_emitted_the_event(parent):
    """Event 45 is the middle of checkout's cycle: the fork acts after the whole cycle (48)."""
    sim = fork({"action": "cordon", "target": "node-a2"}, at_seq=45, run=False)
    assert dumps(sim.trace.events[:49]) == dumps(parent.trace.events[:49])
    assert parent.trace.events[48]["type"] == "assumed"
    assert sim.trace.events[49]["type"] == "action"


def test_a_fork_during_set_up_acts_before_the_first_step(parent):
    sim = fork({"action": "cordon", "target": "node-a2"}, at_seq=3, run=False)
    assert dumps(sim.trace.events[:44]) == dumps(parent.trace.events[:44])
    assert sim.steps == 0
    assert sim.trace.events[44]["what_if"] == "cordon node-a2"


def test_the_fork_is_marked_by_an_action_event_the_narration_shows():
    sim = fork({"action": "cordon", "target": "node-a2"}, run=False)
    marker = sim.trace.events[BEFORE_WEB_0 + 1]
    assert marker == {
        "seq": 51,
        "t_ms": 0,
        "cycle": 1,
        "type": "action",
        "action": "cordon",
        "target": "node/node-a2",
        "line": 0,
        "fork_seq": 50,
        "what_if": "cordon node-a2",
    }
    assert narrate(marker) == "What if? cordon node-a2 (forked at event 50)."


def test_the_same_fork_gives_the_same_trace_twice():
    action = {"action": "addNodes", "target": "node-a1", "count": 3}
    assert dumps(fork(action).trace.events) == dumps(fork(action).trace.events)


def test_forking_at_the_last_event_forks_just_before_the_run_ended(parent):
    """The closing node_usage and run_finished only record the end: a fork there acts before them."""
    last = parent.trace.events[-1]["seq"]
    assert parent.trace.events[-2]["type"] == "node_usage"
    sim = fork({"action": "addNodes", "target": "node-a1", "count": 1}, at_seq=last)
    closing = last - 1
    assert dumps(sim.trace.events[:closing]) == dumps(parent.trace.events[:closing])
    assert sim.trace.events[closing]["type"] == "action"
    assert sim.trace.events[-1]["type"] == "run_finished"


def test_forking_past_the_last_event_names_the_seq(parent):
    last = parent.trace.events[-1]["seq"]
    with pytest.raises(ForkError) as err:
        fork({"action": "cordon", "target": "node-a2"}, at_seq=last + 1, run=False)
    assert err.value.field == "seq"
    assert str(err.value) == f"seq: event {last + 1} is past the end of the run (its last event is {last})"


def test_a_negative_seq_is_refused():
    with pytest.raises(ForkError, match="^seq: must be 0 or more"):
        fork({"action": "cordon", "target": "node-a2"}, at_seq=-1, run=False)


def test_advance_to_stops_at_the_end_of_the_step(parent):
    sim = Simulation(scenario(), policy("default"), SEED)
    advance_to(sim, 52)
    assert sim.trace.seq == 56  # web-0's cycle emitted 51..55
    assert dumps(sim.trace.events) == dumps(parent.trace.events[:56])


# -- what each action does -------------------------------------------------------------------


def test_cordoning_the_node_the_parent_chose_sends_the_pod_elsewhere():
    sim = fork({"action": "cordon", "target": "node-a2"})
    assert selected(sim, "web-0") == ["node-a1"]
    assert not any(e["type"] == "bound" and e["node"] == "node-a2" for e in sim.trace.events)


def test_draining_a_node_evicts_its_pod_and_cordons_it():
    sim = fork({"action": "drain", "target": "node-b2"})
    after = sim.trace.events[BEFORE_WEB_0 + 1 :]
    assert [(e["type"], e.get("pod")) for e in after[1:4]] == [
        ("node_updated", None),
        ("eviction", "default/checkout"),
        ("pod_deletion_started", "default/checkout"),
    ]
    assert not any(e["type"] == "bound" and e["node"] == "node-b2" for e in after)


def test_removing_a_node_leaves_its_pods_to_podgc():
    sim = fork({"action": "removeNode", "target": "node-b2"})
    after = sim.trace.events[BEFORE_WEB_0 + 2 :]
    assert after[0]["type"] == "node_removed"
    # checkout stays bound to the missing node until PodGC's pass after its 40 s quarantine
    (gone,) = [e for e in after if e["type"] == "pod_deleted" and e["pod"] == "default/checkout"]
    assert (gone["node"], gone["reason"]) == ("node-b2", "PodGC: node no longer exists")
    removed_at = after[0]["t_ms"]
    first_pass = -(-removed_at // 20_000) * 20_000
    assert gone["t_ms"] == first_pass + 40_000
    assert "node-b2" not in {row["node"] for row in sim.summary().nodes}


def test_adding_nodes_copies_the_template_under_new_names():
    sim = fork({"action": "addNodes", "target": "node-b3", "count": 2}, run=False)
    added = [e for e in sim.trace.events if e["type"] == "node_added"]
    original = next(e for e in added if e["node"] == "node-b3")
    copies = [e for e in added if e["node"].startswith("node-b3-copy-")]
    assert [e["node"] for e in copies] == ["node-b3-copy-1", "node-b3-copy-2"]
    for copy in copies:
        assert copy["allocatable"] == original["allocatable"]
        assert copy["taints"] == original["taints"]
        assert copy["labels"] == {**original["labels"], "kubernetes.io/hostname": copy["node"]}
        assert copy["unschedulable"] is False


def test_scaling_a_deployment_up_creates_pods():
    """deployment-rolling-update: api has 4 replicas; at event 20 it is scaled to 6."""
    parent = Simulation(scenario("deployment-rolling-update"), policy("default"), None)
    parent.run()
    sim = fork_simulation(
        scenario("deployment-rolling-update"),
        policy("default"),
        parent.seed,
        20,
        {"action": "scale", "target": "deployment/api", "replicas": 6},
    )
    sim.run()
    assert parent.summary().bound == 4
    assert sim.summary().bound == 6
    scaled = [e for e in sim.trace.events if e["type"] == "workload_status" and e["replicas"] == 6]
    assert scaled


def test_deleting_a_pod_deletes_it():
    sim = fork({"action": "deletePod", "target": "default/checkout"})
    after = sim.trace.events[BEFORE_WEB_0 + 2 :]
    assert (after[0]["type"], after[0]["pod"]) == ("pod_deletion_started", "default/checkout")
    assert any(e["type"] == "pod_deleted" and e["pod"] == "default/checkout" for e in after)
    assert "default/checkout" not in {p.pod for p in sim.summary().pods}


def test_switching_to_bin_packing_puts_the_next_pod_beside_the_only_busy_node():
    """Under MostAllocated web-0 joins checkout on node-b2, the only node with anything on it."""
    sim = fork({"action": "switchPolicy", "policy": "bin-packing"}, continue_policy=policy("bin-packing"))
    assert selected(sim, "web-0") == ["node-b2"]
    assert sim.policy.name == "bin-packing"
    assert sim.summary().policy == "bin-packing"


def test_a_switch_keeps_every_queued_pod_where_it_was(parent):
    """At event 166 big-report waits in the unschedulable lane; the switch leaves it there."""
    sim = Simulation(scenario(), policy("default"), SEED)
    advance_to(sim, 166)
    before = {p.key: sim.queue.where(p) for p in sim.pods.values()}
    assert before["default/big-report"] == "unschedulable"
    sim.switch_policy(policy("bin-packing"))
    assert {p.key: sim.queue.where(p) for p in sim.pods.values()} == before


def test_reconfiguring_the_queue_retimes_backoff_with_the_new_bounds():
    q = SchedulingQueue(PrioritySort(None).less)  # type: ignore[arg-type]
    q.add(make_pod("p"))
    info = q.pop()
    q.add_unschedulable_if_not_present(info, -1)  # no rejector: straight to backoffQ (1 s)
    assert q.where(info.pod) == BACKOFF
    assert q.next_backoff_flush_ms() == 1_000
    events = {"NodeResourcesFit": (ClusterEvent("Node", ActionType.ADD, "NodeAdd"),)}
    q.reconfigure(PrioritySort(None).less, initial_backoff_ms=5_000, max_backoff_ms=20_000, events_by_plugin=events)  # type: ignore[arg-type]
    assert q.where(info.pod) == BACKOFF
    assert q.next_backoff_flush_ms() == 5_000
    assert q.events_by_plugin == events


def test_switching_between_a_priority_queue_and_the_legacy_fifo_is_refused():
    with pytest.raises(ForkError) as err:
        fork({"action": "switchPolicy", "policy": "legacy-v1.5"}, continue_policy=policy("legacy-v1.5"))
    assert err.value.field == "policy"
    assert str(err.value) == "policy: cannot switch from a priority queue (default) to a FIFO queue (legacy-v1.5)"


def test_switching_to_the_policy_the_run_already_uses_is_refused():
    with pytest.raises(ForkError, match="^policy: the run already uses default$"):
        fork({"action": "switchPolicy", "policy": "default"}, continue_policy=policy("default"))


def test_switching_to_other_profile_names_is_refused():
    default = policy("default")
    other = dataclasses.replace(
        default, name="renamed", profiles=(dataclasses.replace(default.profiles[0], scheduler_name="other"),)
    )
    with pytest.raises(ForkError, match="different profiles \\(default-scheduler vs other\\)"):
        fork({"action": "switchPolicy", "policy": "renamed"}, continue_policy=other)


def test_a_switch_needs_the_policy_to_go_on_under_and_other_actions_keep_theirs():
    with pytest.raises(ForkError, match="^policy: switchPolicy needs"):
        fork({"action": "switchPolicy", "policy": "bin-packing"})
    with pytest.raises(ForkError, match="^policy: only switchPolicy goes on under another policy"):
        fork({"action": "cordon", "target": "node-a2"}, continue_policy=policy("bin-packing"))


# -- targets that do not exist at the fork point ---------------------------------------------


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({"action": "cordon", "target": "node-z"}, "target: there is no node 'node-z' at event 50"),
        ({"action": "addNodes", "target": "node-z", "count": 1}, "target: there is no node 'node-z' at event 50"),
        ({"action": "deletePod", "target": "nope"}, "target: there is no pod 'default/nope' at event 50"),
        (
            {"action": "scale", "target": "deployment/nope", "replicas": 2},
            "target: there is no workload 'deployment/default/nope' at event 50",
        ),
    ],
    ids=["a missing node", "a missing template node", "a missing pod", "a missing workload"],
)
def test_a_target_missing_at_the_fork_point_is_named(action, message):
    with pytest.raises(ForkError) as err:
        fork(action, run=False)
    assert str(err.value) == message


def test_cordoning_a_cordoned_node_is_refused():
    """mixed-small cordons node-a1 at 30 s (event 168) and uncordons it later."""
    with pytest.raises(ForkError, match="^target: node-a1 is already cordoned at event 169$"):
        fork({"action": "cordon", "target": "node-a1"}, at_seq=169, run=False)


# -- parsing the action ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"action": "cordon", "target": "node/node-a"}, {"action": "cordon", "target": "node-a"}),
        ({"action": "drain", "target": " node-a "}, {"action": "drain", "target": "node-a"}),
        (
            {"action": "addNodes", "target": "node-a", "count": "2"},
            {"action": "addNodes", "target": "node-a", "count": 2},
        ),
        (
            {"action": "scale", "target": "Deployment/web", "replicas": 0},
            {"action": "scale", "target": "deployment/default/web", "replicas": 0},
        ),
        (
            {"action": "scale", "target": "statefulset/db/pg", "replicas": 3},
            {"action": "scale", "target": "statefulset/db/pg", "replicas": 3},
        ),
        ({"action": "deletePod", "target": "pod/web-0"}, {"action": "deletePod", "target": "default/web-0"}),
        ({"action": "deletePod", "target": "kube-system/dns"}, {"action": "deletePod", "target": "kube-system/dns"}),
        (
            {"action": "switchPolicy", "policy": "bin-packing", "target": ""},
            {"action": "switchPolicy", "policy": "bin-packing"},
        ),
    ],
    ids=[
        "a node target may carry its kind",
        "spaces around a target are dropped",
        "a count may be a string of digits",
        "a workload without namespace is in default, its kind lower-cased",
        "a workload may name its namespace",
        "a pod may carry its kind and gets the default namespace",
        "a pod may name its namespace",
        "empty fields are absent",
    ],
)
def test_an_action_is_normalised(data, expected):
    assert ForkAction.from_dict(data).as_dict() == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "action: is required: one of cordon, drain, removeNode, addNodes, scale, deletePod, switchPolicy"),
        ({"action": "explode"}, "action: 'explode' is not an action; expected one of cordon, drain, removeNode"),
        ({"action": "cordon"}, "target: is required: a node name"),
        ({"action": "cordon", "target": "node/a/b"}, "target: 'node/a/b' is not a node name"),
        ({"action": "cordon", "target": "node a"}, "target: 'node a' is not a node name (no spaces)"),
        ({"action": "cordon", "target": "node-a", "count": 2}, "count: is not a field of cordon (it takes target)"),
        ({"action": "addNodes", "target": "node-a"}, "count: is required: a whole number from 1 to 100"),
        ({"action": "addNodes", "target": "node-a", "count": 0}, "count: must be from 1 to 100, not 0"),
        ({"action": "addNodes", "target": "node-a", "count": "two"}, "count: 'two' is not a whole number"),
        ({"action": "addNodes", "target": "node-a", "count": True}, "count: True is not a whole number"),
        ({"action": "scale", "target": "web", "replicas": 2}, "target: 'web' is not a workload"),
        ({"action": "scale", "target": "pod/web", "replicas": 2}, "target: 'pod/web' is not a workload"),
        ({"action": "scale", "target": "deployment/web"}, "replicas: is required"),
        ({"action": "scale", "target": "deployment/web", "replicas": -1}, "replicas: must be from 0 to 50000, not -1"),
        ({"action": "deletePod", "target": "a/b/c"}, "target: 'a/b/c' is not a pod"),
        ({"action": "switchPolicy"}, "policy: is required: the policy to go on under"),
        ({"action": "switchPolicy", "policy": 3}, "policy: 3 is not a policy name"),
    ],
    ids=[
        "an action is required",
        "an unknown action is named",
        "a node action needs a target",
        "a node name has no slash",
        "a node name has no space",
        "a field the action does not take is named",
        "addNodes needs a count",
        "addNodes adds at least one node",
        "a count is a number",
        "a boolean is not a count",
        "scale needs the workload's kind",
        "a pod is not a workload",
        "scale needs replicas",
        "replicas cannot be negative",
        "a pod is name or namespace/name",
        "switchPolicy needs a policy",
        "a policy is a name",
    ],
)
def test_a_bad_action_names_the_field(data, message):
    with pytest.raises(ForkError) as err:
        ForkAction.from_dict(data)
    assert str(err.value).startswith(message)
    assert err.value.field == message.split(":")[0]


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"action": "cordon", "target": "node-a"}, "cordon node-a"),
        ({"action": "drain", "target": "node-a"}, "drain node-a"),
        ({"action": "removeNode", "target": "node-a"}, "remove node-a"),
        ({"action": "addNodes", "target": "node-a", "count": 1}, "add 1 node like node-a"),
        ({"action": "addNodes", "target": "node-a", "count": 3}, "add 3 nodes like node-a"),
        ({"action": "scale", "target": "deployment/web", "replicas": 5}, "scale deployment/web to 5"),
        ({"action": "scale", "target": "job/batch/render", "replicas": 2}, "scale job/batch/render to 2"),
        ({"action": "deletePod", "target": "web-0"}, "delete pod web-0"),
        ({"action": "deletePod", "target": "db/pg-0"}, "delete pod db/pg-0"),
        ({"action": "switchPolicy", "policy": "bin-packing"}, "switch to policy bin-packing"),
    ],
    ids=lambda v: v if isinstance(v, str) else v["action"],
)
def test_an_action_describes_itself_in_a_few_words(data, words):
    assert ForkAction.from_dict(data).describe() == words


def test_switching_between_two_fifo_policies_keeps_the_fifo():
    """legacy-v1.5 → the framework scheduler on the same FIFO queue: allowed, and the run ends."""
    legacy = policy("legacy-v1.5")
    fifo_framework = dataclasses.replace(policy("default"), name="fifo", queue_mode="fifo")
    sim = fork_simulation(
        scenario(), legacy, SEED, BEFORE_WEB_0, {"action": "switchPolicy", "policy": "fifo"}, fifo_framework
    )
    queue = sim.queue
    sim.run()
    assert sim.queue is queue
    assert type(sim.scheduler).__name__ == "FastScheduler"
    assert sim.trace.events[-1]["type"] == "run_finished"


# -- a fork of a fork ------------------------------------------------------------------------


def test_a_fork_of_a_fork_replays_its_parent_with_the_parents_own_action():
    """The second fork's parent is the first fork: replaying it must apply the first fork's
    action too, so the second fork's events up to its fork point are the first fork's events."""
    first = fork({"action": "cordon", "target": "node-a2"})
    later = first.trace.events[-1]["seq"] - 4  # well past the first fork point, before the end
    assert later > BEFORE_WEB_0
    second = fork_from(
        fork({"action": "cordon", "target": "node-a2"}, run=False),
        later,
        {"action": "cordon", "target": "node-b1"},
    )
    second.run()
    assert dumps(second.trace.events[: later + 1]) == dumps(first.trace.events[: later + 1])
    marks = [e["what_if"] for e in second.trace.events if e["type"] == "action" and e.get("fork_seq") is not None]
    assert marks == ["cordon node-a2", "cordon node-b1"]


def test_the_timeline_acting_on_a_node_the_fork_removed_is_refused_and_the_run_goes_on():
    """mixed-small cordons node-a1 at 30 s; a fork that removed node-a1 before then gets the API
    server's 404 on that action (trace: ``refused``), and the run goes on to its end."""
    sim = fork({"action": "removeNode", "target": "node-a1"})
    later = [
        e for e in sim.trace.events if e["type"] == "action" and e["target"] == "node/node-a1" and "fork_seq" not in e
    ]
    assert [(e["action"], e["t_ms"]) for e in later] == [("cordon", 30_000), ("uncordon", 120_000)]
    assert all(e["refused"] == 'nodes "node-a1" not found' for e in later)
    assert sim.trace.events[-1]["type"] == "run_finished"
