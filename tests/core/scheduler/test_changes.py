"""The timeline actions that change an existing object: label / unlabel (a node or a pod), taint /
untaint and setAllocatable (a node). Each is the update upstream's informers deliver, classified
as NodeSchedulingPropertiesChange / PodSchedulingPropertiesChange do (framework/events.go,
v1.31.13), and the trace says which plugins listen and what each parked pod does. The stories
run as v1.31 (QueueingHints off: the pre-check decides); v1.36's are in the *_v136.py files."""

from __future__ import annotations

import pytest

from scheduler_core.documents.errors import LoadError
from scheduler_core.documents.scenario import load_scenario
from scheduler_core.results.replay import ViewState, narrate
from scheduler_core.simulation.simulation import Simulation
from tests.core.scheduler.v131 import v131_policy

HEAD = """\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {name: changes}
spec:
  nodes:
    - {name: a, allocatable: {cpu: '2', memory: 8Gi}}
    - {name: b, allocatable: {cpu: '4', memory: 8Gi}, taints: [{key: dedicated, value: batch, effect: NoSchedule}]}
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: big},
       spec: {containers: [{name: c, image: i, resources: {requests: {cpu: '3'}}}]}}
    - {apiVersion: v1, kind: Pod, metadata: {name: ssd},
       spec: {nodeSelector: {disk: ssd}, containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}}
  timeline:
"""


def run(timeline: str) -> Simulation:
    sim = Simulation(load_scenario(HEAD + timeline, "changes.yaml"), v131_policy(), seed=1)
    sim.run()
    return sim


def story(sim: Simulation, pod: str) -> list[tuple[int, str, str]]:
    out = []
    for e in sim.trace.events:
        if e.get("pod") != f"default/{pod}":
            continue
        if e["type"] == "queue_move":
            out.append((e["t_ms"], e["to"], e["trigger"]))
        elif e["type"] == "bound":
            out.append((e["t_ms"], "bound", e["node"]))
    return out


def test_labelling_a_node_moves_the_pod_whose_node_selector_it_now_matches() -> None:
    # t=0: ssd needs disk=ssd (NodeAffinity on a, TaintToleration on b): parked; big needs 3 CPU
    # (a has 2, b is tainted): parked. 5 s: a gets disk=ssd, a NodeLabelChange; NodeAffinity
    # registers Node Update and a now passes ssd's pre-check: ssd to activeQ (its 1 s backoff
    # from 0 s is over), bound on a at 5 s. big's pre-check fails on a (2 CPU < 3): it stays.
    sim = run("    - {at: 5s, action: label, target: node/a, labels: {disk: ssd}}\n")
    assert story(sim, "ssd") == [
        (0, "active", "PodAdd"),
        (0, "unschedulable", "ScheduleAttemptFailure"),
        (5_000, "active", "NodeLabelChange"),
        (5_000, "bound", "a"),
    ]
    assert story(sim, "big") == [(0, "active", "PodAdd"), (0, "unschedulable", "ScheduleAttemptFailure")]
    (update,) = [e for e in sim.trace.events if e["type"] == "node_updated"]
    assert update["labels"] == {"disk": "ssd", "kubernetes.io/hostname": "a"}
    (note,) = update["events"]
    assert note["event"] == "NodeLabelChange"
    assert "NodeAffinity" in note["listeners"]
    assert {v["pod"]: v["moves"] for v in note["parked"]} == {"default/big": False, "default/ssd": True}
    line = narrate(update)
    assert line is not None
    assert line.startswith("Node a's labels changed. To the scheduler this is NodeLabelChange, heard by ")
    assert "big stays parked: the node fails its pre-check" in line
    assert "ssd moves: rejected by NodeAffinity, TaintToleration, which listen for NodeLabelChange." in line


def test_resizing_a_node_moves_the_pod_that_now_fits() -> None:
    # 10 s: a goes from 2 to 8 CPU (NodeAllocatableChange, NodeResourcesFit listens); big's 1 s
    # backoff from 0 s is over: activeQ, bound on a at 10 s.
    sim = run("    - {at: 10s, action: setAllocatable, target: node/a, allocatable: {cpu: '8'}}\n")
    assert story(sim, "big")[-2:] == [(10_000, "active", "NodeAllocatableChange"), (10_000, "bound", "a")]
    state = ViewState()
    for e in sim.trace.events:
        state.apply(e)
    assert state.nodes["a"]["allocatable"]["cpu"] == 8000


