"""Clusters: kubectl output, Scenario documents and Node manifests in; a node-less document run on them."""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from scheduler_core.api.model import LABEL_ZONE
from scheduler_core.cli import main
from scheduler_core.documents.clusters import (
    ClusterError,
    apply_cluster,
    builtin_cluster,
    builtin_cluster_names,
    cluster_from_nodes,
    load_cluster,
    load_cluster_file,
    shape_document,
)
from scheduler_core.documents.errors import MAX_WARNINGS, LoadError
from scheduler_core.documents.scenario import NO_NODES_WARNING, load_scenario, load_scenario_file
from scheduler_core.simulation.simulation import RunSummary, Simulation

DATA = Path(__file__).parents[1] / "data"
KUBECTL = DATA / "kubectl-cluster.yaml"
# The docs' own example manifests (in the repository); the Kubernetes documentation's examples
# are public data (the public_data fixture) and the tests on them skip where there is no copy.
EXAMPLES_DIR = Path(__file__).resolve().parents[3] / "docs" / "examples"

# Four replicas of 400m: the control plane's taint keeps them off it; kind-worker has 500m left
# (ledger holds 1500m of 2), kind-worker2 800m (cache holds 1200m); so 1 + 2 fit and one waits.
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx:1.14.2
          resources: {requests: {cpu: 400m, memory: 256Mi}}
"""


def run_to_end(scenario_text: str, cluster_text: str | None = None, source: str = "app.yaml") -> RunSummary:
    scenario = load_scenario(scenario_text, source)
    if cluster_text is not None:
        apply_cluster(scenario, load_cluster(cluster_text))
    return Simulation(scenario).run()


def placed(summary: RunSummary, prefix: str) -> Counter[str]:
    return Counter(p.node for p in summary.pods if p.pod.startswith(prefix) and p.node)


# kubectl output


def test_kubectl_output_gives_nodes_and_the_pods_running_on_them() -> None:
    """Unknown fields (managedFields, conditions, nodeInfo, addresses, containerStatuses…) are ignored."""
    cluster = load_cluster_file(KUBECTL)
    assert [n.name for n in cluster.nodes] == ["kind-control-plane", "kind-worker", "kind-worker2"]
    control = cluster.nodes[0]
    assert control.allocatable["cpu"] == 4000
    assert control.allocatable["memory"] == 8039744 * 1024
    assert [t.key for t in control.taints] == ["node-role.kubernetes.io/control-plane"]
    assert control.images[1].names == ("registry.k8s.io/kube-proxy:v1.31.0",)
    assert cluster.zones == ["eu-west-1a", "eu-west-1b"]
    running = {p.key: p.node_name for p in cluster.pods}
    assert running == {
        "kube-system/coredns-6f6b679f8f-2xk8v": "kind-control-plane",
        "kube-system/kube-proxy-9xq2m": "kind-worker",
        "default/ledger-58d7b8f9c-8h2kd": "kind-worker",
        "default/cache-0": "kind-worker2",
    }
    priorities = {p.key: p.priority for p in cluster.pods}
    assert priorities["kube-system/kube-proxy-9xq2m"] == 2_000_001_000
    assert cluster.warnings == [
        "kubectl-cluster.yaml: left out 2 pod(s) not running on a node of the cluster: "
        "1 finished pods (phase Succeeded), 1 pending pods (no spec.nodeName)"
    ]


def test_running_pods_keep_their_start_times_with_the_latest_at_t0() -> None:
    """kubectl's output is a snapshot: its latest status.startTime is t=0 (snapshot_time.py), so
    preemption's start-time rules see the real order of the running pods."""
    starts = {p.key: p.start_time_ms for p in load_cluster_file(KUBECTL).pods}
    assert max(v for v in starts.values() if v is not None) == 0
    # coredns started 08:12:23, kube-proxy 08:12:05, ledger 08:40:02 (the latest).
    assert starts["default/ledger-58d7b8f9c-8h2kd"] == 0
    assert starts["kube-system/coredns-6f6b679f8f-2xk8v"] == -(27 * 60 + 39) * 1000
    assert starts["kube-system/kube-proxy-9xq2m"] == -(27 * 60 + 57) * 1000


