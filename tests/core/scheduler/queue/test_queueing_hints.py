"""The SchedulerQueueingHints gate (v1.31.13, beta and off by default): with it on, the plugins
that rejected a parked pod judge each cluster event with their QueueingHint functions
(``internal/queue/scheduling_queue.go`` ``isPodWorthRequeuing``), and a pod that fails is judged
by the events that came while it was in flight (``determineSchedulingHintForInFlightPod``).

Each scenario runs twice, gate off (``default``) and gate on (``queueing-hints``), both as v1.31
(v1.36 locks the gate on; its hints are in the *_v136.py files); the comments
work out every time. Backoff: 1 s after the first failure, 2 s after the second, 4 s after the
third (``calculateBackoffDuration``); a pod whose backoff is over goes straight to activeQ.
"""

from __future__ import annotations

import pytest

from scheduler_core.documents.errors import LoadError
from scheduler_core.documents.scenario import builtin_scenario, load_scenario
from scheduler_core.results.replay import narrate
from scheduler_core.scheduler.config import Policy
from scheduler_core.scheduler.framework import ActionType, QueueingHint
from scheduler_core.scheduler.policy import builtin_policy, load_policy
from scheduler_core.simulation.simulation import Simulation
from tests.core.scheduler.v131 import v131_builtin, v131_policy

GATE_ON = v131_policy(name="queueing-hints", queueing_hints=True)

HEAD = """\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {name: hints}
spec:
"""


def run(body: str, policy: Policy, fast: bool = True) -> Simulation:
    sim = Simulation(load_scenario(HEAD + body, "hints.yaml"), policy, seed=1, fast=fast)
    sim.run()
    return sim


def story(sim: Simulation, pod: str) -> list[tuple[int, str, str]]:
    """The pod's queue moves and binding: (t_ms, lane or "bound", trigger or node)."""
    out = []
    for e in sim.trace.events:
        if e.get("pod") != f"default/{pod}":
            continue
        if e["type"] == "queue_move":
            out.append((e["t_ms"], e["to"], e["trigger"]))
        elif e["type"] == "bound":
            out.append((e["t_ms"], "bound", e["node"]))
    return out


def attempts(sim: Simulation, pod: str) -> list[int]:
    return [e["t_ms"] for e in sim.trace.events if e["type"] == "cycle_start" and e["pod"] == f"default/{pod}"]


PARKED = [(0, "active", "PodAdd"), (0, "unschedulable", "ScheduleAttemptFailure")]


# -- the built-in side-by-side scenario ------------------------------------------------------


def test_builtin_scenario_retries_in_vain_with_the_gate_off_and_binds_earlier_with_it_on() -> None:
    # proxy-c wants host port 8080, held on both nodes: NodePorts rejects it at 0 s.
    # Gate off: 10 s cache-a deleted (AssignedPodDelete; NodePorts registers Pod Delete): moves,
    # backoff from 0 s (1 s) over → activeQ, fails (attempt 2). 20 s relabelled: a pending pod's
    # update moves it (UnscheduledPodUpdate), backoff from 10 s (2 s) over → fails (attempt 3).
    # 21 s proxy-b deleted: backoff from 20 s is now 4 s → backoffQ until 24 s; binds on node-b
    # at 24 s. Gate on: NodePorts' hint says QueueSkip for cache-a (no host port) and no rejector
    # registered a pod label update, so it stays parked until 21 s; proxy-b held the port:
    # Queue, backoff from 0 s over → activeQ, bound at 21 s.
    off = Simulation(builtin_scenario("queueing-hints"), v131_builtin("default"))
    off.run()
    on = Simulation(builtin_scenario("queueing-hints"), builtin_policy("queueing-hints"))
    on.run()
    assert story(off, "proxy-c") == [
        *PARKED,
        (10_000, "active", "AssignedPodDelete"),
        (10_000, "unschedulable", "ScheduleAttemptFailure"),
        (20_000, "active", "UnscheduledPodUpdate"),
        (20_000, "unschedulable", "ScheduleAttemptFailure"),
        (21_000, "backoff", "AssignedPodDelete"),
        (24_000, "active", "BackoffComplete"),
        (24_000, "bound", "node-b"),
    ]
    assert attempts(off, "proxy-c") == [0, 10_000, 20_000, 24_000]
    assert story(on, "proxy-c") == [*PARKED, (21_000, "active", "AssignedPodDelete"), (21_000, "bound", "node-b")]
    assert attempts(on, "proxy-c") == [0, 21_000]


