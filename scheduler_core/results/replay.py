"""Replaying a trace into the state a viewer sees at any moment.

The web shows a run by folding its trace events into a :class:`ViewState`: node bars,
the three queue lanes, pod chips, the last scheduling cycle and a narration in plain
words. Stored snapshots are ``ViewState.as_dict()``; stepping back or jumping loads the
nearest snapshot and applies the events after it — the engine never runs again.

GPUs (docs/trace.md): a node with ``nvidia.com/gpu`` allocatable gets ``gpu_used`` (thousandths
used per GPU, a short list of ints so snapshots and frames of big clusters stay small) and
``gpu_model``; a GPU pod gets ``gpu`` (its request) and, once placed, ``gpus`` (the GPUs it holds).
Rows of nodes and pods without GPUs have none of these keys.

Dynamic Resource Allocation (docs/dra.md): ``slices`` holds each ResourceSlice's devices (name,
capacities as quantity text, whether several claims may share it, a few attributes), ``claims``
each ResourceClaim (its requests, the devices of its allocation and the pods in its
``reservedFor``). Which claims hold a device, and which slices a node reaches, are indexes
rebuilt from those two (never stored), so a snapshot carries each fact once. A pod that uses
claims gets ``claims`` (their names). Runs without DRA have none of these keys' contents.
"""

from __future__ import annotations

import copy
import re
from collections import deque
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from ..api.gpu_request import GPU_MODEL_LABEL, GPU_RESOURCE, MILLI
from ..api.quantity import QuantityError, parse_quantity
from ..api.units import format_bytes, format_usage
from ..scheduler.tie_break import describe_tie
from ..trace import events as te

__all__ = ["ViewState", "narrate", "NARRATION_LINES", "capacity_text", "device_key"]

NARRATION_LINES = 40
GONE_REQUESTS_KEPT = 64  # deleted pods whose requests a reservation may still need
LANES = ("active", "backoff", "unschedulable")
DEVICE_ATTRIBUTES_KEPT = 3  # a device's first attributes, for its card row (the trace has them all)
ATTRIBUTE_CHARS = 24


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


# -- Dynamic Resource Allocation: quantities and device names as a learner reads them ------------

_QUANTITY_PARTS = re.compile(r"^\s*([+-]?[0-9.]+)(Ki|Mi|Gi|Ti|Pi|Ei|[kMGTPE])?\s*$")


def capacity_text(text: str) -> str:
    """A device capacity's quantity as a person reads it: ``80Gi`` → ``80 Gi``, ``40G`` → ``40 G``,
    ``500m`` → ``0.5``, ``108`` → ``108``; binary amounts that are not whole (``81920Mi``) in
    the largest unit (``80 Gi``). Text that is no quantity is shown as it is."""
    try:
        value = parse_quantity(text)
    except QuantityError:
        return str(text)
    match = _QUANTITY_PARTS.match(str(text))
    suffix = match.group(2) if match else None
    if suffix and suffix.endswith("i") and value.denominator == 1:
        return format_bytes(int(value))
    if suffix and match:
        return f"{match.group(1)} {suffix}"
    return _number(value)


def _number(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.6g}"


def _like(value: Fraction, like: str) -> str:
    """``value`` written in the unit of ``like`` (a capacity's quantity text), as capacity_text would."""
    if value == 0:
        return "0"
    match = _QUANTITY_PARTS.match(str(like))
    suffix = match.group(2) if match else None
    if suffix and suffix.endswith("i") and value.denominator == 1:
        return format_bytes(int(value))
    if suffix and not suffix.endswith("i"):
        scale = parse_quantity(f"1{suffix}")
        return f"{_number(value / scale)} {suffix}"
    return _number(value)


def _fraction(text: Any) -> Fraction | None:
    try:
        return parse_quantity(text)
    except QuantityError:
        return None


def _bare(name: str, driver: str) -> str:
    """A qualified attribute or capacity name without its domain when that is the driver's: the
    API's own shorthand (a bare name belongs to the device's driver), half the bytes."""
    domain, _, bare = name.rpartition("/")
    return bare if domain == driver else name


def _attribute(value: Any) -> str:
    text = str(value).lower() if isinstance(value, bool) else str(value)
    return text if len(text) <= ATTRIBUTE_CHARS else text[: ATTRIBUTE_CHARS - 1] + "…"


