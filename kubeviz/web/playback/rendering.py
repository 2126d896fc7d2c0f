"""Turning a run's :class:`~scheduler_core.results.ViewState` into what the run page's partials show.

The run page and the frames its playback websocket sends (:mod:`kubeviz.web.playback.run_frames`),
and the comparison columns, render the same partials from the same contexts, built here.
Everything is plain data (dicts, lists, strings); the templates escape it. A time and a pod's
name are written by :mod:`kubeviz.web.services.formats`, as everywhere else.
"""

from __future__ import annotations

import math
import re
from typing import Any

from scheduler_core.api import format_amount
from scheduler_core.results import ViewState

from ..charts import ChartSeries, format_seconds, line_chart, node_bars_chart
from ..models import Run, RunStatus
from ..services.formats import format_time, short_pod

__all__ = [
    "cycle_context",
    "device_account",
    "lanes_context",
    "narration_context",
    "node_dom_id",
    "pod_chip",
    "gpu_amount",
    "gpu_text",
    "priority_band",
    "priority_hue",
    "priority_tone",
    "priority_legend",
    "summary_context",
    "taint_text",
]

MAX_NODE_BARS = 48  # past this the summary's final allocation is one chart, not a bar row per node
MAX_LANE_CHIPS = 24  # the next pods to pop; the rest is counted ("+N more")
MAX_FILTER_ROWS = 40
MAX_SCORE_ROWS = 12
NARRATION_SHOWN = 30
MESSAGE_CHARS = 70
MAX_DEVICE_NODES = 12  # nodes whose allocator account the cycle panel lists; the rest is counted

LANES = (
    ("active", "activeQ", "Ready to be tried: the next pop is the highest priority."),
    ("backoff", "backoffQ", "Failed recently; waiting out an exponential backoff."),
    ("unschedulable", "Unschedulable", "Waiting for a cluster change that might let them fit."),
)

DECIDED_BY = {
    "only_candidate": "it was the only node where evicting pods would make room",
    "fewest_pdb_violations": "it breaks the fewest PodDisruptionBudgets",
    "lowest_highest_priority": "its most important victim has the lowest priority",
    "smallest_priority_sum": "its victims' priorities add up to the least",
    "fewest_victims": "it needs the fewest victims",
    "latest_start_time": "its victims started most recently (least work lost)",
    "first_candidate": "all criteria tied, so the first candidate won",
}


# -- small formatters (a time, a pod's name: services/formats.py) -----------------------

PRIORITY_BANDS = 19  # half-decades from 1 to 10^9; 0 and below are band 0, 10^9 and above the last
PRIORITY_TONES = 4  # background lightness steps: static/kubeviz/run.css .tone-0 … .tone-3


def priority_band(priority: int | None) -> int:
    """Which half-decade of priority: 0 for 0 and below, 1 for 1–3, 2 for 4–9, … 19 from 10^9."""
    if not priority or priority <= 0:
        return 0
    return min(PRIORITY_BANDS, math.floor(2 * math.log10(priority)) + 1)


def priority_hue(priority: int | None) -> int:
    """Blue for priority 0 through green and yellow to red for system-critical, one step per
    half-decade (a log scale: PriorityClasses span 0 to 2·10^9)."""
    return round(215 - 215 * priority_band(priority) / PRIORITY_BANDS)


def priority_tone(priority: int | None) -> str:
    """The chip's lightness class. Neighbouring half-decades (100 and 500, say) are only some
    15° of hue apart, too close to tell apart on a pale chip, so the lightness steps too; four
    steps keep classes up to two decades apart from sharing one."""
    return f"tone-{priority_band(priority) % PRIORITY_TONES}"


def node_dom_id(name: str) -> str:
    """A stable element id for a node card (node names are DNS subdomains; anything else becomes -)."""
    return "node-" + "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "-" for c in name)