def test_builtin_scenario_narrates_each_hint() -> None:
    sim = Simulation(builtin_scenario("queueing-hints"), builtin_policy("queueing-hints"))
    sim.run()
    lines = {e["t_ms"]: narrate(e) for e in sim.trace.events if e["type"] in ("pod_deleted", "pod_updated")}
    assert lines[10_000] == (
        "cache-a is gone from node-a (deleted). To the scheduler this is AssignedPodDelete, heard by "
        "InterPodAffinity, NodePorts, NodeResourcesFit, PodTopologySpread. proxy-c stays parked: NodePorts "
        "(isSchedulableAfterPodDeleted): QueueSkip — the deleted pod doesn't use any host ports."
    )
    assert lines[20_000] == (
        "proxy-c (pending) has new labels. To the scheduler this is PodLabelChange, heard by InterPodAffinity, "
        "PodTopologySpread, TaintToleration. proxy-c stays parked: its rejectors (NodePorts) do not listen for "
        "PodLabelChange."
    )
    line = lines[21_000]
    assert line is not None
    assert "proxy-c moves: NodePorts (isSchedulableAfterPodDeleted): Queue" in line


def test_gate_off_traces_carry_no_hint_notes() -> None:
    sim = Simulation(builtin_scenario("queueing-hints"), v131_builtin("default"))
    sim.run()
    assert not [e for e in sim.trace.events if e["type"] == "pod_deleted" and "events" in e]
    (update,) = [e for e in sim.trace.events if e["type"] == "pod_updated"]
    assert update["events"] == []


# -- node events -----------------------------------------------------------------------------

CORDONED = """\
  nodes:
    - {name: a, allocatable: {cpu: '4', memory: 8Gi}, unschedulable: true}
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: p},
       spec: {containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}}
  timeline:
    - {at: 5s, action: label, target: node/a, labels: {disk: ssd}}
    - {at: 6s, action: uncordon, target: node/a}
"""


def test_a_label_change_on_a_cordoned_node_moves_the_pod_only_with_the_gate_off() -> None:
    # p is rejected by NodeUnschedulable at 0 s. 5 s, a NodeLabelChange on a: the pre-check
    # (resources, node name, node affinity, ports, NoSchedule taints) does not look at
    # spec.unschedulable, so gate off p moves (backoff from 0 s over → activeQ) and fails again;
    # gate on NodeUnschedulable's hint sees a still unschedulable: QueueSkip. 6 s, uncordoned
    # (NodeSpecUnschedulableChange): gate off the backoff from 5 s (2 s) runs to 7 s → bound at
    # 7 s; gate on the hint says Queue, backoff from 0 s long over → bound at 6 s.
    off = run(CORDONED, v131_policy())
    assert story(off, "p") == [
        *PARKED,
        (5_000, "active", "NodeLabelChange"),
        (5_000, "unschedulable", "ScheduleAttemptFailure"),
        (6_000, "backoff", "NodeSpecUnschedulableChange"),
        (7_000, "active", "BackoffComplete"),
        (7_000, "bound", "a"),
    ]
    on = run(CORDONED, GATE_ON)
    assert story(on, "p") == [*PARKED, (6_000, "active", "NodeSpecUnschedulableChange"), (6_000, "bound", "a")]
    (label,) = [e for e in on.trace.events if e["type"] == "node_updated" and e["change"] == "labels"]
    (note,) = label["events"]
    assert note["parked"] == [
        {
            "pod": "default/p",
            "moves": False,
            "why": "NodeUnschedulable (isSchedulableAfterNodeChange): QueueSkip — node was created or updated, "
            "but it is still unschedulable",
        }
    ]


ENFORCED_POLICY = """\
apiVersion: kubeviz.dev/v1
kind: Policy
metadata: {name: batch-pool}
spec:
  kubernetesVersion: v1.31
  featureGates: {SchedulerQueueingHints: %s}
  configuration:
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    profiles:
      - pluginConfig:
          - name: NodeAffinity
            args:
              addedAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                  nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [batch]}]}]
"""

POOL = """\
  nodes:
    - {name: a, allocatable: {cpu: '4', memory: 8Gi}}
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: p},
       spec: {containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}}
  timeline:
    - {at: 5s, action: label, target: node/a, labels: {disk: ssd}}
    - {at: 8s, action: label, target: node/a, labels: {pool: batch}}
"""


