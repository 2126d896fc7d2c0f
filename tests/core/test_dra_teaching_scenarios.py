"""The DRA teaching scenarios tell the stories their descriptions (and the lesson and the built-in
comparison built on them) promise: asserted on the trace's events, under the policies they are
shown with.

- ``dra-vs-fgd-sharing``: the same pods, each share written as kubeviz.dev/gpu-* annotations and as
  a claim on a device with consumable capacity, under gpu-fgd and default;
- ``dra-gpu-to-claim``: the lesson "From nvidia.com/gpu: 1 to a ResourceClaim" under default.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from scheduler_core.documents.scenario import load_scenario_file
from scheduler_core.scheduler.policy import builtin_policies
from scheduler_core.simulation.run_end import END_QUIESCENT, END_STEADY
from scheduler_core.simulation.simulation import Simulation
from scheduler_core.trace.stream import dumps

SCENARIOS = Path(__file__).parents[2] / "scheduler_core" / "scenarios"
NOTEBOOKS = [f"default/notebook-{i}" for i in range(1, 5)]
TRAINERS = ["default/trainer-1", "default/trainer-2"]


def run(name: str, policy: str) -> Simulation:
    sim = Simulation(load_scenario_file(SCENARIOS / f"{name}.yaml"), builtin_policies()[policy], None)
    sim.run()
    return sim


def events(sim: Simulation, type_: str, pod: str | None = None) -> list[dict[str, Any]]:
    return [e for e in sim.trace.events if e["type"] == type_ and (pod is None or e.get("pod") == pod)]


def bound_nodes(sim: Simulation) -> dict[str, str]:
    return {e["pod"]: e["node"] for e in events(sim, "bound")}


def gibibytes(text: str) -> Fraction:
    assert text.endswith("Gi"), text
    return Fraction(text[:-2])


# -- FGD's fractions vs DRA's consumable capacity ------------------------------------------


@pytest.mark.parametrize("policy", ["default", "gpu-fgd"])
def test_the_sharing_comparison_runs_to_the_same_trace_twice(policy: str) -> None:
    first, second = run("dra-vs-fgd-sharing", policy), run("dra-vs-fgd-sharing", policy)
    assert dumps(first.trace.events) == dumps(second.trace.events)


def test_default_spreads_the_notebooks_and_strands_half_of_every_gpu() -> None:
    sim = run("dra-vs-fgd-sharing", "default")
    nodes = bound_nodes(sim)
    assert sorted(nodes) == sorted(NOTEBOOKS)
    assert sorted(nodes.values()) == ["node-1", "node-2", "node-3", "node-4"]  # one per node
    for pod in NOTEBOOKS:
        (allocated,) = events(sim, "claim_allocated", pod)
        (device,) = allocated["devices"]
        assert (device["node"], device["device"], device["consumed"]) == (nodes[pod], "gpu-0", {"memory": "40Gi"})
    # No default score plugin looks at devices: the notebook's score table has none of them
    # weighing a device (DynamicResources' score is for firstAvailable, 0 here).
    for score in events(sim, "score", NOTEBOOKS[1]):
        assert all(row["DynamicResources"]["raw"] == 0 for row in score["nodes"].values())
    for pod in TRAINERS:
        assert not events(sim, "bound", pod)
        (filtered,) = events(sim, "filter", pod)
        assert filtered["feasible"] == 0
        assert {(r["plugin"], r["code"], tuple(r["reasons"])) for r in filtered["results"]} == {
            ("DynamicResources", "UnschedulableAndUnresolvable", ("cannot allocate all claims",))
        }
        (preemption,) = events(sim, "preemption", pod)
        assert preemption["victims"] == []
        assert preemption["chosen"] is None
        assert set(preemption["rejected_nodes"].values()) == {"Preemption is not helpful for scheduling"}
    (finished,) = events(sim, "run_finished")
    assert (finished["bound"], finished["pending"], sim.end) == (4, 2, END_STEADY)
    # kubeviz's GPU bars count the annotated shares under default too: half of every GPU free.
    assert {n: u["gpu_free"] for n, u in sim.trace.events[-2]["nodes"].items()} == {
        n: [500] for n in ("node-1", "node-2", "node-3", "node-4")
    }


def test_fgd_packs_the_notebooks_in_pairs_and_every_trainer_gets_a_whole_gpu() -> None:
    sim = run("dra-vs-fgd-sharing", "gpu-fgd")
    nodes = bound_nodes(sim)
    assert sorted(nodes) == sorted(NOTEBOOKS + TRAINERS)
    notebook_nodes = [nodes[p] for p in NOTEBOOKS]
    assert notebook_nodes[0] == notebook_nodes[1]
    assert notebook_nodes[2] == notebook_nodes[3]
    assert notebook_nodes[0] != notebook_nodes[2]
    trainer_nodes = {nodes[p] for p in TRAINERS}
    assert len(trainer_nodes) == 2
    assert not trainer_nodes & set(notebook_nodes)
    # The second notebook of a pair goes to the half-used GPU because FGD scores it higher
    # (it fills a sliver no trainer could use), not by a tie.
    for pod in (NOTEBOOKS[1], NOTEBOOKS[3]):
        (selected,) = events(sim, "selected", pod)
        assert selected["tied"] == 1
        assert selected["top"][0]["score"] > selected["top"][1]["score"]
    (finished,) = events(sim, "run_finished")
    assert (finished["bound"], finished["pending"], sim.end) == (6, 0, END_QUIESCENT)


def test_under_fgd_the_two_accounts_of_each_gpu_agree() -> None:
    """gpu-fgd keeps DynamicResources: every pod is placed by GpuShare and FGD and its claim is
    allocated too. With one GPU per node and shares in proportion, both hold the same GPU, the
    same part of it, and reject the same nodes: nothing is counted twice or left out."""
    sim = run("dra-vs-fgd-sharing", "gpu-fgd")
    milli = dict.fromkeys(NOTEBOOKS, 500) | dict.fromkeys(TRAINERS, 1000)
    free = dict.fromkeys(("node-1", "node-2", "node-3", "node-4"), 1000)
    for event in sim.trace.events:
        if event["type"] == "filter":
            rejected = {r["node"] for r in event["results"] if r["code"] != "Success"}
            assert rejected == {n for n, f in free.items() if f < milli[event["pod"]]}, event["seq"]
        elif event["type"] == "claim_allocated":
            (device,) = event["devices"]
            assert device["device"] == "gpu-0"
            assert device["node"] == event["node"]
            share = gibibytes(device["consumed"]["memory"]) / 80
            assert share * 1000 == milli[event["pod"]]
        elif event["type"] == "bound":
            assert event["gpus"] == [0]
            free[event["node"]] -= milli[event["pod"]]
    assert {n: u["gpu_free"] for n, u in sim.trace.events[-2]["nodes"].items()} == {n: [f] for n, f in free.items()}


# -- the lesson's scenario ---------------------------------------------------------------------


def test_the_lesson_scenario_runs_to_the_same_trace_twice() -> None:
    first, second = run("dra-gpu-to-claim", "default"), run("dra-gpu-to-claim", "default")
    assert dumps(first.trace.events) == dumps(second.trace.events)


def test_the_lesson_scenario_places_each_pod_where_its_description_says() -> None:
    sim = run("dra-gpu-to-claim", "default")
    devices = {
        e["pod"]: (e["node"], [(d["request"], d["device"]) for d in e["devices"]])
        for e in events(sim, "claim_allocated")
    }
    # legacy-app's request is named by the scheduler (one per container and resource)
    assert devices.pop("default/legacy-app")[0] == "node-a"
    assert [d["device"] for e in events(sim, "claim_allocated", "default/legacy-app") for d in e["devices"]] == [
        "gpu-0"
    ]
    assert devices == {
        "default/big-model": ("node-c", [("gpu", "gpu-0")]),
        "default/pair": ("node-b", [("gpus", "gpu-0"), ("gpus", "gpu-1")]),
        "default/flexible": ("node-a", [("gpu/two-40g", "gpu-1"), ("gpu/two-40g", "gpu-2")]),
        "default/notebook-1": ("node-c", [("share", "gpu-shared")]),
        "default/notebook-2": ("node-c", [("share", "gpu-shared")]),
        "default/urgent": ("node-a", [("gpu", "gpu-0")]),
    }
    (legacy_claim,) = [e["claim"] for e in events(sim, "claim_allocated", "default/legacy-app")]
    assert legacy_claim.startswith("default/legacy-app-extended-resources-")
    for pod in ("default/notebook-1", "default/notebook-2"):
        (allocated,) = events(sim, "claim_allocated", pod)
        assert allocated["devices"][0]["consumed"] == {"memory": "40Gi"}
    # pair: node-a rejected by the constraint alone, not for want of devices
    (pair,) = events(sim, "filter", "default/pair")
    assert "matchAttribute gpu.example.com/pcieRoot" in pair["devices"]["node-a"][0]
    (finished,) = events(sim, "run_finished")
    assert (finished["bound"], finished["pending"], sim.end) == (6, 0, END_QUIESCENT)


def test_the_lesson_scenario_urgent_cannot_preempt_for_a_device_and_waits_for_a_claim_update() -> None:
    sim = run("dra-gpu-to-claim", "default")
    first, second = events(sim, "filter", "default/urgent")
    assert first["t_ms"] == 30_000
    assert first["feasible"] == 0
    assert {r["code"] for r in first["results"]} == {"UnschedulableAndUnresolvable"}
    (preemption,) = events(sim, "preemption", "default/urgent")
    assert preemption["eligible"] is True  # priority 1000 over pods of priority 0: eligible, not helped
    assert preemption["victims"] == []
    assert set(preemption["rejected_nodes"].values()) == {"Preemption is not helpful for scheduling"}
    # legacy-app's deletion parks urgent (DynamicResources does not listen for pod events);
    # the deallocation of its claim, a ResourceClaim update, moves it.
    (deleted,) = events(sim, "pod_deleted", "default/legacy-app")
    assert deleted["t_ms"] == 70_000
    parked = [p for e in deleted["events"] for p in e["parked"] if p["pod"] == "default/urgent"]
    assert parked
    assert not any(p["moves"] for p in parked)
    moves = [e for e in events(sim, "queue_move", "default/urgent") if e["t_ms"] == 70_000]
    assert [m["trigger"] for m in moves] == ["ResourceClaimUpdate"]
    assert second["t_ms"] == 70_000
    (bound,) = events(sim, "bound", "default/urgent")
    assert (bound["node"], bound["t_ms"]) == ("node-a", 70_000)