def _requests_text(requests: dict[str, int]) -> str:
    return ", ".join(f"{r} {format_amount(r, v)}" for r, v in sorted(requests.items())) or "no requests"


def gpu_amount(milli: int) -> str:
    """An amount of GPU in GPUs, as a learner reads it: 1000 thousandths are ``"1 GPU"``, 500 are
    ``"0.5 GPU"``, 2250 are ``"2.25 GPU"``, 0 is ``"0 GPU"``, 333 is ``"0.333 GPU"``. The engine counts
    thousandths of a GPU (the trace's ``gpu-milli``), but "1000m" reads as a CPU quantity and means
    nothing to someone learning what a GPU share is."""
    return f"{round(max(0, milli) / 1000, 3):g} GPU"


def gpu_text(gpu: dict[str, Any], gpus: list[int] | None = None) -> str:
    """A GPU request in words: "0.5 GPU", "2 GPU (V100M16)", plus the GPUs held ("on GPU 0, 3")."""
    count, milli = int(gpu.get("count", 1)), int(gpu.get("milli", 1000))
    amount = gpu_amount(count * milli)
    models = gpu.get("models") or []
    if models:
        amount += f" ({' or '.join(models)})"
    if gpus:
        amount += f" on GPU {', '.join(str(i) for i in gpus)}"
    return amount


def _truncate(text: str | None, limit: int = MESSAGE_CHARS) -> str:
    if not text:
        return ""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _camel_parts(name: str) -> list[str]:
    """``NodeResourcesFit`` → ``["Node", "Resources", "Fit"]``, so long plugin names can wrap."""
    return re.findall(r"[A-Z][a-z]*|[^A-Z]+", name) or [name]


def taint_text(taint: Any) -> str:
    if isinstance(taint, dict):
        key = taint.get("key", "")
        value = taint.get("value")
        effect = taint.get("effect", "")
        return f"{key}={value}:{effect}" if value else f"{key}:{effect}"
    return str(taint)


# -- pods --------------------------------------------------------------------------------


def pod_chip(state: ViewState, key: str, note: str = "", note_title: str = "") -> dict[str, Any]:
    """What a pod chip shows: short name, colour, a tooltip, and marks for victims/terminating."""
    pod = state.pods.get(key) or {}
    priority = pod.get("priority", 0)
    phase = pod.get("phase", "gone" if not pod else "pending")
    victim_of = pod.get("victim_of")
    title = [key, f"priority {priority}", _requests_text(pod.get("requests", {})), f"phase {phase}"]
    if pod.get("gpu"):
        title.insert(3, gpu_text(pod["gpu"], pod.get("gpus")))
    if pod.get("node"):
        title.append(f"on {pod['node']}")
    if pod.get("nominated"):
        title.append(f"nominated to {pod['nominated']}")
    if pod.get("attempts"):
        title.append(f"{pod['attempts']} attempt(s)")
    if victim_of:
        title.append(f"preempted by {victim_of}")
    if phase == "terminating" and pod.get("terminating_until_ms") is not None:
        title.append(f"gone at {format_time(pod['terminating_until_ms'])}")
    if note_title:
        title.append(note_title)
    classes = [f"phase-{phase}", priority_tone(priority)]
    if victim_of:
        classes.append("victim")
    if phase == "terminating":
        classes.append("terminating")
    return {
        "key": key,
        "name": short_pod(key),
        "priority": priority,
        "hue": priority_hue(priority),
        "title": " · ".join(title),
        "classes": " ".join(classes),
        "victim": bool(victim_of),
        "terminating": phase == "terminating",
        "note": note,
    }


def _chips(state: ViewState, keys: list[str], limit: int) -> tuple[list[dict[str, Any]], int]:
    return [pod_chip(state, k) for k in keys[:limit]], max(0, len(keys) - limit)