def test_a_node_label_change_that_does_not_match_the_enforced_node_affinity_moves_only_with_the_gate_off() -> None:
    # The profile's NodeAffinity enforces pool=batch (addedAffinity); a has no pool label, so
    # NodeAffinity rejects p at 0 s. 5 s, a gets disk=ssd: the pre-check reads the pod's own
    # affinity only, which is empty, so gate off p moves and fails again (attempt 2); gate on
    # NodeAffinity's hint checks the enforced selector first: QueueSkip. 8 s, a gets pool=batch:
    # both move it — gate off its backoff from 5 s ended at 7 s, gate on at 1 s — bound at 8 s.
    off = run(POOL, load_policy(ENFORCED_POLICY % "false"))
    assert story(off, "p") == [
        *PARKED,
        (5_000, "active", "NodeLabelChange"),
        (5_000, "unschedulable", "ScheduleAttemptFailure"),
        (8_000, "active", "NodeLabelChange"),
        (8_000, "bound", "a"),
    ]
    on = run(POOL, load_policy(ENFORCED_POLICY % "true"))
    assert story(on, "p") == [*PARKED, (8_000, "active", "NodeLabelChange"), (8_000, "bound", "a")]
    assert attempts(off, "p") == [0, 5_000, 8_000]
    assert attempts(on, "p") == [0, 8_000]


SELECTOR = """\
  nodes:
    - {name: a, allocatable: {cpu: '4', memory: 8Gi}}
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: p},
       spec: {nodeSelector: {gpu: 'true'}, containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}}
  timeline:
    - {at: 5s, action: label, target: node/a, labels: {disk: ssd}}
    - {at: 8s, action: label, target: node/a, labels: {gpu: 'true'}}
"""


@pytest.mark.parametrize("policy", [v131_policy(), GATE_ON], ids=["gate off", "gate on"])
def test_the_pre_check_still_stops_a_label_change_that_misses_the_pods_own_selector(policy: Policy) -> None:
    # p needs gpu=true. 5 s disk=ssd: a fails p's pre-check (node affinity), gate on or off, so
    # no hint is asked and p stays. 8 s gpu=true: both move it, bound at 8 s.
    assert story(run(SELECTOR, policy), "p") == [*PARKED, (8_000, "active", "NodeLabelChange"), (8_000, "bound", "a")]


# -- pod events ------------------------------------------------------------------------------

FULL = """\
  nodes:
    - {name: a, allocatable: {cpu: '2', memory: 8Gi}}
    - {name: b, allocatable: {cpu: '1', memory: 8Gi}}
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: w},
       spec: {nodeName: a, terminationGracePeriodSeconds: 0,
              containers: [{name: c, image: i, resources: {requests: {cpu: '2'}}}]}}
    - {apiVersion: v1, kind: Pod, metadata: {name: s},
       spec: {nodeName: b, terminationGracePeriodSeconds: 0,
              containers: [{name: c, image: i, resources: {requests: {cpu: 500m}}}]}}
    - {apiVersion: v1, kind: Pod, metadata: {name: big},
       spec: {containers: [{name: c, image: i, resources: {requests: {cpu: '2'}}}]}}
  timeline:
    - {at: 5s, action: delete, target: pod/s}
    - {at: 6s, action: delete, target: pod/w}
"""


@pytest.mark.parametrize("policy", [v131_policy(), GATE_ON], ids=["gate off", "gate on"])
def test_a_pod_deleted_on_a_node_too_small_still_moves_a_pod_noderesourcesfit_rejected(policy: Policy) -> None:
    # big (2 CPU) fits neither a (full) nor b (1 CPU): NodeResourcesFit. 5 s, s on b is deleted.
    # v1.31.13's isSchedulableAfterPodChange answers Queue for any scheduled pod deleted, on
    # whatever node (fit.go), so the gate changes nothing: big moves (backoff from 0 s over),
    # fails again; 6 s w on a is deleted: backoff from 5 s runs to 7 s → bound on a at 7 s.
    assert story(run(FULL, policy), "big") == [
        *PARKED,
        (5_000, "active", "AssignedPodDelete"),
        (5_000, "unschedulable", "ScheduleAttemptFailure"),
        (6_000, "backoff", "AssignedPodDelete"),
        (7_000, "active", "BackoffComplete"),
        (7_000, "bound", "a"),
    ]