def test_a_deployment_lands_where_the_running_pods_leave_room() -> None:
    summary = run_to_end(DEPLOYMENT, KUBECTL.read_text())
    assert placed(summary, "default/web-") == {"kind-worker": 1, "kind-worker2": 2}
    waiting = [p for p in summary.pods if p.pod.startswith("default/web-") and not p.node]
    assert len(waiting) == 1
    assert "Insufficient cpu" in (waiting[0].message or "")
    assert "untolerated taint" in (waiting[0].message or "")
    # the running pods stay where they were
    assert placed(summary, "default/ledger") == {"kind-worker": 1}
    assert summary.end == "steady"


def test_pods_on_nodes_outside_the_cluster_are_left_out_and_counted() -> None:
    text = """\
apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: Node, metadata: {name: a}, status: {allocatable: {cpu: "2", memory: 2Gi}}}
  - apiVersion: v1
    kind: Pod
    metadata: {name: elsewhere}
    spec: {nodeName: b, containers: [{name: c, image: x}]}
    status: {phase: Running}
  - {apiVersion: v1, kind: Service, metadata: {name: s}, spec: {selector: {app: x}}}
"""
    cluster = load_cluster(text, "mixed.yaml")
    assert cluster.pods == []
    assert cluster.warnings == [
        "mixed.yaml: left out 1 pod(s) not running on a node of the cluster: "
        "1 pods on a node that is not in the cluster",
        "mixed.yaml: left out objects that are neither Nodes nor Pods: Service ×1",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: a}\n"
            "  status: {allocatable: {cpu: lots}}\n",
            'cluster.yaml:7 items[0].status.allocatable.cpu: "lots" is not a quantity',
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n",
            "cluster.yaml: no nodes: a cluster needs at least one Node",
        ),
        ("kind: Node\nmetadata: {name: Bad_Name}\n", "cluster.yaml:2 metadata.name:"),
    ],
    ids=[
        "a quantity that is not one is refused, naming its line and field",
        "a cluster without nodes is refused",
        "a node name the API server would refuse is refused",
    ],
)
def test_bad_cluster_documents_name_the_field(text: str, expected: str) -> None:
    with pytest.raises(LoadError) as caught:
        load_cluster(text)
    assert str(caught.value).startswith(expected), str(caught.value)


def test_a_scenario_document_gives_its_nodes_and_bound_pods_only() -> None:
    cluster = load_cluster_file(Path(__file__).parents[3] / "scheduler_core" / "scenarios" / "mixed-small.yaml")
    assert len(cluster.nodes) == 6
    assert cluster.pods == []  # its pods are scheduled, not bound
    assert any("left out" in w and "pods" in w for w in cluster.warnings)


# built-in clusters


def test_builtin_clusters() -> None:
    assert builtin_cluster_names() == ["five-hundred", "five-thousand", "three-zones"]
    small = builtin_cluster("three-zones")
    assert (len(small.nodes), small.zones, len(small.pods)) == (6, ["zone-a", "zone-b", "zone-c"], 8)
    assert all(pod.node_name for pod in small.pods)
    big = builtin_cluster("five-hundred")
    assert (len(big.nodes), len(big.zones)) == (500, 3)
    huge = builtin_cluster("five-thousand")
    assert (len(huge.nodes), len(huge.zones)) == (5000, 3)
    assert Counter(n.labels[LABEL_ZONE] for n in huge.nodes) == {"zone-a": 1668, "zone-b": 1666, "zone-c": 1666}


def test_no_builtin_cluster_of_that_name() -> None:
    with pytest.raises(KeyError, match="no built-in cluster 'nope'; built-in: five-hundred"):
        builtin_cluster("nope")


# applying


def test_apply_puts_the_nodes_and_running_pods_under_a_nodeless_scenario() -> None:
    scenario = load_scenario(DEPLOYMENT, "app.yaml")
    assert any(w.endswith(NO_NODES_WARNING) for w in scenario.warnings)
    apply_cluster(scenario, builtin_cluster("three-zones"))
    assert len(scenario.nodes) == 6
    assert scenario.nodes_from_cluster
    assert [p.name for p in scenario.pods[:2]] == ["kube-proxy-a1", "kube-proxy-a2"]
    assert scenario.warnings == []
    assert "kube-system" in scenario.namespaces