def test_untainting_a_node_moves_the_pods_the_taint_kept_off() -> None:
    # 20 s: b loses dedicated=batch (NodeTaintChange): both pods pass b's pre-check (4 CPU, no
    # taint left; ssd still needs disk=ssd, so only big). big binds on b at 20 s.
    sim = run("    - {at: 20s, action: untaint, target: node/b, key: dedicated}\n")
    assert story(sim, "big")[-2:] == [(20_000, "active", "NodeTaintChange"), (20_000, "bound", "b")]
    assert story(sim, "ssd")[-1] == (0, "unschedulable", "ScheduleAttemptFailure")


def test_a_taint_that_changes_nothing_is_no_update() -> None:
    # b already has dedicated=batch:NoSchedule: the same taint again writes no new version
    sim = run(
        "    - {at: 5s, action: taint, target: node/b, taint: {key: dedicated, value: batch, effect: NoSchedule}}\n"
    )
    assert not [e for e in sim.trace.events if e["type"] == "node_updated"]


def test_tainting_a_node_is_an_event_for_pods_that_still_pass_its_pre_check_only() -> None:
    # a NoSchedule taint on a: the pre-check (NoSchedule taints) fails for both: nobody moves,
    # though TaintToleration listens for it (a move request all the same)
    sim = run("    - {at: 5s, action: taint, target: node/a, taint: {key: k, effect: NoSchedule}}\n")
    (update,) = [e for e in sim.trace.events if e["type"] == "node_updated"]
    assert update["taints"] == [{"key": "k", "value": "", "effect": "NoSchedule"}]
    assert [v["moves"] for v in update["events"][0]["parked"]] == [False, False]


POD_AFFINITY = """\
    - apiVersion: v1
      kind: Pod
      metadata: {name: near-db}
      spec:
        affinity:
          podAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: db}}}
        containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]
    - {apiVersion: v1, kind: Pod, metadata: {name: store, labels: {app: cache}},
       spec: {nodeName: a, containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}}
"""


def test_relabelling_a_bound_pod_moves_the_pod_whose_affinity_term_it_now_matches() -> None:
    # near-db needs a pod labelled app=db on its node: none at 0 s, parked (InterPodAffinity).
    # 5 s: store (on a) becomes app=db: PodLabelChange, registered by InterPodAffinity, and
    # near-db's term matches store: activeQ, bound on a (store's node) at 5 s.
    text = HEAD.replace("  timeline:\n", POD_AFFINITY + "  timeline:\n")
    text += "    - {at: 5s, action: label, target: pod/store, labels: {app: db}}\n"
    sim = Simulation(load_scenario(text, "changes.yaml"), v131_policy(), seed=1)
    sim.run()
    assert story(sim, "near-db") == [
        (0, "active", "PodAdd"),
        (0, "unschedulable", "ScheduleAttemptFailure"),
        (5_000, "active", "PodLabelChange"),
        (5_000, "bound", "a"),
    ]
    (update,) = [e for e in sim.trace.events if e["type"] == "pod_updated"]
    assert (update["pod"], update["node"], update["labels"]) == ("default/store", "a", {"app": "db"})
    (note,) = update["events"]
    assert note["listeners"] == ["InterPodAffinity", "PodTopologySpread"]
    verdicts = {v["pod"]: v for v in note["parked"]}
    assert verdicts["default/near-db"]["moves"] is True
    assert verdicts["default/big"] == {
        "pod": "default/big",
        "moves": False,
        "why": "not rejected by PodTopologySpread, and no required affinity term of it matches the pod",
    }


def test_relabelling_a_pending_pod_is_its_own_update_and_moves_it() -> None:
    # 5 s: ssd (parked) gets a new label: the queue's Update of an unschedulable pod that changed
    # (isPodUpdated) moves it, backoff long over: activeQ, tried, parked again.
    sim = run("    - {at: 5s, action: label, target: pod/ssd, labels: {tier: web}}\n")
    assert story(sim, "ssd")[2:] == [
        (5_000, "active", "UnscheduledPodUpdate"),
        (5_000, "unschedulable", "ScheduleAttemptFailure"),
    ]
    assert sim.pods["default/ssd"].labels == {"tier": "web"}