ANTI = """\
  nodes:
    - {name: a, allocatable: {cpu: '4', memory: 8Gi}}
    - {name: b, allocatable: {cpu: '4', memory: 8Gi}}
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: db-0, labels: {app: db}},
       spec: {nodeName: a, terminationGracePeriodSeconds: 0,
              containers: [{name: c, image: i}]}}
    - {apiVersion: v1, kind: Pod, metadata: {name: db-1, labels: {app: db}},
       spec: {nodeName: b, terminationGracePeriodSeconds: 0,
              containers: [{name: c, image: i}]}}
    - {apiVersion: v1, kind: Pod, metadata: {name: web-0, labels: {app: web}},
       spec: {nodeName: a, terminationGracePeriodSeconds: 0,
              containers: [{name: c, image: i}]}}
    - apiVersion: v1
      kind: Pod
      metadata: {name: db-2, labels: {app: db}}
      spec:
        affinity:
          podAntiAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              - {labelSelector: {matchLabels: {app: db}}, topologyKey: kubernetes.io/hostname}
        containers: [{name: c, image: i}]
  timeline:
    - {at: 5s, action: delete, target: pod/web-0}
    - {at: 6s, action: delete, target: pod/db-1}
"""


def test_deleting_a_pod_the_anti_affinity_does_not_select_moves_only_with_the_gate_off() -> None:
    # db-2 refuses a node with an app=db pod: InterPodAffinity rejects it on a and b. 5 s web-0
    # is deleted: gate off InterPodAffinity registered Pod Delete → db-2 moves and fails again;
    # gate on its hint asks whether web-0 matched all of db-2's anti-affinity terms: no,
    # QueueSkip. 6 s db-1 is deleted (it matched): gate off backoff from 5 s to 7 s → bound on b
    # at 7 s; gate on backoff from 0 s over → bound on b at 6 s.
    off = run(ANTI, v131_policy())
    assert story(off, "db-2") == [
        *PARKED,
        (5_000, "active", "AssignedPodDelete"),
        (5_000, "unschedulable", "ScheduleAttemptFailure"),
        (6_000, "backoff", "AssignedPodDelete"),
        (7_000, "active", "BackoffComplete"),
        (7_000, "bound", "b"),
    ]
    on = run(ANTI, GATE_ON)
    assert story(on, "db-2") == [*PARKED, (6_000, "active", "AssignedPodDelete"), (6_000, "bound", "b")]


SPREAD = """\
  nodes:
    - {name: a, allocatable: {cpu: '4', memory: 8Gi}, labels: {topology.kubernetes.io/zone: z1}}
    - {name: b, allocatable: {cpu: '1', memory: 8Gi}, labels: {topology.kubernetes.io/zone: z2}}
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: web-0, labels: {app: web}},
       spec: {nodeName: a, containers: [{name: c, image: i, resources: {requests: {cpu: 500m}}}]}}
    - {apiVersion: v1, kind: Pod, metadata: {name: filler, labels: {app: filler}},
       spec: {nodeName: b, terminationGracePeriodSeconds: 0,
              containers: [{name: c, image: i, resources: {requests: {cpu: '1'}}}]}}
    - apiVersion: v1
      kind: Pod
      metadata: {name: web-1, labels: {app: web}}
      spec:
        topologySpreadConstraints:
          - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
             labelSelector: {matchLabels: {app: web}}}
        containers: [{name: c, image: i, resources: {requests: {cpu: 500m}}}]
  timeline:
    - at: 5s
      action: create
      objects:
        - {apiVersion: v1, kind: Pod, metadata: {name: other, labels: {app: other}},
           spec: {nodeName: a, containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]}}
    - {at: 8s, action: delete, target: pod/filler}
"""


