"""``explain``: one scheduling cycle for one pending pod, laid out for a learner (docs/cli.md).

The cycle runs against the scenario's state at t=0 — its nodes and the pods created there
with ``spec.nodeName`` — before any other pod is scheduled, with full detail and without
changing anything. The returned shape is a public contract::

    {"pod", "evaluated_nodes", "feasible_nodes": [...],
     "filter": {node: {"code", "plugin", "reasons": [...]}},
     "scores": {node: {plugin: {"raw", "normalized", "weighted"}}},
     "totals": {node: n}, "selected": node|null, "message": str|null,
     "preemption": {"eligible", "reason", "candidates": [{"node", "victims", "pdb_violations"}],
                    "chosen", "decided_by"} | null}

``preemption`` is null when the pod fits (PostFilter never runs) or the policy has no
PostFilter plugin.
"""

from __future__ import annotations

import difflib
from typing import Any

from ..api.scenario_types import Scenario
from ..scheduler.config import Policy
from ..scheduler.framework import append_post_filter_message
from ..scheduler.schedule_one import score_tables
from ..simulation.simulation import Simulation
from ..trace.events import PreemptionDecisionFields
from ..trace.stream import DETAIL_FULL

__all__ = ["explain", "ExplainError"]


class ExplainError(LookupError):
    """The pod to explain does not exist or is not waiting to be scheduled."""


_PODS_LISTED = 10


def _missing_pod_message(scenario: Scenario, key: str) -> str:
    """Which pods there are (the first ten, and how many more), and the closest name to a typo."""
    keys = [p.key for p in scenario.pods]
    listed = ", ".join(keys[:_PODS_LISTED])
    if len(keys) > _PODS_LISTED:
        listed += f", … and {len(keys) - _PODS_LISTED:,} more"
    # Names are compared without the namespace, which every key of a scenario tends to share.
    by_name = {k.partition("/")[2]: k for k in reversed(keys)}
    close = [by_name[n] for n in difflib.get_close_matches(key.partition("/")[2], list(by_name), n=1)]
    hint = f"; did you mean {close[0]!r}?" if close else ""
    where = f"pods at t=0: {listed}" if keys else "it has no pods at t=0"
    return f"pod {key!r} is not in scenario {scenario.name!r} ({where}){hint}"


def explain(scenario: Scenario, pod_name: str, policy: Policy | None = None, seed: int | None = None) -> dict[str, Any]:
    key = pod_name if "/" in pod_name else f"default/{pod_name}"
    pod = next((p for p in scenario.pods if p.key == key), None)
    if pod is None:
        raise ExplainError(_missing_pod_message(scenario, key))
    if pod.node_name:
        raise ExplainError(f"pod {key!r} has spec.nodeName {pod.node_name!r}: the scheduler never sees it")
    sim = Simulation(scenario, policy, seed, detail=DETAIL_FULL, keep_trace=False)
    fwk = sim.profiles.get(pod.scheduler_name)
    if fwk is None:
        raise ExplainError(
            f"pod {key!r} asks for scheduler {pod.scheduler_name!r}, which the policy has no profile for"
        )
    result = sim.scheduler.run_cycle(fwk, pod, sim.cache.snapshot())
    message = result.message
    preemption: PreemptionDecisionFields | None = None
    legacy = sim.policy.scheduler_mode == "legacy"  # the v1.5 scheduler had no preemption
    if result.selected is None and result.num_all_nodes and fwk.post_filter_plugins and not legacy:
        # The decision only: explain never deletes victims.
        pf_result, pf_status = fwk.run_post_filter(result.state, pod, result.statuses)
        if pf_status.message() and message is not None:
            message = append_post_filter_message(message, pf_status.message(), sim.policy.kubernetes_version)
        if pf_result is not None and pf_result.preemption is not None:
            preemption = pf_result.preemption.as_dict()
    filters: dict[str, dict[str, Any]] = {
        name: {"code": st.code.label, "plugin": st.plugin, "reasons": list(st.reasons)}
        for name, st in result.statuses.items()
    }
    for ni in result.feasible:
        filters[ni.name] = {"code": "Success", "plugin": "", "reasons": []}
    scores: dict[str, Any] = {}
    totals: dict[str, int] = {}
    if result.score is not None:
        scores, totals = score_tables(result.score, None)
    return {
        "pod": key,
        "evaluated_nodes": result.evaluated if result.pre_filter_status is None else 0,
        "feasible_nodes": [ni.name for ni in result.feasible],
        "filter": filters,
        "scores": scores,
        "totals": totals,
        "selected": result.selected,
        "message": message,
        "preemption": preemption,
    }
