"""Scoring with sidecars on existing pods: the node's non-zero requested (types.go calculateResource).

kube-scheduler v1.28–v1.31 keeps two sums per node. ``Requested`` (what NodeResourcesFit's
Filter and BalancedAllocation read) comes from ``PodRequests`` and adds sidecars (init
containers with ``restartPolicy: Always``) to the regular containers. ``NonZeroRequested``
(what LeastAllocated, MostAllocated and RequestedToCapacityRatio read) is built by a
``ContainerFn`` that only sums the regular containers and takes the *max* with each init
container as ``PodRequests`` hands it over (a sidecar: the sidecars so far; another init
container: itself plus the sidecars before it), the 100m / 200MiB defaults applied to any
list without cpu / memory. The pod being scheduled is not affected: its own request comes
from ``PodRequests`` with the defaults filled in (sidecars added). v1.32 changed the node
side to match (kubernetes#127878).

Worked example, measured against kube-scheduler v1.31 (default profile): node 8 CPU / 16Gi;
  (a) containers 1500m/512Mi, 1/128Mi, one with no requests; sidecar 1500m/256Mi
  (b) containers 2/1Gi + 1/2Gi; plain init 250m/128Mi
  (c) 500m/3Gi
  incoming 500m/512Mi.
Non-zero requested on the node (Mi):
  (a) containers 1500+1000+100 = 2600m, 512+128+200 = 840; sidecar step 1500m/256 → max: 2600m / 840
  (b) 3000m / 3072 (the init container is smaller)            (c) 500m / 3072
  node: 6100m / 6984Mi; with the incoming pod's non-zero 500m / 512Mi: 6600m / 7496Mi.
LeastAllocated: cpu (8000-6600)*100//8000 = 17, memory (16384-7496)*100//16384 = 54 → (17+54)//2 = 35.
Had the sidecar been added (a = 4100m / 1096Mi), cpu would be 8100m > 8000m → 0, memory
(16384-7752)*100//16384 = 52 → 26: what the engine scored before following upstream.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.api.model import Container, Pod, assigned_non_zero_requests, pod_requests
from tests.core.builders import cluster, make_node, make_plugin, make_pod, res, run_filter, run_score
from tests.core.scheduler.plugins.test_node_resources_fit import BIN_PACKING, fits, strategy

MI = 1024 * 1024
ALWAYS = "Always"


def container(name: str, restart_policy: str = "", **amounts: Any) -> Container:
    return Container(name=name, requests=res(**amounts), restart_policy=restart_policy)


def worked_example() -> tuple[Any, Pod]:
    """The measured situation: (node, incoming pod), the three pods already bound."""
    a = make_pod(
        "a",
        containers=(
            container("web", cpu="1500m", memory="512Mi"),
            container("worker", cpu="1", memory="128Mi"),
            container("idle"),
        ),
        init_containers=(container("proxy", ALWAYS, cpu="1500m", memory="256Mi"),),
    )
    b = make_pod(
        "b",
        containers=(container("db", cpu="2", memory="1Gi"), container("cache", cpu="1", memory="2Gi")),
        init_containers=(container("migrate", cpu="250m", memory="128Mi"),),
    )
    c = make_pod("c", cpu="500m", memory="3Gi")
    _, snapshot = cluster([make_node("n", cpu="8", memory="16Gi")], {"n": [a, b, c]})
    return snapshot, make_pod("incoming", cpu="500m", memory="512Mi")


def test_worked_example_node_sums():
    """Requested adds the sidecar; NonZeroRequested takes it by the max rule (v1.28–v1.31 calculateResource)."""
    snapshot, incoming = worked_example()
    node = snapshot.get("n")
    assert node.requested == {"cpu": 7500, "memory": 7040 * MI}
    assert node.non_zero_requested == {"cpu": 6100, "memory": 6984 * MI}
    # The incoming pod's own non-zero request (calculatePodResourceRequest).
    assert incoming.non_zero_requests == {"cpu": 500, "memory": 512 * MI}


SCORE_CASES = [
    pytest.param(
        None,
        "NodeResourcesFit",
        35,
        id="LeastAllocated scores 35 as kube-scheduler v1.31 does: the sidecar is not added to the node's non-zero sum",
    ),
    pytest.param(
        strategy("MostAllocated"),
        "NodeResourcesFit",
        # cpu 6600*100//8000 = 82, memory 7496*100//16384 = 45 → (82+45)//2 = 63
        63,
        id="MostAllocated reads the same non-zero sum: cpu 82, memory 45, mean 63",
    ),
    pytest.param(
        strategy("RequestedToCapacityRatio", shape=BIN_PACKING),
        "NodeResourcesFit",
        # utilisation cpu 82, memory 45 on the 0→0, 100→100 line; (82+45)/2 = 63.5 rounds half away → 64
        64,
        id="RequestedToCapacityRatio reads the same non-zero sum and rounds 63.5 to 64",
    ),
    pytest.param(
        None,
        "NodeResourcesBalancedAllocation",
        # actual requests with the sidecar added: cpu (7500+500)/8000 = 1.0, memory (7040+512)/16384
        # = 0.4609375; std = (1.0 - 0.4609375)/2 = 0.26953125 → int(73.046875) = 73
        73,
        id="BalancedAllocation reads Requested, which does add the sidecar",
    ),
]


@pytest.mark.parametrize(("args", "plugin_name", "expected"), SCORE_CASES)
def test_worked_example_scores(args, plugin_name, expected):
    snapshot, incoming = worked_example()
    plugin = make_plugin(plugin_name, snapshot, args)
    assert run_score(plugin, incoming, snapshot) == {"n": expected}


def test_worked_example_filter_counts_the_sidecar():
    """The filter sees 7500m used: 500m more fits exactly, 501m does not (Requested adds sidecars)."""
    snapshot, incoming = worked_example()
    plugin = make_plugin("NodeResourcesFit", snapshot)
    assert run_filter(plugin, incoming, snapshot) == {"n": fits()}
    too_big = make_pod("too-big", cpu="501m", memory="512Mi")
    assert run_filter(plugin, too_big, snapshot) == {"n": fits("Insufficient cpu")}


# -- the rule itself: what a bound pod adds to NonZeroRequested ------------------------------------

NON_ZERO_CASES = [
    pytest.param(
        (container("a", cpu="200m", memory="100Mi"), container("b")),
        (),
        {},
        (300, 300 * MI),
        (300, 300 * MI),
        id="containers add up, one that requests nothing counting 100m / 200Mi",
    ),
    pytest.param(
        (container("a", cpu="200m", memory="100Mi"),),
        (container("init", cpu="1", memory="50Mi"),),
        {},
        (1000, 100 * MI),
        (1000, 100 * MI),
        id="a plain init container larger than the containers wins per resource",
    ),
    pytest.param(
        (container("a", cpu="500m", memory="1Gi"),),
        (container("side", ALWAYS, cpu="300m", memory="100Mi"),),
        {},
        (500, 1024 * MI),
        (800, 1124 * MI),
        id="a sidecar is not added to the containers, only compared with them",
    ),
    pytest.param(
        (container("a", cpu="500m", memory="1Gi"),),
        (container("s1", ALWAYS, cpu="400m", memory="10Mi"), container("s2", ALWAYS, cpu="400m", memory="10Mi")),
        {},
        (800, 1024 * MI),
        (1300, 1044 * MI),
        id="sidecars add up among themselves: the second is seen with the first",
    ),
    pytest.param(
        (container("a", cpu="500m", memory="64Mi"),),
        (container("s", ALWAYS, cpu="300m", memory="64Mi"), container("init", cpu="1", memory="64Mi")),
        {},
        (1300, 128 * MI),
        (1300, 128 * MI),
        id="a plain init container after a sidecar is seen with the sidecar",
    ),
    pytest.param(
        (container("a", cpu="50m", memory="100Mi"),),
        (container("s", ALWAYS),),
        {},
        (100, 200 * MI),
        (150, 300 * MI),
        id="a sidecar that requests nothing counts the defaults in the max",
    ),
    pytest.param(
        (container("a", cpu="0", memory="0"),),
        (),
        {},
        (0, 0),
        (0, 0),
        id="an explicit zero request stays zero (only a missing one is defaulted)",
    ),
    pytest.param(
        (container("a", cpu="500m", memory="1Gi"),),
        (container("s", ALWAYS, cpu="300m", memory="100Mi"),),
        res(cpu="250m", memory="64Mi"),
        (750, 1088 * MI),
        (1050, 1188 * MI),
        id="overhead is added after the max, on both sides",
    ),
]


@pytest.mark.parametrize(("containers", "init", "overhead", "on_node", "own"), NON_ZERO_CASES)
def test_assigned_non_zero_requests(containers, init, overhead, on_node, own):
    """on_node: types.go calculateResource (v1.28–v1.31); own: PodRequests with the defaults."""
    assert assigned_non_zero_requests(containers, init, overhead) == {"cpu": on_node[0], "memory": on_node[1]}
    assert pod_requests(containers, init, overhead, non_zero=True) == {"cpu": own[0], "memory": own[1]}


def test_removing_a_pod_with_a_sidecar_gives_back_what_it_took():
    """Add and remove use the same per-pod sum, so the node returns to empty."""
    snapshot, _ = worked_example()
    node = snapshot.get("n")
    for pod in list(node.pods):
        assert node.remove_pod(pod)
    assert node.non_zero_requested == {"cpu": 0, "memory": 0}
    assert node.requested == {}
