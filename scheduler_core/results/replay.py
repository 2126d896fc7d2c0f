"""Replaying a trace into the state a viewer sees at any moment.

The web shows a run by folding its trace events into a :class:`ViewState`: node bars,
the three queue lanes, pod chips, the last scheduling cycle and a narration in plain
words. Stored snapshots are ``ViewState.as_dict()``; stepping back or jumping loads the
nearest snapshot and applies the events after it — the engine never runs again.

GPUs (docs/trace.md): a node with ``nvidia.com/gpu`` allocatable gets ``gpu_used`` (thousandths
used per GPU, a short list of ints so snapshots and frames of big clusters stay small) and
``gpu_model``; a GPU pod gets ``gpu`` (its request) and, once placed, ``gpus`` (the GPUs it holds).
Rows of nodes and pods without GPUs have none of these keys.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from ..api.gpu_request import GPU_MODEL_LABEL, GPU_RESOURCE, MILLI
from ..api.units import format_usage
from ..scheduler.tie_break import describe_tie
from ..trace import events as te

__all__ = ["ViewState", "narrate", "NARRATION_LINES"]

NARRATION_LINES = 40
GONE_REQUESTS_KEPT = 64  # deleted pods whose requests a reservation may still need
LANES = ("active", "backoff", "unschedulable")


def _short(pod: str | None) -> str:
    if not pod:
        return "?"
    ns, _, name = pod.partition("/")
    return name if ns == "default" else pod


def _add(total: dict[str, int], extra: dict[str, int], sign: int) -> None:
    for name, amount in extra.items():
        left = total.get(name, 0) + sign * amount
        if left:
            total[name] = left
        else:
            total.pop(name, None)


def _same(value: Any) -> Any:
    return value


def _event_notes(notes: list[te.ClusterEventNote]) -> str:
    """Which cluster events an update became, who listens, and what each parked pod does."""
    parts = []
    for note in notes:
        listeners = note["listeners"]
        heard = f"heard by {', '.join(listeners)}" if listeners else "which no enabled plugin listens for"
        parts.append(f"To the scheduler this is {note['event']}, {heard}.")
        if not note["parked"]:
            parts.append("No pod is parked among the unschedulable pods.")
        for verdict in note["parked"]:
            fate = "moves" if verdict["moves"] else "stays parked"
            parts.append(f"{_short(verdict['pod'])} {fate}: {verdict['why']}.")
    return " ".join(parts)


# -- narration: one function per event type a learner cares about, reading its type's fields ----


def _say_cycle_start(e: te.CycleStartFields) -> str:
    return f"Scheduling {_short(e['pod'])} (attempt {e['attempt']}, priority {e['priority']})."


def _say_selected(e: te.SelectedFields) -> str:
    node = e["node"]
    if e.get("batched"):  # v1.36 OpportunisticBatching: one node filtered, none scored
        return f"{_short(e['pod'])} → {node}: {node} was {describe_tie(e)}."
    how = "the only node that fits" if e.get("score") is None else f"best score {e['score']}"
    tie = describe_tie(e)
    how = f"{how}, {tie}" if tie else how
    return f"{_short(e['pod'])} → {node}: {e['feasible']} of {e['evaluated']} evaluated nodes fit; {node} has {how}."


def _say_unschedulable(e: te.UnschedulableFields) -> str:
    return f"{_short(e['pod'])} cannot be scheduled: {e['message']}"


def _say_preemption(e: te.PreemptionFields) -> str:
    pod = _short(e["pod"])
    if not e.get("eligible"):
        return f"{pod} may not preempt: {e.get('reason')}"
    if e.get("chosen"):
        victims = ", ".join(_short(v["pod"]) for v in e.get("victims", []))
        decided = str(e.get("decided_by") or "").replace("_", " ")
        return f"{pod} preempts {victims} on {e['chosen']} (decided by {decided})."
    return f"Preemption cannot help {pod}: {e.get('reason')}"


def _say_nomination_set(e: te.NominationSetFields) -> str:
    return f"{_short(e['pod'])} is nominated to {e['node']}: its place there is held while victims terminate."


def _say_nomination_cleared(e: te.NominationClearedFields) -> str:
    return f"{_short(e['pod'])} loses its nomination on {e['node']} ({e.get('reason')})."


def _say_bound(e: te.BoundFields) -> str:
    return f"{_short(e['pod'])} is bound to {e['node']}."


def _say_pod_deletion_started(e: te.PodDeletionStartedFields) -> str:
    grace = f"{e['grace_ms'] / 1000:g}s"
    start = f"{_short(e['pod'])} is being deleted from {e['node']} ({e.get('reason')}); it has {grace} to stop."
    if "events" in e:  # QueueingHints: the update goes to the hints as AssignedPodUpdate
        return f"{start} Its deletionTimestamp is a pod update. " + _event_notes(e["events"])
    return (
        f"{start} Its deletionTimestamp is an 'other' pod update, which no default plugin listens for:"
        " no parked pod moves until it is gone."
    )


def _say_pod_deleted(e: te.PodDeletedFields) -> str:
    node = e.get("node")
    gone = f"{_short(e['pod'])} is gone" + (f" from {node}" if node else "") + f" ({e.get('reason')})."
    return f"{gone} " + _event_notes(e["events"]) if "events" in e else gone


def _say_pod_completed(e: te.PodCompletedFields) -> str:
    return f"{_short(e['pod'])} finished on {e['node']} and freed its resources."


def _say_queue_move(e: te.QueueMoveFields) -> str | None:
    if e.get("to") in ("active", "backoff") and e.get("from") == "unschedulable":
        return f"{_short(e['pod'])} moves from unschedulable to {e['to']}Q ({e.get('trigger')})."
    return None


def _say_reservation_set(e: te.ReservationSetFields) -> str:
    return f"{_short(e['pod'])}'s place on {e['node']} is reserved for its replacement."


def _say_reservation_released(e: te.ReservationReleasedFields) -> str:
    return f"The reservation for {_short(e['pod'])} on {e['node']} is released ({e.get('reason')})."


def _say_rollout_started(e: te.RolloutStartedFields) -> str:
    return f"{e['workload']} starts a rollout to revision {e.get('revision')} ({e.get('image')})."


def _say_rollout_completed(e: te.RolloutCompletedFields) -> str:
    return f"{e['workload']} completed its rollout in {e.get('duration_ms', 0) / 1000:g}s."


def _say_eviction(e: te.EvictionFields) -> str:
    verdict = "evicted" if e.get("allowed") else "refused"
    return f"Eviction of {_short(e['pod'])} from {e['node']}: {verdict} — {e.get('reason')}"


def _say_node_updated(e: te.NodeUpdatedFields) -> str:
    if "events" in e:
        return f"Node {e['node']}'s {e['change']} changed. " + _event_notes(e["events"])
    return f"Node {e['node']} is {e.get('change')}ed."


def _say_pod_updated(e: te.PodUpdatedFields) -> str:
    node = e.get("node")
    where = f" on {node}" if node else " (pending)"
    notes = _event_notes(e["events"]) if e["events"] else "The pending pod itself is updated."
    return f"{_short(e['pod'])}{where} has new labels. " + notes


def _say_action(e: te.ActionFields) -> str:
    if e.get("fork_seq") is not None:
        return f"What if? {e.get('what_if') or e['action']} (forked at event {e['fork_seq']})."
    if e.get("refused"):
        return f"Timeline: {e['action']} refused by the API server: {e['refused']}."
    return f"Timeline: {e['action']} {e.get('target', '')}".rstrip() + "."


def _say_pod_added(e: te.PodAddedFields) -> str | None:
    return f"{_short(e['pod'])} is created, but {e['problem']}." if e.get("problem") else None


def _say_run_finished(e: te.RunFinishedFields) -> str | None:
    return f"The run ends — {e['reason']}." if e.get("reason") else None


# Event type -> its narration; the table cannot say which fields each reads, hence Any (as in
# metrics.py); each function's own type is what mypy checks its lookups against.
_NARRATIONS: dict[str, Callable[[Any], str | None]] = {
    "cycle_start": _say_cycle_start,
    "selected": _say_selected,
    "unschedulable": _say_unschedulable,
    "preemption": _say_preemption,
    "nomination_set": _say_nomination_set,
    "nomination_cleared": _say_nomination_cleared,
    "bound": _say_bound,
    "pod_deletion_started": _say_pod_deletion_started,
    "pod_deleted": _say_pod_deleted,
    "pod_completed": _say_pod_completed,
    "queue_move": _say_queue_move,
    "reservation_set": _say_reservation_set,
    "reservation_released": _say_reservation_released,
    "rollout_started": _say_rollout_started,
    "rollout_completed": _say_rollout_completed,
    "eviction": _say_eviction,
    "node_updated": _say_node_updated,
    "pod_updated": _say_pod_updated,
    "action": _say_action,
    "pod_added": _say_pod_added,
    "run_finished": _say_run_finished,
}


def narrate(event: Mapping[str, Any]) -> str | None:
    """One plain-language line for the events a learner cares about, or None."""
    say = _NARRATIONS.get(event["type"])
    return say(event) if say is not None else None


class ViewState:
    """Everything a viewer sees after a given event."""

    def __init__(self) -> None:
        self.seq = -1
        self.t_ms = 0
        self.cycle = 0
        self.nodes: dict[str, dict[str, Any]] = {}
        self.pods: dict[str, dict[str, Any]] = {}
        self.lanes: dict[str, list[str]] = {lane: [] for lane in LANES}
        self.current: dict[str, Any] = {}  # the latest scheduling cycle
        self.narration: deque[dict[str, Any]] = deque(maxlen=NARRATION_LINES)
        self.tally = {"preemptions": 0, "victims": 0}
        self.finished = False
        # The requests of the pods whose place a reservation holds. A StatefulSet's pod is gone
        # when its reservation is set and its replacement comes a few events later, so the
        # requests of the last deleted pods are kept to draw the held space in between.
        self.reserved_requests: dict[str, dict[str, int]] = {}
        self.gone_requests: dict[str, dict[str, int]] = {}

    # -- (de)serialisation ---------------------------------------------------------------

    def as_dict(self, *, copy_state: bool = True) -> dict[str, Any]:
        """A plain dict of the state. ``copy_state=False`` shares the nodes, pods and cycle with
        this state: only for serialising at once (a snapshot written before the next event)."""
        take = copy.deepcopy if copy_state else _same
        return {
            "seq": self.seq,
            "t_ms": self.t_ms,
            "cycle": self.cycle,
            "nodes": take(self.nodes),
            "pods": take(self.pods),
            "lanes": {lane: list(keys) for lane, keys in self.lanes.items()},
            "current": take(self.current),
            "narration": list(self.narration),
            "counts": self.counts,
            "finished": self.finished,
            "reserved_requests": take(self.reserved_requests),
            "gone_requests": take(self.gone_requests),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ViewState:
        state = cls()
        state.seq = data["seq"]
        state.t_ms = data["t_ms"]
        state.cycle = data["cycle"]
        state.nodes = copy.deepcopy(data["nodes"])
        state.pods = copy.deepcopy(data["pods"])
        state.lanes = {lane: list(data["lanes"].get(lane, [])) for lane in LANES}
        state.current = copy.deepcopy(data["current"])
        state.narration = deque(data["narration"], maxlen=NARRATION_LINES)
        state.tally = {k: data["counts"].get(k, 0) for k in ("preemptions", "victims")}
        state.finished = data.get("finished", False)
        state.reserved_requests = copy.deepcopy(data.get("reserved_requests") or {})
        state.gone_requests = copy.deepcopy(data.get("gone_requests") or {})
        return state

    # -- folding events ------------------------------------------------------------------

    def apply(self, event: Mapping[str, Any]) -> None:
        """Fold one event in. Its common keys are read here; each handler reads its type's fields."""
        self.seq = event["seq"]
        self.t_ms = event["t_ms"]
        self.cycle = event.get("cycle", self.cycle)
        handler = _FOLDS.get(event["type"])
        if handler is not None:
            handler(self, event)
        line = narrate(event)
        if line:
            self.narration.append({"seq": event["seq"], "t_ms": event["t_ms"], "text": line})

    def _node(self, name: str | None) -> dict[str, Any] | None:
        return self.nodes.get(name) if name else None

    def _place(self, key: str, node_name: str | None, phase: str) -> None:
        pod = self.pods.get(key)
        node = self._node(node_name)
        if pod is None or node is None:
            return
        if pod.get("node") != node_name:
            self._unplace(key)
            _add(node["requested"], pod["requests"], +1)
            node["pods"].append(key)
            pod["node"] = node_name
        pod["phase"] = phase

    def _unplace(self, key: str) -> None:
        pod = self.pods.get(key)
        if pod is None or not pod.get("node"):
            return
        node = self._node(pod["node"])
        if node is not None and key in node["pods"]:
            node["pods"].remove(key)
            _add(node["requested"], pod["requests"], -1)
            self._count_gpus(pod, node, -1)
        pod.pop("gpus", None)
        pod.pop("gpus_counted", None)
        pod["node"] = None

    # -- GPUs ----------------------------------------------------------------------------

    @staticmethod
    def _count_gpus(pod: dict[str, Any], node: dict[str, Any], sign: int) -> None:
        """Add (or take back) the pod's share on each GPU it holds on ``node``."""
        used = node.get("gpu_used")
        gpu = pod.get("gpu")
        if used is None or gpu is None:
            return
        for index in pod.get("gpus") or ():
            if 0 <= index < len(used):
                used[index] += sign * gpu["milli"]

    def _hold_gpus(self, key: str, gpus: list[int] | None) -> None:
        """The placed pod holds ``gpus`` (from ``bound`` / ``pod_added``) on its node."""
        pod = self.pods.get(key)
        if gpus is None or pod is None or pod.get("gpu") is None:
            return
        node = self._node(pod.get("node"))
        if node is None:
            return
        if pod.pop("gpus_counted", False):
            # The engine's last node_usage already counted this (assumed) pod on its GPUs.
            pod["gpus"] = list(gpus)
            return
        self._count_gpus(pod, node, -1)
        pod["gpus"] = list(gpus)
        self._count_gpus(pod, node, +1)

    def _set_lane(self, key: str, lane: str | None) -> None:
        for keys in self.lanes.values():
            if key in keys:
                keys.remove(key)
        if lane in self.lanes:
            self.lanes[lane].append(key)
        pod = self.pods.get(key)
        if pod is not None:
            pod["lane"] = lane if lane in self.lanes else None

    @property
    def counts(self) -> dict[str, int]:
        """Computed when read (a render or a snapshot), not on every event: O(pods) each time."""
        bound = sum(1 for p in self.pods.values() if p.get("node") and p["phase"] != "assumed")
        pending = sum(1 for p in self.pods.values() if not p.get("node"))
        return {"bound": bound, "pending": pending, **self.tally}

    def _on_node_added(self, e: te.NodeAddedFields) -> None:
        node: dict[str, Any] = {
            "allocatable": dict(e["allocatable"]),
            "requested": {},
            "labels": dict(e.get("labels", {})),
            "taints": list(e.get("taints", [])),
            "unschedulable": e.get("unschedulable", False),
            "pods": [],
            "nominated": [],
            "reserved": [],
        }
        gpus = int(node["allocatable"].get(GPU_RESOURCE, 0) or 0)
        if gpus > 0:
            node["gpu_used"] = [0] * gpus
            node["gpu_model"] = str(node["labels"].get(GPU_MODEL_LABEL, ""))
        self.nodes[e["node"]] = node

    def _on_node_updated(self, e: te.NodeUpdatedFields) -> None:
        node = self._node(e["node"])
        if node is not None:
            node["unschedulable"] = e.get("unschedulable", node["unschedulable"])
            for key in ("labels", "taints", "allocatable"):
                if key in e:
                    node[key] = copy.deepcopy(e[key])

    def _on_node_removed(self, e: te.NodeRemovedFields) -> None:
        self.nodes.pop(e["node"], None)

    def _on_pod_added(self, e: te.PodAddedFields) -> None:
        self.pods[e["pod"]] = {
            "priority": e.get("priority", 0),
            "requests": dict(e.get("requests", {})),
            "phase": "pending",
            "node": None,
            "lane": None,
            "nominated": None,
            "attempts": 0,
            "message": e.get("problem"),
            "backoff_until_ms": None,
        }
        if e.get("gpu") is not None:
            gpu = e["gpu"]
            self.pods[e["pod"]]["gpu"] = {
                "count": int(gpu["count"]),
                "milli": int(gpu["milli"]),
                "models": list(gpu.get("models") or []),
            }
        if e.get("node"):
            self._place(e["pod"], e["node"], "bound")
            self._hold_gpus(e["pod"], e.get("gpus"))

    def _on_queue_move(self, e: te.QueueMoveFields) -> None:
        self._set_lane(e["pod"], e["to"])
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["backoff_until_ms"] = e.get("backoff_until_ms")

    def _on_cycle_start(self, e: te.CycleStartFields) -> None:
        self._set_lane(e["pod"], None)
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["attempts"] = e.get("attempt", pod["attempts"] + 1)
            pod["phase"] = "scheduling"
        self.current = {"pod": e["pod"], "attempt": e.get("attempt"), "cycle": self.cycle, "t_ms": self.t_ms}

    def _on_prefilter(self, e: te.PrefilterFields) -> None:
        self.current["prefilter"] = {"code": e.get("code"), "plugin": e.get("plugin"), "reasons": e.get("reasons")}

    def _on_filter(self, e: te.FilterFields) -> None:
        self.current["filter"] = {
            "evaluated": e.get("evaluated"),
            "feasible": e.get("feasible"),
            "histogram": e.get("histogram", {}),
            "results": e.get("results"),
            "nominated_node": e.get("nominated_node"),
        }

    def _on_score(self, e: te.ScoreFields) -> None:
        self.current["score"] = {
            "plugins": e.get("plugins", []),
            "nodes": e.get("nodes", {}),
            "totals": e.get("totals", {}),
        }

    def _on_selected(self, e: te.SelectedFields) -> None:
        self.current["selected"] = e["node"]
        self.current["top"] = e.get("top", [])
        tie = describe_tie(e)
        if tie:
            self.current["tie"] = tie

    def _on_unschedulable(self, e: te.UnschedulableFields) -> None:
        self.current["selected"] = None
        self.current["message"] = e["message"]
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["message"] = e["message"]
            pod["phase"] = "pending"

    def _on_preemption(self, e: te.PreemptionFields) -> None:
        self.current["preemption"] = {
            "eligible": e.get("eligible"),
            "reason": e.get("reason"),
            "candidates": e.get("candidates"),
            "chosen": e.get("chosen"),
            "decided_by": e.get("decided_by"),
            "victims": e.get("victims"),
            "rejected_nodes": e.get("rejected_nodes"),
        }
        if e.get("chosen"):
            self.tally["preemptions"] += 1
            self.tally["victims"] += len(e.get("victims", []))
            for victim in e.get("victims", []):
                pod = self.pods.get(victim["pod"])
                if pod is not None:
                    pod["victim_of"] = e["pod"]

    def _nominate(self, key: str, node_name: str | None, field: str = "nominated") -> None:
        for existing in self.nodes.values():
            if key in existing[field]:
                existing[field].remove(key)
        target = self._node(node_name)
        if target is not None:
            target[field].append(key)

    def _on_nomination_set(self, e: te.NominationSetFields) -> None:
        self._nominate(e["pod"], e["node"])
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["nominated"] = e["node"]

    def _on_nomination_cleared(self, e: te.NominationClearedFields) -> None:
        self._nominate(e["pod"], None)
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["nominated"] = None

    def _on_reservation_set(self, e: te.ReservationSetFields) -> None:
        node = self._node(e["node"])
        if node is not None:
            node["reserved"].append(e["pod"])
        pod = self.pods.get(e["pod"])
        requests = pod["requests"] if pod is not None else self.gone_requests.get(e["pod"])
        if requests is not None:
            self.reserved_requests[e["pod"]] = dict(requests)

    def _on_reservation_released(self, e: te.ReservationReleasedFields) -> None:
        node = self._node(e["node"])
        if node is not None and e["pod"] in node["reserved"]:
            node["reserved"].remove(e["pod"])
        if not any(e["pod"] in n["reserved"] for n in self.nodes.values()):
            self.reserved_requests.pop(e["pod"], None)

    def _on_assumed(self, e: te.AssumedFields) -> None:
        self._nominate(e["pod"], None)
        self._place(e["pod"], e["node"], "assumed")  # its GPUs come with bound (assumed names none)

    def _on_bound(self, e: te.BoundFields) -> None:
        self._place(e["pod"], e["node"], "bound")
        self._hold_gpus(e["pod"], e.get("gpus"))
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["nominated"] = None
            pod["message"] = None

    def _on_pod_running(self, e: te.PodRunningFields) -> None:
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["phase"] = "running"

    def _on_forgotten(self, e: te.ForgottenFields) -> None:
        self._unplace(e["pod"])
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["phase"] = "pending"

    def _on_pod_deletion_started(self, e: te.PodDeletionStartedFields) -> None:
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["phase"] = "terminating"
            pod["terminating_until_ms"] = self.t_ms + e.get("grace_ms", 0)

    def _gone(self, key: str) -> None:
        self._unplace(key)
        self._set_lane(key, None)
        self._nominate(key, None)
        pod = self.pods.pop(key, None)
        if pod is not None:
            self.gone_requests.pop(key, None)
            self.gone_requests[key] = dict(pod["requests"])
            while len(self.gone_requests) > GONE_REQUESTS_KEPT:
                del self.gone_requests[next(iter(self.gone_requests))]

    def _on_pod_deleted(self, e: te.PodDeletedFields) -> None:
        self._gone(e["pod"])

    def _on_pod_completed(self, e: te.PodCompletedFields) -> None:
        self._gone(e["pod"])

    def _on_node_usage(self, e: te.NodeUsageFields) -> None:
        # The engine's own numbers win over the folded ones (they are the same when the
        # trace is complete; a summary-detail trace still gets them right).
        for name, usage in e.get("nodes", {}).items():
            node = self._node(name)
            if node is not None:
                node["requested"] = dict(usage.get("requested", {}))
                if "gpu_used" in node and usage.get("gpu_free") is not None:
                    self._sync_gpus(node, usage["gpu_free"])

    def _sync_gpus(self, node: dict[str, Any], gpu_free: list[int]) -> None:
        node["gpu_used"] = [MILLI - int(free) for free in gpu_free]
        # Placed GPU pods whose GPUs the trace has not named yet (assumed, not bound) are in
        # the engine's numbers: binding them must not count them twice.
        for key in node["pods"]:
            pod = self.pods.get(key)
            if pod is not None and pod.get("gpu") is not None and "gpus" not in pod:
                pod["gpus_counted"] = True

    def _on_run_finished(self, e: te.RunFinishedFields) -> None:
        self.finished = True

    # -- derived views -------------------------------------------------------------------

    def node_bars(self, name: str) -> list[dict[str, Any]]:
        """Per resource: requested, nominated/reserved, allocatable and percentages, for bars."""
        node = self.nodes[name]
        held: dict[str, int] = {}
        for key in node["nominated"]:
            pod = self.pods.get(key)
            if pod is not None:
                _add(held, pod["requests"], +1)
        for key in node["reserved"]:
            pod = self.pods.get(key)
            requests = pod["requests"] if pod is not None else self.reserved_requests.get(key)
            if requests is not None:
                _add(held, requests, +1)
        bars = []
        for resource in (
            "cpu",
            "memory",
            *sorted(r for r in node["allocatable"] if r not in ("cpu", "memory", "pods")),
        ):
            cap = node["allocatable"].get(resource, 0)
            if not cap:
                continue
            used = node["requested"].get(resource, 0)
            if resource == GPU_RESOURCE and "gpu_used" in node and not used and not held.get(resource):
                continue  # drawn GPU by GPU (gpu_bars): GPU pods ask by annotation, not container requests
            extra = held.get(resource, 0)
            bars.append(
                {
                    "resource": resource,
                    "requested": used,
                    "held": extra,
                    "allocatable": cap,
                    "used_pct": min(100.0, 100.0 * used / cap),
                    "held_pct": max(0.0, min(100.0 - min(100.0, 100.0 * used / cap), 100.0 * extra / cap)),
                    "label": format_usage(resource, used, cap),
                }
            )
        return bars

    def gpu_bars(self, name: str) -> list[dict[str, Any]]:
        """One row per GPU of the node (none without GPUs): thousandths used and free, used %."""
        rows = []
        for index, raw in enumerate(self.nodes[name].get("gpu_used") or ()):
            used = max(0, min(MILLI, raw))
            rows.append(
                {
                    "index": index,
                    "used": used,
                    "free": MILLI - used,
                    "used_pct": round(100.0 * used / MILLI, 1),
                }
            )
        return rows


