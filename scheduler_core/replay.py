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
from typing import Any

from .gpu_request import GPU_MODEL_LABEL, GPU_RESOURCE, MILLI
from .tie_break import describe_tie
from .units import format_usage

__all__ = ["ViewState", "narrate", "NARRATION_LINES", "GPU_MILLI"]

NARRATION_LINES = 40
GONE_REQUESTS_KEPT = 64  # deleted pods whose requests a reservation may still need
LANES = ("active", "backoff", "unschedulable")
GPU_MILLI = MILLI  # one whole GPU in thousandths, as node_view reads it


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


def _event_notes(notes: list[dict[str, Any]]) -> str:
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


def narrate(event: dict[str, Any]) -> str | None:
    """One plain-language line for the events a learner cares about, or None."""
    t = event["type"]
    pod = _short(event.get("pod"))
    node = event.get("node")
    if t == "cycle_start":
        return f"Scheduling {pod} (attempt {event['attempt']}, priority {event['priority']})."
    if t == "selected":
        how = "the only node that fits" if event.get("score") is None else f"best score {event['score']}"
        tie = describe_tie(event)
        how = f"{how}, {tie}" if tie else how
        return f"{pod} → {node}: {event['feasible']} of {event['evaluated']} evaluated nodes fit; {node} has {how}."
    if t == "unschedulable":
        return f"{pod} cannot be scheduled: {event['message']}"
    if t == "preemption":
        if not event.get("eligible"):
            return f"{pod} may not preempt: {event.get('reason')}"
        if event.get("chosen"):
            victims = ", ".join(_short(v["pod"]) for v in event.get("victims", []))
            decided = str(event.get("decided_by") or "").replace("_", " ")
            return f"{pod} preempts {victims} on {event['chosen']} (decided by {decided})."
        return f"Preemption cannot help {pod}: {event.get('reason')}"
    if t == "nomination_set":
        return f"{pod} is nominated to {node}: its place there is held while victims terminate."
    if t == "nomination_cleared":
        return f"{pod} loses its nomination on {node} ({event.get('reason')})."
    if t == "bound":
        return f"{pod} is bound to {node}."
    if t == "pod_deletion_started":
        grace = f"{event['grace_ms'] / 1000:g}s"
        start = f"{pod} is being deleted from {node} ({event.get('reason')}); it has {grace} to stop."
        if "events" in event:  # QueueingHints: the update goes to the hints as AssignedPodUpdate
            return f"{start} Its deletionTimestamp is a pod update. " + _event_notes(event["events"])
        return (
            f"{start} Its deletionTimestamp is an 'other' pod update, which no default plugin listens for:"
            " no parked pod moves until it is gone."
        )
    if t == "pod_deleted":
        gone = f"{pod} is gone" + (f" from {node}" if node else "") + f" ({event.get('reason')})."
        return f"{gone} " + _event_notes(event["events"]) if "events" in event else gone
    if t == "pod_completed":
        return f"{pod} finished on {node} and freed its resources."
    if t == "queue_move" and event.get("to") in ("active", "backoff") and event.get("from") == "unschedulable":
        return f"{pod} moves from unschedulable to {event['to']}Q ({event.get('trigger')})."
    if t == "reservation_set":
        return f"{pod}'s place on {node} is reserved for its replacement."
    if t == "reservation_released":
        return f"The reservation for {pod} on {node} is released ({event.get('reason')})."
    if t == "rollout_started":
        return f"{event['workload']} starts a rollout to revision {event.get('revision')} ({event.get('image')})."
    if t == "rollout_completed":
        return f"{event['workload']} completed its rollout in {event.get('duration_ms', 0) / 1000:g}s."
    if t == "eviction":
        verdict = "evicted" if event.get("allowed") else "refused"
        return f"Eviction of {pod} from {node}: {verdict} — {event.get('reason')}"
    if t == "node_updated" and "events" in event:
        return f"Node {node}'s {event['change']} changed. " + _event_notes(event["events"])
    if t == "pod_updated":
        where = f" on {node}" if node else " (pending)"
        notes = _event_notes(event["events"]) if event["events"] else "The pending pod itself is updated."
        return f"{pod}{where} has new labels. " + notes
    if t == "node_updated":
        return f"Node {node} is {event.get('change')}ed."
    if t == "action" and event.get("fork_seq") is not None:
        return f"What if? {event.get('what_if') or event['action']} (forked at event {event['fork_seq']})."
    if t == "action" and event.get("refused"):
        return f"Timeline: {event['action']} refused by the API server: {event['refused']}."
    if t == "action":
        return f"Timeline: {event['action']} {event.get('target', '')}".rstrip() + "."
    if t == "pod_added" and event.get("problem"):
        return f"{pod} is created, but {event['problem']}."
    if t == "run_finished" and event.get("reason"):
        return f"The run ends — {event['reason']}."
    return None


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

    def apply(self, event: dict[str, Any]) -> None:
        self.seq = event["seq"]
        self.t_ms = event["t_ms"]
        self.cycle = event.get("cycle", self.cycle)
        handler = getattr(self, f"_on_{event['type']}", None)
        if handler is not None:
            handler(event)
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

    def _on_node_added(self, e: dict[str, Any]) -> None:
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

    def _on_node_updated(self, e: dict[str, Any]) -> None:
        node = self._node(e["node"])
        if node is not None:
            node["unschedulable"] = e.get("unschedulable", node["unschedulable"])
            for key in ("labels", "taints", "allocatable"):
                if key in e:
                    node[key] = copy.deepcopy(e[key])

    def _on_node_removed(self, e: dict[str, Any]) -> None:
        self.nodes.pop(e["node"], None)

    def _on_pod_added(self, e: dict[str, Any]) -> None:
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

    def _on_queue_move(self, e: dict[str, Any]) -> None:
        self._set_lane(e["pod"], e["to"])
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["backoff_until_ms"] = e.get("backoff_until_ms")

    def _on_cycle_start(self, e: dict[str, Any]) -> None:
        self._set_lane(e["pod"], None)
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["attempts"] = e.get("attempt", pod["attempts"] + 1)
            pod["phase"] = "scheduling"
        self.current = {"pod": e["pod"], "attempt": e.get("attempt"), "cycle": e.get("cycle"), "t_ms": e["t_ms"]}

    def _on_prefilter(self, e: dict[str, Any]) -> None:
        self.current["prefilter"] = {k: e.get(k) for k in ("code", "plugin", "reasons")}

    def _on_filter(self, e: dict[str, Any]) -> None:
        self.current["filter"] = {
            "evaluated": e.get("evaluated"),
            "feasible": e.get("feasible"),
            "histogram": e.get("histogram", {}),
            "results": e.get("results"),
            "nominated_node": e.get("nominated_node"),
        }

    def _on_score(self, e: dict[str, Any]) -> None:
        self.current["score"] = {
            "plugins": e.get("plugins", []),
            "nodes": e.get("nodes", {}),
            "totals": e.get("totals", {}),
        }

    def _on_selected(self, e: dict[str, Any]) -> None:
        self.current["selected"] = e["node"]
        self.current["top"] = e.get("top", [])
        tie = describe_tie(e)
        if tie:
            self.current["tie"] = tie

    def _on_unschedulable(self, e: dict[str, Any]) -> None:
        self.current["selected"] = None
        self.current["message"] = e["message"]
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["message"] = e["message"]
            pod["phase"] = "pending"

    def _on_preemption(self, e: dict[str, Any]) -> None:
        self.current["preemption"] = {
            k: e.get(k)
            for k in ("eligible", "reason", "candidates", "chosen", "decided_by", "victims", "rejected_nodes")
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

    def _on_nomination_set(self, e: dict[str, Any]) -> None:
        self._nominate(e["pod"], e["node"])
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["nominated"] = e["node"]

    def _on_nomination_cleared(self, e: dict[str, Any]) -> None:
        self._nominate(e["pod"], None)
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["nominated"] = None

    def _on_reservation_set(self, e: dict[str, Any]) -> None:
        node = self._node(e["node"])
        if node is not None:
            node["reserved"].append(e["pod"])
        pod = self.pods.get(e["pod"])
        requests = pod["requests"] if pod is not None else self.gone_requests.get(e["pod"])
        if requests is not None:
            self.reserved_requests[e["pod"]] = dict(requests)

    def _on_reservation_released(self, e: dict[str, Any]) -> None:
        node = self._node(e["node"])
        if node is not None and e["pod"] in node["reserved"]:
            node["reserved"].remove(e["pod"])
        if not any(e["pod"] in n["reserved"] for n in self.nodes.values()):
            self.reserved_requests.pop(e["pod"], None)

    def _on_assumed(self, e: dict[str, Any]) -> None:
        self._nominate(e["pod"], None)
        self._place(e["pod"], e["node"], "assumed")
        self._hold_gpus(e["pod"], e.get("gpus"))

    def _on_bound(self, e: dict[str, Any]) -> None:
        self._place(e["pod"], e["node"], "bound")
        self._hold_gpus(e["pod"], e.get("gpus"))
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["nominated"] = None
            pod["message"] = None

    def _on_pod_running(self, e: dict[str, Any]) -> None:
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["phase"] = "running"

    def _on_forgotten(self, e: dict[str, Any]) -> None:
        self._unplace(e["pod"])
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["phase"] = "pending"

    def _on_pod_deletion_started(self, e: dict[str, Any]) -> None:
        pod = self.pods.get(e["pod"])
        if pod is not None:
            pod["phase"] = "terminating"
            pod["terminating_until_ms"] = e["t_ms"] + e.get("grace_ms", 0)

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

    def _on_pod_deleted(self, e: dict[str, Any]) -> None:
        self._gone(e["pod"])

    def _on_pod_completed(self, e: dict[str, Any]) -> None:
        self._gone(e["pod"])

    def _on_node_usage(self, e: dict[str, Any]) -> None:
        # The engine's own numbers win over the folded ones (they are the same when the
        # trace is complete; a summary-detail trace still gets them right).
        for name, usage in e.get("nodes", {}).items():
            node = self._node(name)
            if node is not None:
                node["requested"] = dict(usage.get("requested", {}))
                if "gpu_used" in node and usage.get("gpu_free") is not None:
                    self._sync_gpus(node, usage["gpu_free"])

    def _sync_gpus(self, node: dict[str, Any], gpu_free: list[int]) -> None:
        node["gpu_used"] = [GPU_MILLI - int(free) for free in gpu_free]
        # Placed GPU pods whose GPUs the trace has not named yet (assumed, not bound) are in
        # the engine's numbers: binding them must not count them twice.
        for key in node["pods"]:
            pod = self.pods.get(key)
            if pod is not None and pod.get("gpu") is not None and "gpus" not in pod:
                pod["gpus_counted"] = True

    def _on_run_finished(self, e: dict[str, Any]) -> None:
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
            used = max(0, min(GPU_MILLI, raw))
            rows.append(
                {
                    "index": index,
                    "used": used,
                    "free": GPU_MILLI - used,
                    "used_pct": round(100.0 * used / GPU_MILLI, 1),
                }
            )
        return rows