def priority_legend(state: ViewState, limit: int = 8) -> list[dict[str, Any]]:
    priorities = sorted({p.get("priority", 0) for p in state.pods.values()}, reverse=True)
    if len(priorities) > limit:  # keep the extremes and an even spread between them
        step = (len(priorities) - 1) / (limit - 1)
        priorities = [priorities[round(i * step)] for i in range(limit)]
    return [{"priority": p, "hue": priority_hue(p), "tone": priority_tone(p)} for p in priorities]


# -- sections ----------------------------------------------------------------------------


def lanes_context(state: ViewState) -> list[dict[str, Any]]:
    lanes = []
    for key, title, blurb in LANES:
        keys = list(state.lanes.get(key, []))
        if key == "active":  # the heap pops the highest priority first
            keys.sort(key=lambda k: -(state.pods.get(k) or {}).get("priority", 0))
        elif key == "backoff":
            keys.sort(key=lambda k: (state.pods.get(k) or {}).get("backoff_until_ms") or 0)
        chips = []
        for pod_key in keys[:MAX_LANE_CHIPS]:
            pod = state.pods.get(pod_key) or {}
            if key == "backoff" and pod.get("backoff_until_ms") is not None:
                chips.append(pod_chip(state, pod_key, note=f"until {format_time(pod['backoff_until_ms'])}"))
            elif key == "unschedulable" and pod.get("message"):
                chips.append(pod_chip(state, pod_key, note=_truncate(pod["message"]), note_title=pod["message"]))
            else:
                chips.append(pod_chip(state, pod_key))
        lanes.append(
            {
                "key": key,
                "title": title,
                "blurb": blurb,
                "count": len(keys),
                "chips": chips,
                "more": max(0, len(keys) - MAX_LANE_CHIPS),
            }
        )
    return lanes


def cycle_context(state: ViewState, detail: str = "full", *, compact: bool = False) -> dict[str, Any]:
    """The latest cycle, phase by phase. ``compact`` (a big cluster): the filter's reason
    histogram instead of one row per node, whatever the detail level."""
    current = state.current
    if not current.get("pod"):
        return {"empty": True}
    ctx: dict[str, Any] = {
        "empty": False,
        "pod": pod_chip(state, current["pod"]),
        "pod_key": current["pod"],
        "attempt": current.get("attempt"),
        "cycle": current.get("cycle"),
        "t": format_time(current.get("t_ms")),
        "selected": current.get("selected"),
        "tie": current.get("tie"),  # how the node won a tie at the best score, in words
        "decided": "selected" in current,
        "message": current.get("message"),
        "prefilter": current.get("prefilter"),
    }
    flt = current.get("filter")
    if flt:
        results = flt.get("results")
        counts = dict(flt.get("histogram") or {})
        if not counts and compact:
            for row in results or []:
                for reason in row.get("reasons") or []:
                    if row.get("code") != "Success":
                        counts[reason] = counts.get(reason, 0) + 1
        histogram = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        rows = []
        for row in (results or [])[:MAX_FILTER_ROWS]:
            ok = row.get("code") == "Success"
            rows.append(
                {
                    "node": row.get("node"),
                    "plugin": row.get("plugin") or "",
                    "code": row.get("code"),
                    "reasons": "; ".join(row.get("reasons") or []) or ("fits" if ok else ""),
                    "ok": ok,
                }
            )
        ctx["filter"] = {
            "evaluated": flt.get("evaluated"),
            "feasible": flt.get("feasible"),
            "nominated_node": flt.get("nominated_node"),
            "rows": rows,
            "rows_more": max(0, len(results or []) - MAX_FILTER_ROWS),
            "histogram": histogram,
            "summary": results is None or detail == "summary" or compact,
            "compact": compact and results is not None and detail != "summary",
            "devices": device_account(flt),
        }
    score = current.get("score")
    if score:
        plugins = score.get("plugins") or []
        per_node = score.get("nodes") or {}
        totals = score.get("totals") or {}
        ranked = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))
        rows = []
        for node, total in ranked[:MAX_SCORE_ROWS]:
            cells = []
            for plugin in plugins:
                cell = (per_node.get(node) or {}).get(plugin["plugin"])
                cells.append(cell or {})
            rows.append({"node": node, "cells": cells, "total": total, "chosen": node == current.get("selected")})
        headers = [{**p, "parts": _camel_parts(str(p.get("plugin", "")))} for p in plugins]
        ctx["score"] = {"plugins": headers, "rows": rows, "more": max(0, len(ranked) - MAX_SCORE_ROWS)}
    preemption = current.get("preemption")
    if preemption:
        chosen = preemption.get("chosen")
        candidates = []
        for cand in preemption.get("candidates") or []:
            victims = [v["pod"] if isinstance(v, dict) else v for v in cand.get("victims") or []]
            candidates.append(
                {
                    "node": cand.get("node"),
                    "victims": [short_pod(v) for v in victims],
                    "pdb_violations": cand.get("pdb_violations", 0),
                    "chosen": cand.get("node") == chosen,
                }
            )
        decided_by = preemption.get("decided_by") or ""
        ctx["preemption"] = {
            "eligible": preemption.get("eligible"),
            "reason": preemption.get("reason"),
            "chosen": chosen,
            "candidates": candidates,
            "decided_by": decided_by.replace("_", " "),
            "decided_why": DECIDED_BY.get(decided_by, ""),
            "victims": [
                {"name": short_pod(v["pod"]), "priority": v.get("priority"), "chip": pod_chip(state, v["pod"])}
                for v in preemption.get("victims") or []
            ],
            "rejected_nodes": sorted((preemption.get("rejected_nodes") or {}).items()),
            "nominations_cleared": [
                short_pod(p if isinstance(p, str) else p.get("pod", "?"))
                for p in preemption.get("nominations_cleared") or []
            ],
        }
    return ctx