def device_key(driver: str, pool: str, device: str) -> str:
    """One device's key: device names are unique within a pool, pools within a driver."""
    return f"{driver}/{pool}/{device}"


def _count_text(count: int | str, device_class: str) -> str:
    if count == "All":
        return f"all devices of class {device_class}"
    return f"{count} device{'s' if count != 1 else ''} of class {device_class}"


def _request_text(row: Mapping[str, Any]) -> str:
    if row.get("alternatives"):
        return f"{row['name']}: first available of " + ", then ".join(row["alternatives"])
    return f"{row['name']}: " + _count_text(row.get("count", 1), str(row.get("device_class", "")))


def _allocated_device_text(row: Mapping[str, Any]) -> str:
    where = f" on {row['node']}" if row.get("node") else " (network-attached)"
    text = f"{row['device']}{where} for request {row['request']}"
    consumed = row.get("consumed") or {}
    if consumed:
        parts = ", ".join(f"{capacity_text(v)} of {k.rpartition('/')[2]}" for k, v in sorted(consumed.items()))
        text += f" (shares the device, taking {parts})"
    return text


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
    if e.get("reason") == "expected placement":  # v1.36 NominatedNodeNameForExpectation, no preemption
        return (
            f"{_short(e['pod'])} is nominated to {e['node']}: its expected placement while it binds,"
            " so others see where it is expected to land."
        )
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


def _say_resource_slice_added(e: te.ResourceSliceAddedFields) -> str:
    count = len(e["devices"])
    devices = f"{count} device{'s' if count != 1 else ''}"
    if e.get("node"):
        where = f"on node {e['node']}"
    else:
        reach = len(e.get("nodes") or [])
        where = f"reachable from {reach} node{'s' if reach != 1 else ''}"
    return f"ResourceSlice {e['slice']}: driver {e['driver']} publishes {devices} {where} (pool {e['pool']})."


def _say_claim_added(e: te.ClaimAddedFields) -> str:
    asks = "; ".join(_request_text(row) for row in e["requests"]) or "no devices"
    head = f"ResourceClaim {_short(e['claim'])}"
    if e.get("pod"):
        head += f" is generated for {_short(e['pod'])}"
        head += f" from ResourceClaimTemplate {e['template']}" if e.get("template") else ""
    else:
        head += " exists"
    tail = " It is already allocated." if e.get("allocated") else ""
    return f"{head}; it asks for {asks}.{tail}"


def _say_claim_allocated(e: te.ClaimAllocatedFields) -> str:
    devices = "; ".join(_allocated_device_text(row) for row in e["devices"]) or "no device"
    return (
        f"{_short(e['claim'])} is allocated for {_short(e['pod'])} on {e['node']}: {devices}."
        f" {_short(e['pod'])} is in its reservedFor."
    )


def _say_claim_reserved(e: te.ClaimReservedFields) -> str:
    return f"{_short(e['pod'])} joins the reservedFor of {_short(e['claim'])}: it uses the same devices."


def _say_claim_released(e: te.ClaimReleasedFields) -> str:
    return f"{_short(e['pod'])} leaves the reservedFor of {_short(e['claim'])} ({e['reason']})."


def _say_claim_deallocated(e: te.ClaimDeallocatedFields) -> str:
    return f"{_short(e['claim'])}'s allocation is cleared: its devices are free again ({e['reason']})."


