"""The API server (scheduler_core/cluster/api_server.py) and the binding cycle it stores.

The simulation builds one ``ApiServer`` and hands it to every part that acts on pods and nodes:
the controllers (``ClusterAPI``), the timeline actions and the scheduler (``ApiClient``), also
after a policy switch replaced the scheduler. The binding cycle is the scheduler's
(``Scheduler.complete_binding``); a pod or node gone while its binding was under way fails it.
"""

from __future__ import annotations

import dataclasses

from scheduler_core.api.scenario_types import Scenario
from scheduler_core.cluster import ApiServer
from scheduler_core.scheduler.profile import default_policy
from scheduler_core.simulation.simulation import Simulation
from tests.core.builders import make_node, make_pod

SLOW_BIND = dataclasses.replace(default_policy(), name="slow-bind", bind_latency_ms=100)
# What the API server offers its clients (workloads.ClusterAPI, the timeline's, ApiClient's).
API_METHODS = (
    "create_pod",
    "delete_pod",
    "owned_pods",
    "pod_ready",
    "requeue_at",
    "pdbs",
    "add_pod",
    "add_node",
    "remove_node",
    "set_unschedulable",
    "pod_exists",
    "record_binding",
)


def one_pod_run() -> Simulation:
    """One node, one pod, and a binding that takes 100 ms: stepped until the pod is assumed."""
    sim = Simulation(Scenario(name="bind", nodes=[make_node("n1")], pods=[make_pod("p", cpu="1")]), SLOW_BIND)
    while not any(e["type"] == "assumed" for e in sim.events):
        assert sim.step() is not None
    return sim


def types_after(sim: Simulation, seq: int) -> list[str]:
    return [e["type"] for e in sim.events if e["seq"] > seq]


def test_every_part_acts_through_the_one_api_server() -> None:
    sim = one_pod_run()
    assert isinstance(sim.api, ApiServer)
    assert sim.controllers.api is sim.api
    assert sim.scheduler.client is sim.api
    sim.switch_policy(default_policy())
    assert sim.scheduler.client is sim.api  # the new scheduler too


def test_the_simulation_is_not_the_api_server() -> None:
    assert all(hasattr(ApiServer, name) for name in API_METHODS)
    assert not [name for name in API_METHODS if hasattr(Simulation, name)]


def test_a_binding_completes_after_its_latency() -> None:
    sim = one_pod_run()
    assumed = sim.next_seq - 1
    sim.run()
    bound = next(e for e in sim.events if e["type"] == "bound")
    assert (bound["pod"], bound["node"], bound["t_ms"]) == ("default/p", "n1", 100)
    assert sim.pods["default/p"].node_name == "n1"
    assert "bind_failed" not in types_after(sim, assumed)


def test_a_pod_deleted_while_its_binding_is_under_way_terminates_as_a_placed_pod() -> None:
    sim = one_pod_run()
    sim.api.delete_pod(sim.pods["default/p"])
    assert sim.events[-1]["type"] == "pod_deletion_started"  # not gone at once: its binding is under way
    sim.run()
    kinds = [e["type"] for e in sim.events]
    assert kinds.index("bound") < kinds.index("pod_deleted")


def test_a_pod_gone_before_its_binding_arrives_fails_the_binding() -> None:
    sim = one_pod_run()
    sim.api.delete_pod(sim.pods["default/p"], grace_ms=0)
    sim.run()
    failed = next(e for e in sim.events if e["type"] == "bind_failed")
    assert failed["reason"] == 'pods "p" not found'
    assert "bound" not in [e["type"] for e in sim.events]
    assert sim.queue.where(make_pod("p")) == "none"
    assert "default/p" not in sim.pods


def test_a_node_gone_before_the_binding_arrives_fails_it_and_the_pod_retries() -> None:
    sim = one_pod_run()
    sim.api.remove_node("n1")
    sim.run()
    failed = next(e for e in sim.events if e["type"] == "bind_failed")
    assert failed["reason"] == 'node "n1" not found'
    assert sim.pods["default/p"].node_name == ""