def test_an_assigned_pod_the_spread_does_not_count_moves_the_pod_only_with_the_gate_off() -> None:
    # web-1 on a would make z1 two web pods to z2's none (skew 2 > 1): PodTopologySpread; b is
    # full (NodeResourcesFit). 5 s, other (app=other) is created bound to a: gate off
    # AssignedPodAdd moves the pods PodTopologySpread rejected in the namespace (cross topology)
    # and web-1 fails again; gate on every parked pod is asked, and PodTopologySpread's hint
    # finds other outside app=web: QueueSkip (NodeResourcesFit registers no Pod Add). 8 s,
    # filler is deleted: NodeResourcesFit says Queue; gate off backoff from 5 s to 7 s is over,
    # both bind web-1 on b at 8 s.
    off = run(SPREAD, v131_policy())
    assert story(off, "web-1") == [
        *PARKED,
        (5_000, "active", "AssignedPodAdd"),
        (5_000, "unschedulable", "ScheduleAttemptFailure"),
        (8_000, "active", "AssignedPodDelete"),
        (8_000, "bound", "b"),
    ]
    on = run(SPREAD, GATE_ON)
    assert story(on, "web-1") == [*PARKED, (8_000, "active", "AssignedPodDelete"), (8_000, "bound", "b")]


# -- in flight: events during the pod's own attempt -----------------------------------------

PREEMPT = """\
  nodes:
    - {name: a, allocatable: {cpu: '2', memory: 8Gi}}
  objects:
    - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 1000}
    - {apiVersion: v1, kind: Pod, metadata: {name: victim, labels: {app: v}},
       spec: {nodeName: a, terminationGracePeriodSeconds: %s,
              containers: [{name: c, image: i, resources: {requests: {cpu: '2'}}}]}}
    - {apiVersion: v1, kind: Pod, metadata: {name: hp},
       spec: {priorityClassName: high, containers: [{name: c, image: i, resources: {requests: {cpu: '2'}}}]}}
"""


@pytest.mark.parametrize("policy", [v131_policy(), GATE_ON], ids=["gate off", "gate on"])
def test_a_graceful_victim_leaves_the_preemptor_parked_until_it_is_gone(policy: Policy) -> None:
    # hp preempts victim at 0 s; the victim's deletionTimestamp is an assigned-pod update during
    # hp's attempt. Gate off it is assignedPodOtherUpdate, which nobody registered: no move
    # request, hp parks. Gate on it is handed to the queue as AssignedPodUpdate, which
    # InterPodAffinity, PodTopologySpread (UpdatePodLabel) and TaintToleration (Pod Update, gate
    # on only) registered, so it is a move request recorded for hp in flight,
    # but hp's rejector NodeResourcesFit registered no Pod Update: QueueSkip, hp parks. 30 s,
    # the victim is gone (AssignedPodDelete): Fit says Queue, hp binds on a at 30 s.
    sim = run(PREEMPT % "30", policy)
    assert story(sim, "hp") == [*PARKED, (30_000, "active", "AssignedPodDelete"), (30_000, "bound", "a")]
    (started,) = [e for e in sim.trace.events if e["type"] == "pod_deletion_started"]
    if policy.queueing_hints:
        (note,) = started["events"]
        assert (note["event"], note["listeners"]) == (
            "AssignedPodUpdate",
            ["InterPodAffinity", "PodTopologySpread", "TaintToleration"],
        )
    else:
        assert "events" not in started


@pytest.mark.parametrize("policy", [v131_policy(), GATE_ON], ids=["gate off", "gate on"])
def test_a_victim_deleted_at_once_during_the_attempt_sends_the_preemptor_to_backoff(policy: Policy) -> None:
    # Grace 0: the victim is deleted inside hp's attempt. Gate off that is a move request after
    # hp's pop (moveRequestCycle); gate on the recorded AssignedPodDelete is replayed and
    # NodeResourcesFit's hint says Queue. Either way hp goes to backoffQ until 1 s and binds then.
    sim = run(PREEMPT % "0", policy)
    assert story(sim, "hp") == [
        (0, "active", "PodAdd"),
        (0, "backoff", "ScheduleAttemptFailure (cluster changed during the attempt)"),
        (1_000, "active", "BackoffComplete"),
        (1_000, "bound", "a"),
    ]


# -- the fast path agrees ----------------------------------------------------------------------


@pytest.mark.parametrize("body", [CORDONED, FULL, ANTI, SPREAD, PREEMPT % "30", PREEMPT % "0"])
def test_fast_and_plain_traces_are_identical_with_the_gate_on(body: str) -> None:
    from scheduler_core.trace.stream import dumps

    assert dumps(run(body, GATE_ON, fast=True).trace.events) == dumps(run(body, GATE_ON, fast=False).trace.events)


# -- the policy format -------------------------------------------------------------------------