def _say_claim_deleted(e: te.ClaimDeletedFields) -> str:
    return f"ResourceClaim {_short(e['claim'])} is deleted ({e['reason']})."


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
    "resource_slice_added": _say_resource_slice_added,
    "claim_added": _say_claim_added,
    "claim_allocated": _say_claim_allocated,
    "claim_reserved": _say_claim_reserved,
    "claim_released": _say_claim_released,
    "claim_deallocated": _say_claim_deallocated,
    "claim_deleted": _say_claim_deleted,
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
        # Dynamic Resource Allocation (the module's docstring): stored, then indexes built from them.
        self.slices: dict[str, dict[str, Any]] = {}
        self.claims: dict[str, dict[str, Any]] = {}
        self._reach: dict[str, list[str]] = {}  # node -> the slices whose devices it can reach
        self._holders: dict[str, list[str]] = {}  # device_key -> the claims allocated it

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
            "slices": take(self.slices),
            "claims": take(self.claims),
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
        state.slices = copy.deepcopy(data.get("slices") or {})
        state.claims = copy.deepcopy(data.get("claims") or {})
        for name, row in state.slices.items():
            state._index_slice(name, row)
        for name, claim in state.claims.items():
            state._hold_devices(name, claim.get("devices") or [], +1)
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
        if e.get("devices"):  # a pod with claims: the allocator's account, per node
            self.current["filter"]["devices"] = {node: list(lines) for node, lines in e["devices"].items()}

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

    # -- Dynamic Resource Allocation -----------------------------------------------------

    def _index_slice(self, name: str, row: dict[str, Any]) -> None:
        for node in [row["node"]] if row.get("node") else row.get("nodes") or []:
            reach = self._reach.setdefault(node, [])
            if name not in reach:
                reach.append(name)

    def _hold_devices(self, claim: str, devices: list[dict[str, Any]], sign: int) -> None:
        for row in devices:
            key = device_key(row["driver"], row["pool"], row["device"])
            holders = self._holders.setdefault(key, [])
            if sign > 0 and claim not in holders:
                holders.append(claim)
            elif sign < 0 and claim in holders:
                holders.remove(claim)
            if not holders:
                del self._holders[key]

    def _pod_uses(self, pod_key: str | None, claim: str) -> None:
        pod = self.pods.get(pod_key) if pod_key else None
        if pod is not None and claim not in pod.setdefault("claims", []):
            pod["claims"].append(claim)

    def _on_resource_slice_added(self, e: te.ResourceSliceAddedFields) -> None:
        devices = []
        for device in e["devices"]:
            row: dict[str, Any] = {"name": device["name"]}
            if device.get("capacity"):
                row["capacity"] = {_bare(k, e["driver"]): str(v) for k, v in device["capacity"].items()}
            if device.get("shared"):
                row["shared"] = True
            attributes = list((device.get("attributes") or {}).items())[:DEVICE_ATTRIBUTES_KEPT]
            if attributes:
                row["attributes"] = {_bare(k, e["driver"]): _attribute(v) for k, v in attributes}
            devices.append(row)
        stored: dict[str, Any] = {"driver": e["driver"], "pool": e["pool"], "node": e.get("node"), "devices": devices}
        if not e.get("node"):
            stored["nodes"] = list(e.get("nodes") or [])
        old = self.slices.get(e["slice"])
        if old is not None:  # published again: drop it from the nodes it reached
            for reach in self._reach.values():
                if e["slice"] in reach:
                    reach.remove(e["slice"])
        self.slices[e["slice"]] = stored
        self._index_slice(e["slice"], stored)

    def _on_claim_added(self, e: te.ClaimAddedFields) -> None:
        claim: dict[str, Any] = {
            "requests": [dict(row) for row in e["requests"]],
            "devices": [],
            "node": None,
            "reserved_for": [],
        }
        if e.get("pod"):
            claim["pod"] = e["pod"]
        if e.get("template"):
            claim["template"] = e["template"]
        if e.get("allocated"):
            claim["allocated"] = True
        old = self.claims.get(e["claim"])
        if old is not None:
            self._hold_devices(e["claim"], old.get("devices") or [], -1)
        self.claims[e["claim"]] = claim
        self._pod_uses(e.get("pod"), e["claim"])

    def _on_claim_allocated(self, e: te.ClaimAllocatedFields) -> None:
        claim = self.claims.setdefault(e["claim"], {"requests": [], "devices": [], "node": None, "reserved_for": []})
        self._hold_devices(e["claim"], claim.get("devices") or [], -1)
        claim["devices"] = [dict(row) for row in e["devices"]]
        claim["node"] = e["node"]
        claim["allocated"] = True
        claim["reserved_for"] = [e["pod"]]
        self._hold_devices(e["claim"], claim["devices"], +1)
        self._pod_uses(e["pod"], e["claim"])

    def _on_claim_reserved(self, e: te.ClaimReservedFields) -> None:
        claim = self.claims.get(e["claim"])
        if claim is not None and e["pod"] not in claim["reserved_for"]:
            claim["reserved_for"].append(e["pod"])
        self._pod_uses(e["pod"], e["claim"])

    def _on_claim_released(self, e: te.ClaimReleasedFields) -> None:
        claim = self.claims.get(e["claim"])
        if claim is not None and e["pod"] in claim["reserved_for"]:
            claim["reserved_for"].remove(e["pod"])

    def _on_claim_deallocated(self, e: te.ClaimDeallocatedFields) -> None:
        claim = self.claims.get(e["claim"])
        if claim is not None:
            self._hold_devices(e["claim"], claim.get("devices") or [], -1)
            claim["devices"] = []
            claim["node"] = None
            claim.pop("allocated", None)

    def _on_claim_deleted(self, e: te.ClaimDeletedFields) -> None:
        claim = self.claims.pop(e["claim"], None)
        if claim is not None:
            self._hold_devices(e["claim"], claim.get("devices") or [], -1)

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

    # -- devices (DRA) -------------------------------------------------------------------

    @property
    def has_devices(self) -> bool:
        """The cluster has published ResourceSlices with devices."""
        return any(row["devices"] for row in self.slices.values())

    def node_slices(self, name: str) -> list[dict[str, Any]]:
        """The slices whose devices node ``name`` can reach (its own first, then network-attached
        ones), each device with the claims that hold it: which request, the pods in the claim's
        reservedFor, the capacity it consumes, and for a shared device what is left."""
        names = self._reach.get(name) or []
        ordered = sorted(names, key=lambda s: (self.slices[s].get("node") != name, s))
        return [self._slice_view(slice_name, name) for slice_name in ordered if slice_name in self.slices]

    def _slice_view(self, slice_name: str, node: str) -> dict[str, Any]:
        row = self.slices[slice_name]
        devices = [self._device_view(row["driver"], row["pool"], device) for device in row["devices"]]
        return {
            "slice": slice_name,
            "driver": row["driver"],
            "pool": row["pool"],
            "local": row.get("node") == node,
            "reach": 1 if row.get("node") else len(row.get("nodes") or []),
            "devices": devices,
            "in_use": sum(1 for d in devices if d["holders"]),
        }

    def _device_view(self, driver: str, pool: str, device: dict[str, Any]) -> dict[str, Any]:
        holders = []
        consumed_total: dict[str, Fraction] = {}
        for claim_name in self._holders.get(device_key(driver, pool, device["name"])) or []:
            claim = self.claims.get(claim_name) or {}
            for row in claim.get("devices") or []:
                if row["driver"] != driver or row["pool"] != pool or row["device"] != device["name"]:
                    continue
                consumed = {_bare(k, driver): str(v) for k, v in (row.get("consumed") or {}).items()}
                for cap, text in consumed.items():
                    amount = _fraction(text)
                    if amount is not None:
                        consumed_total[cap] = consumed_total.get(cap, Fraction(0)) + amount
                holders.append(
                    {
                        "claim": claim_name,
                        "request": row["request"],
                        "pods": list(claim.get("reserved_for") or []),
                        "consumed": consumed,
                    }
                )
        capacity = dict(device.get("capacity") or {})
        used = 0.0
        left: dict[str, str] = {}
        shares: list[dict[str, Any]] = []  # a shared device: each capacity, taken and left
        if device.get("shared"):
            for cap, text in capacity.items():
                total = _fraction(text)
                taken = consumed_total.get(cap, Fraction(0))
                if total is None:
                    continue
                left[cap] = _like(total - taken, text)
                share = float(min(Fraction(1), taken / total)) if total > 0 else 0.0
                used = max(used, share)
                shares.append(
                    {
                        "name": cap,
                        "total": capacity_text(text),
                        "taken": _like(taken, text),
                        "left": left[cap],
                        "used": share,
                    }
                )
        elif holders:
            used = 1.0
        return {
            "name": device["name"],
            "capacity": capacity,
            "shared": bool(device.get("shared")),
            "attributes": dict(device.get("attributes") or {}),
            "holders": holders,
            "left": left,
            "shares": shares,
            "used": used,
        }

    def device_share(self, name: str) -> tuple[int, float] | None:
        """(devices node ``name`` can reach, how many of them are in use): an exclusive device held
        by a claim counts 1, a shared device the largest share of a capacity its claims consume.
        None for a node that reaches no device."""
        total = 0
        used = 0.0
        for slice_view in self.node_slices(name):
            for device in slice_view["devices"]:
                total += 1
                used += device["used"]
        return (total, used) if total else None

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
    "resource_slice_added": ViewState._on_resource_slice_added,
    "claim_added": ViewState._on_claim_added,
    "claim_allocated": ViewState._on_claim_allocated,
    "claim_reserved": ViewState._on_claim_reserved,
    "claim_released": ViewState._on_claim_released,
    "claim_deallocated": ViewState._on_claim_deallocated,
    "claim_deleted": ViewState._on_claim_deleted,
}