def test_apply_refuses_a_scenario_with_nodes_of_its_own() -> None:
    scenario = load_scenario_file(EXAMPLES_DIR / "tainted-node.yaml")
    with pytest.raises(ClusterError, match='scenario "tainted-node" has 1 node\\(s\\) of its own'):
        apply_cluster(scenario, builtin_cluster("three-zones"))


def test_apply_refuses_a_pod_already_running_on_the_cluster() -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: coredns-0, namespace: kube-system}\n"
        "spec: {containers: [{name: c}]}"
    )
    with pytest.raises(ClusterError, match='pod "kube-system/coredns-0" is in the scenario and already running'):
        apply_cluster(load_scenario(text), builtin_cluster("three-zones"))


def test_each_run_gets_fresh_objects() -> None:
    """Simulations change their pods and nodes; a cluster applied twice starts from the same place."""
    cluster = builtin_cluster("three-zones")
    first = Simulation(apply_cluster(load_scenario(DEPLOYMENT), cluster)).run()
    second = Simulation(apply_cluster(load_scenario(DEPLOYMENT), cluster)).run()
    assert first.as_dict() == second.as_dict()
    assert all(pod.phase == "Pending" for pod in cluster.pods)


def test_a_pod_naming_a_node_the_cluster_lacks_is_warned_about() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: gone, containers: [{name: c}]}"
    scenario = apply_cluster(load_scenario(text, "p.yaml"), builtin_cluster("three-zones"))
    assert scenario.warnings == [
        'p.yaml: pod "default/p": node "gone" is not in cluster "three-zones"; the pod will never run'
    ]


def test_the_pods_naming_nodes_the_cluster_lacks_are_warned_about_up_to_the_cap() -> None:
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d}\nspec: {nodeName: gone, containers: [{name: c}]}"
    text = "\n---\n".join(pod % i for i in range(MAX_WARNINGS + 7))
    scenario = apply_cluster(load_scenario(text, "p.yaml"), builtin_cluster("three-zones"))
    assert len(scenario.warnings) == MAX_WARNINGS + 1
    assert scenario.warnings[0].startswith('p.yaml: pod "default/p0": node "gone" is not in cluster')
    assert scenario.warnings[-1] == "p.yaml: … and 7 more warnings like these"


# writing cluster documents


def test_a_shape_spreads_nodes_round_robin_over_zones() -> None:
    cluster = load_cluster(shape_document("shape", 10, "4", "8Gi", 50, 3, "w-"))
    assert [n.name for n in cluster.nodes[:3]] == ["w-0", "w-1", "w-2"]
    assert Counter(n.labels[LABEL_ZONE] for n in cluster.nodes) == {"zone-a": 4, "zone-b": 3, "zone-c": 3}
    assert cluster.nodes[0].allocatable == {"cpu": 4000, "memory": 8 * 1024**3, "pods": 50}


def test_a_scenarios_nodes_round_trip_through_a_cluster_document() -> None:
    nodes = load_cluster_file(KUBECTL).nodes
    cluster, text = cluster_from_nodes("kind", nodes)
    assert "kind: Scenario" in text
    for before, after in zip(nodes, cluster.nodes, strict=True):
        assert (after.name, after.allocatable, after.labels, after.taints, after.images) == (
            before.name,
            before.allocatable,
            before.labels,
            before.taints,
            before.images,
        )


# every example manifest on a built-in cluster