# Event type -> how it changes the view (typed per handler, as the narrations above).
_FOLDS: dict[str, Callable[[ViewState, Any], None]] = {
    "node_added": ViewState._on_node_added,
    "node_updated": ViewState._on_node_updated,
    "node_removed": ViewState._on_node_removed,
    "pod_added": ViewState._on_pod_added,
    "queue_move": ViewState._on_queue_move,
    "cycle_start": ViewState._on_cycle_start,
    "prefilter": ViewState._on_prefilter,
    "filter": ViewState._on_filter,
    "score": ViewState._on_score,
    "selected": ViewState._on_selected,
    "unschedulable": ViewState._on_unschedulable,
    "preemption": ViewState._on_preemption,
    "nomination_set": ViewState._on_nomination_set,
    "nomination_cleared": ViewState._on_nomination_cleared,
    "reservation_set": ViewState._on_reservation_set,
    "reservation_released": ViewState._on_reservation_released,
    "assumed": ViewState._on_assumed,
    "bound": ViewState._on_bound,
    "pod_running": ViewState._on_pod_running,
    "forgotten": ViewState._on_forgotten,
    "pod_deletion_started": ViewState._on_pod_deletion_started,
    "pod_deleted": ViewState._on_pod_deleted,
    "pod_completed": ViewState._on_pod_completed,
    "node_usage": ViewState._on_node_usage,
    "run_finished": ViewState._on_run_finished,
}