def device_account(flt: dict[str, Any]) -> dict[str, Any] | None:
    """The filter's per-node account of a pod's device requests (DynamicResources: the trace's
    ``filter.devices``), rejected nodes first, for the cycle panel; None for a pod without claims.

    Each row: the node, whether it fits (from the filter's results; None when only a summary was
    recorded) and the allocator's lines ("request gpu asks 1 device of class …: 0 usable on
    node-2 (2 already allocated to other claims)")."""
    devices = flt.get("devices") or {}
    if not devices:
        return None
    verdicts = {row.get("node"): row.get("code") == "Success" for row in flt.get("results") or []}
    order = {node: i for i, node in enumerate(devices)}
    nodes = sorted(devices, key=lambda n: (verdicts.get(n) is True, order[n]))
    rows = [
        {"node": node, "ok": verdicts.get(node), "lines": [str(line) for line in devices[node]]}
        for node in nodes[:MAX_DEVICE_NODES]
    ]
    return {"rows": rows, "more": max(0, len(nodes) - MAX_DEVICE_NODES)}


def narration_context(state: ViewState) -> list[dict[str, Any]]:
    lines = list(state.narration)[-NARRATION_SHOWN:]
    return [{"seq": line["seq"], "t": format_time(line["t_ms"]), "text": line["text"]} for line in reversed(lines)]


def _ms(value: float | None) -> str:
    return "—" if value is None else format_time(value)