def test_the_gate_is_off_by_default_and_on_when_the_policy_says_so() -> None:
    """Under v1.31, where it is a beta gate (v1.36 locks it on)."""
    assert v131_policy().queueing_hints is False
    assert v131_builtin("default").queueing_hints is False
    assert builtin_policy("queueing-hints").queueing_hints is True
    text = (
        "apiVersion: kubeviz.dev/v1\nkind: Policy\n"
        "spec:\n  kubernetesVersion: v1.31\n  featureGates: {SchedulerQueueingHints: false}\n"
    )
    assert load_policy(text).queueing_hints is False


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "featureGates: {SchedulerAsyncPreemption: true}",
            "policy.yaml:5 spec.featureGates.SchedulerAsyncPreemption: unknown feature gate under v1.31; "
            "kubeviz models SchedulerQueueingHints",
        ),
        (
            "featureGates: {SchedulerQueueingHints: 'yes'}",
            'policy.yaml:5 spec.featureGates.SchedulerQueueingHints: expected true or false, got a string ("yes")',
        ),
        (
            "featureGates: [SchedulerQueueingHints]",
            "policy.yaml:5 spec.featureGates: expected a mapping, got a list",
        ),
        (
            "{queueMode: fifo, featureGates: {SchedulerQueueingHints: true}}",
            "spec.featureGates.SchedulerQueueingHints: needs queueMode priority and schedulerMode framework",
        ),
    ],
)
def test_bad_feature_gates_name_the_field(spec: str, message: str) -> None:
    # as v1.31, whose gates the messages name (the version after the gates: the lines stay)
    head = "apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata: {name: p}\n"
    text = f"{head}spec: {spec[:-1]}, kubernetesVersion: v1.31}}\n"
    if not spec.startswith("{"):
        text = f"{head}spec:\n  {spec}\n  kubernetesVersion: v1.31\n"
    with pytest.raises(LoadError) as err:
        load_policy(text)
    assert message in str(err.value)


# -- the structures ----------------------------------------------------------------------------


def test_in_flight_events_are_kept_from_each_pods_pop_until_no_pod_needs_them() -> None:
    from scheduler_core.scheduler.framework.events import ASSIGNED_POD_DELETE, NODE_ADD
    from scheduler_core.scheduler.queue.queueing_hints import InFlightEvents

    log = InFlightEvents()
    log.record(NODE_ADD, None, "n0")  # nobody in flight: dropped
    log.popped("a")
    log.record(NODE_ADD, None, "n1")
    log.popped("b")
    log.record(ASSIGNED_POD_DELETE, "x", None)
    assert [e.new for e in log.since("a") or []] == ["n1", None]
    assert [e.old for e in log.since("b") or []] == ["x"]
    log.done("a")  # b still needs the deletion, not the node add before its pop
    assert [e.old for e in log.since("b") or []] == ["x"]
    log.done("b")
    assert log.since("b") is None
    assert len(log) == 0
    log.popped("c")
    assert log.since("c") == []


def test_a_queue_from_a_pending_plugin_is_queue_immediately() -> None:
    """isPodWorthRequeuing: a Pending plugin's Queue skips backoff; an Unschedulable one's does not."""
    from scheduler_core.api.model import Pod
    from scheduler_core.scheduler.framework import ClusterEvent, QueuedPodInfo
    from scheduler_core.scheduler.framework.events import NODE_ADD
    from scheduler_core.scheduler.framework.runtime import QueueingHintFunction
    from scheduler_core.scheduler.queue.queueing_hints import QueueingHintMap, Strategy

    def queue(pod: object, old: object, new: object) -> tuple[QueueingHint, str]:
        return QueueingHint.QUEUE, "always"

    node_any = ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE)
    hints = QueueingHintMap({"default-scheduler": [QueueingHintFunction(node_any, "P", queue, "h")]})
    info = QueuedPodInfo(pod=Pod(name="p"), timestamp_ms=0)
    info.unschedulable_plugins = {"P"}
    assert hints.worth_requeuing(info, NODE_ADD, None, None)[0] == Strategy.QUEUE_AFTER_BACKOFF
    info.unschedulable_plugins, info.pending_plugins = set(), {"P"}
    assert hints.worth_requeuing(info, NODE_ADD, None, None)[0] == Strategy.QUEUE_IMMEDIATELY
    info.pending_plugins = {"Other"}
    assert hints.worth_requeuing(info, NODE_ADD, None, None)[0] == Strategy.QUEUE_SKIP