# file → (bound pods of the manifest, end); the cluster's own 8 running pods are not counted.
EXAMPLES = {
    "deployment.yaml": (2, "quiescent"),
    "web-statefulset.yaml": (2, "quiescent"),
    "zookeeper.yaml": (3, "quiescent"),
    "zookeeper-pdb-minavailable.yaml": (0, "quiescent"),
    "low-priority-class.yaml": (0, "quiescent"),
    "pod-with-affinity-anti-affinity.yaml": (1, "quiescent"),
    "pod-with-toleration.yaml": (1, "quiescent"),
    "topology-spread-two-constraints.yaml": (1, "quiescent"),
    # Its required podAffinity wants a pod labelled security=S1 in the zone: there is none, so
    # kube-scheduler leaves it pending too.
    "pod-with-pod-affinity.yaml": (0, "steady"),
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_example_manifest_runs_to_a_sensible_end_on_three_zones(
    name: str, public_data: Callable[[str], Path]
) -> None:
    scenario = apply_cluster(load_scenario_file(public_data(f"k8s-examples/{name}")), builtin_cluster("three-zones"))
    summary = Simulation(scenario).run()
    bound, end = EXAMPLES[name]
    assert summary.bound - 8 == bound
    assert summary.end == end, summary.end_reason


def test_the_examples_are_all_covered(public_data: Callable[[str], Path]) -> None:
    """Every example manifest is in EXAMPLES or one of the two tests below."""
    assert {p.name for p in public_data("k8s-examples").glob("*.yaml")} == {
        *EXAMPLES,
        "high-priority-pod.yaml",
        "node-with-taint.yaml",
    }


def test_high_priority_pod_names_a_priority_class_it_does_not_define(public_data: Callable[[str], Path]) -> None:
    """A real error of the file: the API server's Priority admission refuses a pod whose
    priorityClassName names no PriorityClass. With the class defined, it runs."""
    path = public_data("k8s-examples/high-priority-pod.yaml")
    with pytest.raises(LoadError, match='names PriorityClass "high", which is not defined'):
        load_scenario_file(path)
    text = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n" + (
        path.read_text()
    )
    scenario = apply_cluster(load_scenario(text, "high.yaml"), builtin_cluster("three-zones"))
    summary = Simulation(scenario).run()
    assert summary.bound == 9
    assert summary.end == "quiescent"


def test_node_with_taint_runs_on_its_own_node(public_data: Callable[[str], Path]) -> None:
    summary = Simulation(load_scenario_file(public_data("k8s-examples/node-with-taint.yaml"))).run()
    assert [row["node"] for row in summary.nodes] == ["taint-node-0"]


def test_a_generate_name_node_runs_on_its_own_node() -> None:
    summary = Simulation(load_scenario_file(EXAMPLES_DIR / "tainted-node.yaml")).run()
    assert [row["node"] for row in summary.nodes] == ["tainted-node-0"]


# command line


def run_cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(args), out=out), out.getvalue()


def test_cli_simulate_on_a_builtin_cluster() -> None:
    code, out = run_cli("simulate", str(EXAMPLES_DIR / "web-deployment.yaml"), "--cluster", "three-zones", "--json")
    assert code == 0
    summary = json.loads(out)["summary"]
    assert summary["bound"] == 10
    assert summary["pending"] == 0
    assert len(summary["nodes"]) == 6


def test_cli_simulate_on_a_kubectl_file(tmp_path: Path) -> None:
    app = tmp_path / "web.yaml"
    app.write_text(DEPLOYMENT)
    code, out = run_cli("simulate", str(app), "--cluster", str(KUBECTL), "--no-progress")
    assert code == 0
    assert "7 bound, 1 pending" in out  # 4 running + 3 of the 4 replicas


def test_cli_explain_and_compare_take_the_cluster(tmp_path: Path) -> None:
    pod = str(EXAMPLES_DIR / "tolerating-pod.yaml")
    code, out = run_cli("explain", pod, "--pod", "nginx", "--cluster", "three-zones", "--json")
    assert code == 0
    assert json.loads(out)["evaluated_nodes"] == 6
    code, out = run_cli("compare", pod, "--policy", "default", "--policy", "bin-packing", "--cluster", "three-zones")
    assert code == 0
    assert "Scenario tolerating-pod" in out


def test_cli_cluster_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run_cli("simulate", str(EXAMPLES_DIR / "web-deployment.yaml"), "--cluster", "nope")
    assert code == 2
    assert (
        "unknown cluster 'nope': no such file, and no built-in cluster of that name. Built-in clusters: five-hundred"
        in capsys.readouterr().err
    )
    code, _ = run_cli("simulate", str(EXAMPLES_DIR / "tainted-node.yaml"), "--cluster", "three-zones")
    assert code == 2
    assert 'error: --cluster: scenario "tainted-node" has 1 node(s) of its own' in capsys.readouterr().err


def test_cli_lists_the_builtin_clusters() -> None:
    code, out = run_cli("clusters")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == ["five-hundred", "five-thousand", "three-zones"]
    assert "6 nodes, 3 zones, 8 running pods" in lines[2]