def test_unlabel_removes_keys_and_an_absent_key_changes_nothing() -> None:
    sim = run(
        "    - {at: 5s, action: label, target: node/a, labels: {disk: ssd, gpu: 'no'}}\n"
        "    - {at: 6s, action: unlabel, target: node/a, keys: [gpu]}\n"
        "    - {at: 7s, action: unlabel, target: node/a, keys: [gpu]}\n"
    )
    updates = [(e["t_ms"], e["labels"]) for e in sim.trace.events if e["type"] == "node_updated"]
    assert updates == [
        (5_000, {"disk": "ssd", "gpu": "no", "kubernetes.io/hostname": "a"}),
        (6_000, {"disk": "ssd", "kubernetes.io/hostname": "a"}),
    ]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{at: 5s, action: label, target: node/a}", "changes.yaml:14 spec.timeline[0].labels: is required"),
        (
            "{at: 5s, action: label, target: node/zz, labels: {x: y}}",
            'spec.timeline[0].target: no node "zz" exists at 5s',
        ),
        ("{at: 5s, action: label, target: pod/nobody, labels: {x: y}}", 'no pod "default/nobody" exists at 5s'),
        ("{at: 5s, action: label, target: node/a, labels: {'bad key!': y}}", '"bad key!" is not a valid label key'),
        ("{at: 5s, action: unlabel, target: node/a, keys: []}", "spec.timeline[0].keys: is required"),
        (
            "{at: 5s, action: taint, target: pod/big, taint: {key: k, effect: NoSchedule}}",
            "is not a target of taint; write node/<name>",
        ),
        ("{at: 5s, action: taint, target: node/a, taint: {key: k}}", "spec.timeline[0].taint.effect: is required"),
        ("{at: 5s, action: untaint, target: node/a, key: k, effect: Sometimes}", "spec.timeline[0].effect:"),
        (
            "{at: 5s, action: setAllocatable, target: node/a, allocatable: {cpu: lots}}",
            "spec.timeline[0].allocatable.cpu:",
        ),
        ("{at: 5s, action: setAllocatable, target: node/a, labels: {x: y}}", "spec.timeline[0].labels: unknown field"),
    ],
    ids=[
        "label needs labels",
        "the node must exist at that time",
        "the pod must exist at that time",
        "label keys are checked as the API server checks them",
        "unlabel needs keys",
        "only a node can be tainted",
        "a taint needs an effect",
        "untaint's effect is one of the three",
        "allocatable amounts are quantities",
        "each action has its own fields",
    ],
)
def test_bad_change_actions_are_errors_naming_the_field_and_line(entry: str, message: str) -> None:
    with pytest.raises(LoadError) as err:
        load_scenario(HEAD + f"    - {entry}\n", "changes.yaml")
    assert message in str(err.value)


def test_fast_and_plain_runs_of_every_change_action_are_byte_identical() -> None:
    import json

    text = HEAD.replace("  timeline:\n", POD_AFFINITY + "  timeline:\n") + (
        "    - {at: 1s, action: label, target: node/a, labels: {disk: ssd}}\n"
        "    - {at: 2s, action: label, target: pod/store, labels: {app: db}}\n"
        "    - {at: 3s, action: taint, target: node/a, taint: {key: k, effect: PreferNoSchedule}}\n"
        "    - {at: 4s, action: setAllocatable, target: node/a, allocatable: {cpu: '6'}}\n"
        "    - {at: 5s, action: untaint, target: node/b, key: dedicated, effect: NoSchedule}\n"
        "    - {at: 6s, action: unlabel, target: node/a, keys: [disk]}\n"
    )
    traces = []
    for fast in (True, False):
        sim = Simulation(load_scenario(text, "changes.yaml"), seed=3, fast=fast)
        sim.run()
        traces.append(json.dumps(sim.trace.events, sort_keys=True))
    assert traces[0] == traces[1]
    assert '"type": "pod_updated"' in traces[0]