def summary_context(run: Run, final: ViewState | None) -> dict[str, Any] | None:
    """The finished run's numbers, charts and final per-node allocation (None while it runs)."""
    if not run.done:
        return None
    m = run.metrics or {}
    if not m:
        return {"stats": [], "rollouts": [], "charts": [], "nodes": [], "failed": run.status == RunStatus.FAILED}
    frag = m.get("fragmentation") or {}
    victims = m.get("victims") or {}
    evictions = m.get("evictions") or {}
    stats = [
        (
            "Pods scheduled",
            m.get("pods_scheduled"),
            f"queued pods ever bound, of {m.get('pods_total', 0)} ({m.get('pods_prebound', 0)} prebound, not counted);"
            " “on a node now” above leaves out deleted and completed pods",
        ),
        (
            "Pending at the end",
            m.get("pods_pending_at_end"),
            ", ".join(short_pod(p) for p in m.get("never_scheduled", [])[:8]),
        ),
        ("Mean time pending", _ms(m.get("time_pending_mean_ms")), "over pods the scheduler had to place"),
        ("p95 time pending", _ms(m.get("time_pending_p95_ms")), "nearest-rank 95th percentile"),
        ("Scheduling attempts", m.get("attempts_total"), "cycles run"),
        ("Preemptions", m.get("preemptions"), f"{victims.get('count', 0)} victim(s)"),
        ("Evictions", evictions.get("allowed", 0), f"{evictions.get('refused', 0)} refused by a PDB"),
        (
            "Fragmentation",
            f"{100 * frag.get('value', 0):.0f}%",
            "of free CPU sits on nodes where the typical pending pod no longer fits",
        ),
    ]
    rollouts = []
    for workload in m.get("workloads") or []:
        for rollout in workload.get("rollouts") or []:
            rollouts.append(
                {
                    "workload": workload.get("workload"),
                    "revision": rollout.get("revision"),
                    "image": rollout.get("image") or "",
                    "status": rollout.get("status"),
                    "duration": format_time(rollout.get("duration_ms")),
                }
            )
    series = m.get("series") or {}
    end_ms = m.get("end_ms") or 0
    queue = series.get("queue") or {}
    pending_chart = line_chart(
        [
            ChartSeries("pending", series.get("pending") or []),
            ChartSeries("activeQ", queue.get("active") or []),
            ChartSeries("backoffQ", queue.get("backoff") or []),
            ChartSeries("unschedulable", queue.get("unschedulable") or []),
        ],
        title="Pending pods over virtual time",
        y_label="pods",
        x_end_ms=end_ms,
        chart_id="chart-pending",
    )
    allocation = series.get("allocation") or {}
    order = sorted(allocation, key=lambda r: ({"cpu": 0, "memory": 1, "pods": 2}.get(r, 3), r))
    allocation_chart = line_chart(
        [ChartSeries(r, [[t, 100 * v] for t, v in allocation[r]]) for r in order],
        title="Allocation per resource (requested ÷ allocatable)",
        y_label="% allocated",
        x_end_ms=end_ms,
        y_max=100,
        y_format=lambda v: f"{v:g}%",
        chart_id="chart-allocation",
    )
    nodes = []
    nodes_chart = None
    if final is not None and len(final.nodes) > MAX_NODE_BARS:  # one small-multiple chart, not a bar per node
        columns = []
        for name in final.nodes:
            bars = {b["resource"]: b["used_pct"] for b in final.node_bars(name)}
            columns.append((name, float(bars.get("cpu", 0.0)), float(bars.get("memory", 0.0))))
        nodes_chart = node_bars_chart(columns, title=f"Final CPU (bar) and memory (tick) of {len(columns)} nodes")
    elif final is not None:
        for name in final.nodes:
            nodes.append({"name": name, "bars": final.node_bars(name)})
    return {
        "stats": stats,
        "rollouts": rollouts,
        "charts": [
            {"id": "pending", "svg": pending_chart, "caption": "Pending pods and the queue lanes"},
            {"id": "allocation", "svg": allocation_chart, "caption": "Cluster allocation per resource"},
        ],
        "allocation_final": [
            {"resource": r, "pct": round(100 * v, 1)}
            for r, v in sorted((m.get("allocation_final") or {}).items(), key=lambda kv: kv[0])
        ],
        "end": format_seconds(end_ms),
        "nodes": nodes,
        "nodes_chart": nodes_chart,
        "failed": run.status == RunStatus.FAILED,
    }
