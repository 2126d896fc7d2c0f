"""Workload manifests (Deployment, ReplicaSet, StatefulSet, Job, Service) and the workload timeline actions."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler_core.api.model import LabelSelector, OwnerReference
from scheduler_core.api.workloads import Deployment, Job, ReplicaSet, Service, StatefulSet
from scheduler_core.documents.errors import LoadError
from scheduler_core.documents.k8s_parse import Parsed, parse_manifest
from scheduler_core.documents.reader import Reader
from scheduler_core.documents.scenario import load_scenario, load_scenario_file
from scheduler_core.documents.yamlsource import load_documents

REPO_ROOT = Path(__file__).resolve().parents[3]

HEAD = "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata:\n  name: t\nspec:\n"


def parse(text: str, source: str = "obj.yaml") -> list[Parsed]:
    out: list[Parsed] = []
    reader = None
    for doc in load_documents(text, source):
        reader = Reader(source, doc, reader.problems if reader else None, reader.naming if reader else None)
        out.extend(parse_manifest(reader, doc.data))
    if reader is not None:
        reader.problems.raise_if_any()
    return out


def _flow(manifest: str) -> str:
    """A block manifest as one YAML flow mapping (for timeline one-liners)."""
    return json.dumps(yaml.safe_load(manifest))


def one(text: str) -> Any:
    (parsed,) = parse(text)
    return parsed.obj


def errors_of(text: str, source: str = "scenario.yaml") -> list[str]:
    with pytest.raises(LoadError) as info:
        load_scenario(text, source)
    return [str(p) for p in info.value.problems]


TEMPLATE = "  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: 'web:1'}]}\n"
SELECTOR = "  selector: {matchLabels: {app: web}}\n"
DEPLOYMENT = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n" + SELECTOR + TEMPLATE
REPLICA_SET = "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web}\nspec:\n" + SELECTOR + TEMPLATE
STATEFUL_SET = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec:\n" + SELECTOR + TEMPLATE
JOB = (
    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: pi}\nspec:\n  template:\n"
    "    metadata: {annotations: {kubeviz.dev/run-duration: 90s}}\n"
    "    spec: {restartPolicy: Never, containers: [{name: pi, image: perl}]}\n"
)
SERVICE = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n"


# -- each kind, with defaults ----------------------------------------------------------


def test_a_minimal_deployment_gets_the_api_server_defaults() -> None:
    d = one(DEPLOYMENT)
    assert isinstance(d, Deployment)
    assert (d.name, d.namespace, d.uid, d.line) == ("web", "default", "deployment/default/web", 1)
    assert (d.replicas, d.strategy, d.max_surge, d.max_unavailable, d.min_ready_ms) == (
        1,
        "RollingUpdate",
        "25%",
        "25%",
        0,
    )
    assert d.selector == LabelSelector((("app", "web"),))
    proto = d.template.prototype
    assert (proto.name, proto.namespace, proto.uid) == ("web-template", "default", "")
    assert proto.labels == {"app": "web"}
    assert d.template.image == "web:1"


def test_a_minimal_replica_set_has_one_replica_and_no_owner() -> None:
    rs = one(REPLICA_SET)
    assert isinstance(rs, ReplicaSet)
    assert (rs.uid, rs.replicas, rs.owner, rs.revision) == ("replicaset/default/web", 1, None, 1)


def test_a_minimal_stateful_set_is_ordered_ready_with_rolling_updates_from_partition_0() -> None:
    sts = one(STATEFUL_SET)
    assert isinstance(sts, StatefulSet)
    assert (sts.uid, sts.replicas, sts.pod_management_policy, sts.update_strategy, sts.partition) == (
        "statefulset/default/web",
        1,
        "OrderedReady",
        "RollingUpdate",
        0,
    )
    assert (sts.service_name, sts.min_ready_ms) == ("", 0)


def test_a_minimal_job_runs_one_pod_to_completion() -> None:
    job = one(JOB)
    assert isinstance(job, Job)
    assert (job.uid, job.completions, job.parallelism, job.backoff_limit) == ("job/default/pi", 1, 1, 6)
    assert job.template.prototype.run_duration_ms == 90_000


def test_a_service_keeps_only_its_selector() -> None:
    svc = one(SERVICE)
    assert isinstance(svc, Service)
    assert (svc.name, svc.namespace, svc.selector, svc.line) == ("web", "default", {"app": "web"}, 1)


def test_every_field_of_a_deployment_is_read() -> None:
    d = one(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n"
        "  replicas: 5\n  minReadySeconds: 10\n  revisionHistoryLimit: 3\n"
        "  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 2, maxUnavailable: '50%'}}\n" + SELECTOR + TEMPLATE
    )
    assert (d.namespace, d.uid, d.replicas, d.min_ready_ms, d.max_surge, d.max_unavailable) == (
        "shop",
        "deployment/shop/web",
        5,
        10_000,
        2,
        "50%",
    )
    assert d.template.prototype.namespace == "shop"


def test_a_recreate_deployment() -> None:
    d = one(DEPLOYMENT.replace("spec:\n", "spec:\n  strategy: {type: Recreate}\n", 1))
    assert d.strategy == "Recreate"


def test_every_field_of_a_stateful_set_is_read_and_volume_claims_are_ignored() -> None:
    sts = one(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n"
        "  replicas: 3\n  serviceName: db-hs\n  podManagementPolicy: Parallel\n  minReadySeconds: 5\n"
        "  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 2}}\n"
        "  volumeClaimTemplates: [{metadata: {name: data}, spec: {resources: {requests: {storage: 1Gi}}}}]\n"
        + SELECTOR
        + TEMPLATE
    )
    assert (sts.replicas, sts.service_name, sts.pod_management_policy, sts.partition, sts.min_ready_ms) == (
        3,
        "db-hs",
        "Parallel",
        2,
        5000,
    )


def test_an_on_delete_stateful_set() -> None:
    sts = one(STATEFUL_SET.replace("spec:\n", "spec:\n  updateStrategy: {type: OnDelete}\n", 1))
    assert (sts.update_strategy, sts.partition) == ("OnDelete", 0)


@pytest.mark.parametrize(
    ("spec", "completions", "parallelism"),
    [
        ("", 1, 1),
        ("  completions: 5\n  parallelism: 2\n", 5, 2),
        ("  completions: null\n", None, 1),
        ("  parallelism: 3\n", None, 3),
        ("  completions: 0\n", 0, 1),
    ],
    ids=[
        "neither completions nor parallelism defaults both to 1",
        "completions and parallelism are kept",
        "completions null is a work queue",
        "parallelism without completions is a work queue, as the API server defaults it",
        "zero completions is allowed",
    ],
)
def test_job_completions_and_parallelism(spec: str, completions: int | None, parallelism: int) -> None:
    job = one(JOB.replace("spec:\n  template:", "spec:\n" + spec + "  backoffLimit: 2\n  template:", 1))
    assert (job.completions, job.parallelism, job.backoff_limit) == (completions, parallelism, 2)


@pytest.mark.parametrize(
    ("rolling", "surge", "unavailable"),
    [
        ("{maxSurge: 1, maxUnavailable: 0}", 1, 0),
        ("{maxSurge: '0%', maxUnavailable: '10%'}", "0%", "10%"),
        ("{maxSurge: '200%'}", "200%", "25%"),
        ("{maxUnavailable: 3}", "25%", 3),
        ("{}", "25%", "25%"),
    ],
    ids=[
        "integers are kept as integers",
        "percentages are kept as strings",
        "maxSurge may be more than 100 percent",
        "an unset field keeps its 25 percent default",
        "an empty rollingUpdate keeps both defaults",
    ],
)
def test_max_surge_and_max_unavailable(rolling: str, surge: int | str, unavailable: int | str) -> None:
    d = one(DEPLOYMENT.replace("spec:\n", f"spec:\n  strategy: {{rollingUpdate: {rolling}}}\n", 1))
    assert (d.max_surge, d.max_unavailable) == (surge, unavailable)


def test_a_workload_uid_is_deterministic_and_metadata_uid_wins() -> None:
    d = one(DEPLOYMENT.replace("name: web}", "name: web, uid: abc}"))
    assert d.uid == "abc"


def test_the_template_gets_the_workload_namespace_not_its_own() -> None:
    d = one(DEPLOYMENT.replace("{labels: {app: web}}", "{labels: {app: web}, namespace: other, name: x}"))
    assert (d.template.prototype.namespace, d.template.prototype.name) == ("default", "web-template")


def test_a_template_stamps_pods_with_their_own_identity() -> None:
    d = one(DEPLOYMENT)
    owner = OwnerReference("ReplicaSet", "web-abc", "rs-uid")
    pod = d.template.stamp("web-abc-x", "default", owner, "default/web-abc-x")
    assert (pod.name, pod.uid, pod.labels, pod.owner_references) == (
        "web-abc-x",
        "default/web-abc-x",
        {"app": "web"},
        (owner,),
    )


# -- manifest errors --------------------------------------------------------------------


def manifest_errors(text: str) -> list[str]:
    with pytest.raises(LoadError) as info:
        parse(text)
    return [str(p) for p in info.value.problems]


BAD_MANIFESTS = [
    (
        DEPLOYMENT.replace("matchLabels: {app: web}", "matchLabels: {app: api}"),
        "obj.yaml:5 spec.selector: does not match template labels",
    ),
    (
        STATEFUL_SET.replace("matchLabels: {app: web}", "matchExpressions: [{key: tier, operator: Exists}]"),
        "obj.yaml:5 spec.selector: does not match template labels",
    ),
    (
        DEPLOYMENT.replace(SELECTOR, ""),
        "obj.yaml:4 spec.selector: is required (apps/v1 does not default it from the template labels)",
    ),
    (
        REPLICA_SET.replace(SELECTOR, "  selector: {}\n"),
        "obj.yaml:5 spec.selector: must not be empty (it would select every pod in the namespace) for a ReplicaSet",
    ),
    (
        DEPLOYMENT.replace(TEMPLATE, ""),
        "obj.yaml:4 spec.template: is required (the pod template: metadata.labels and spec.containers)",
    ),
    (
        DEPLOYMENT.replace("spec:\n", "spec:\n  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}\n", 1),
        "obj.yaml:5 spec.strategy.rollingUpdate.maxUnavailable: may not be 0 when maxSurge is 0 "
        "(the rollout could never replace a pod)",
    ),
    (
        DEPLOYMENT.replace(
            "spec:\n", "spec:\n  strategy:\n    rollingUpdate:\n      maxSurge: '0%'\n      maxUnavailable: 0\n", 1
        ),
        "obj.yaml:8 spec.strategy.rollingUpdate.maxUnavailable: may not be 0 when maxSurge is 0 "
        "(the rollout could never replace a pod)",
    ),
    (
        DEPLOYMENT.replace("spec:\n", "spec:\n  strategy: {rollingUpdate: {maxUnavailable: '150%'}}\n", 1),
        'obj.yaml:5 spec.strategy.rollingUpdate.maxUnavailable: "150%" is more than 100%',
    ),
    (
        DEPLOYMENT.replace("spec:\n", "spec:\n  strategy: {rollingUpdate: {maxSurge: one}}\n", 1),
        'obj.yaml:5 spec.strategy.rollingUpdate.maxSurge: expected an integer or a percentage like "50%", '
        'got a string ("one")',
    ),
    (
        DEPLOYMENT.replace("spec:\n", "spec:\n  strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}\n", 1),
        "obj.yaml:5 spec.strategy.rollingUpdate: may not be set when strategy type is Recreate",
    ),
    (
        DEPLOYMENT.replace("spec:\n", "spec:\n  strategy: {type: BlueGreen}\n", 1),
        'obj.yaml:5 spec.strategy.type: "BlueGreen" is not one of RollingUpdate, Recreate',
    ),
    (
        DEPLOYMENT.replace("spec:\n", "spec:\n  replicas: -1\n", 1),
        "obj.yaml:5 spec.replicas: must be at least 0, got -1",
    ),
    (
        STATEFUL_SET.replace("spec:\n", "spec:\n  podManagementPolicy: Random\n", 1),
        'obj.yaml:5 spec.podManagementPolicy: "Random" is not one of OrderedReady, Parallel',
    ),
    (
        STATEFUL_SET.replace(
            "spec:\n", "spec:\n  updateStrategy: {type: OnDelete, rollingUpdate: {partition: 1}}\n", 1
        ),
        "obj.yaml:5 spec.updateStrategy.rollingUpdate: may not be set when updateStrategy type is OnDelete",
    ),
    (
        STATEFUL_SET.replace("spec:\n", "spec:\n  updateStrategy: {rollingUpdate: {partition: -2}}\n", 1),
        "obj.yaml:5 spec.updateStrategy.rollingUpdate.partition: must be at least 0, got -2",
    ),
    (
        JOB.replace("annotations: {kubeviz.dev/run-duration: 90s}", "labels: {app: pi}"),
        'obj.yaml:6 spec.template.metadata.annotations["kubeviz.dev/run-duration"]: is required for a Job: '
        'how long each pod runs before it succeeds (e.g. "90s")',
    ),
    (
        JOB.replace("restartPolicy: Never, ", ""),
        "obj.yaml:7 spec.template.spec.restartPolicy: is required for a Job: OnFailure or Never "
        "(Always, the pod default, is refused)",
    ),
    (
        JOB.replace("spec:\n  template:", "spec:\n  parallelism: -1\n  template:", 1),
        "obj.yaml:5 spec.parallelism: must be at least 0, got -1",
    ),
    (
        DEPLOYMENT.replace("{labels: {app: web}}", "{labels: {app: web}, annotations: {kubeviz.dev/run-duration: 1m}}"),
        'obj.yaml:7 spec.template.metadata.annotations["kubeviz.dev/run-duration"]: a Deployment\'s pods run until '
        "they are deleted (restartPolicy Always); kubeviz.dev/run-duration is for Jobs and bare pods",
    ),
    (
        DEPLOYMENT.replace("containers:", "restartPolicy: Never, containers:"),
        'obj.yaml:8 spec.template.spec.restartPolicy: "Never" is not allowed for a Deployment; its pods restart Always',
    ),
    (
        DEPLOYMENT.replace("image: 'web:1'", "image: 'web:1', resources: {requests: {cpu: 4x}}"),
        'obj.yaml:8 spec.template.spec.containers[0].resources.requests.cpu: "4x" is not a quantity',
    ),
    (
        DEPLOYMENT.replace("apps/v1", "extensions/v1beta1"),
        'obj.yaml:1 apiVersion: a string ("extensions/v1beta1") is not an apiVersion of Deployment; use apps/v1',
    ),
    (
        STATEFUL_SET.replace("name: web}", "name: web.db}"),
        'obj.yaml:3 metadata.name: "web.db" is not a valid name (a lowercase RFC 1123 DNS label: a-z, 0-9, "-")',
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    BAD_MANIFESTS,
    ids=[
        "a selector that does not match the template labels is rejected on the selector's line",
        "a match expression the template labels fail is a mismatch too",
        "an apps/v1 workload needs a selector",
        "an empty selector is rejected",
        "a workload needs a template",
        "maxSurge and maxUnavailable cannot both be 0",
        "zero percent counts as zero",
        "maxUnavailable cannot exceed 100 percent",
        "maxSurge must be an integer or a percentage",
        "a Recreate deployment takes no rollingUpdate",
        "an unknown strategy type is rejected",
        "negative replicas are rejected",
        "an unknown pod management policy is rejected",
        "an OnDelete stateful set takes no rollingUpdate",
        "a negative partition is rejected",
        "a Job without a run-duration annotation names the missing field",
        "a Job without restartPolicy is refused as the API server does",
        "negative parallelism is rejected",
        "a deployment's pods cannot have a run duration",
        "a deployment's pods must restart Always",
        "template errors name their full path",
        "an old Deployment apiVersion is rejected",
        "a stateful set name must be a DNS label",
    ],
)
def test_bad_workload_manifests_name_line_and_path(text: str, expected: str) -> None:
    assert manifest_errors(text)[0] == expected


# -- scenarios with workloads ----------------------------------------------------------


def objects(*manifests: str) -> str:
    """Indent manifests into spec.objects."""
    out = "  objects:\n"
    for manifest in manifests:
        lines = manifest.rstrip("\n").split("\n")
        out += "    - " + lines[0] + "\n" + "".join("      " + line + "\n" for line in lines[1:])
    return out


def test_a_scenario_keeps_workloads_and_services_in_document_order() -> None:
    scenario = load_scenario(HEAD + "  podStartup: 2s\n" + objects(SERVICE, STATEFUL_SET, DEPLOYMENT, JOB))
    assert [(w.kind, w.name) for w in scenario.workloads] == [
        ("StatefulSet", "web"),
        ("Deployment", "web"),
        ("Job", "pi"),
    ]
    assert [s.name for s in scenario.services] == ["web"]
    assert scenario.pod_startup_ms == 2000
    assert scenario.workloads[0].line == 12  # the "- apiVersion" line of the second object


def test_pod_startup_defaults_to_zero_and_must_be_a_duration() -> None:
    assert load_scenario(HEAD + "  nodes: []\n").pod_startup_ms == 0
    assert errors_of(HEAD + "  podStartup: 3\n") == [
        'scenario.yaml:6 spec.podStartup: 3 has no unit; write a duration like "3s" or "3ms"'
    ]


def test_template_priority_class_is_resolved_like_a_pod() -> None:
    pc = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
    deployment = DEPLOYMENT.replace("containers:", "priorityClassName: high, containers:")
    scenario = load_scenario(HEAD + objects(deployment, pc))
    proto = scenario.workloads[0].template.prototype
    assert (proto.priority, proto.priority_class_name) == (1000, "high")


def test_the_global_default_class_applies_to_templates() -> None:
    pc = (
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: base}\nvalue: 7\nglobalDefault: true\n"
    )
    scenario = load_scenario(HEAD + objects(pc, JOB))
    assert scenario.workloads[0].template.prototype.priority == 7


def test_a_template_naming_a_missing_class_says_which_workload() -> None:
    deployment = DEPLOYMENT.replace("containers:", "priorityClassName: gold, containers:")
    assert errors_of(HEAD + objects(deployment)) == [
        "scenario.yaml:14 spec.objects[0].spec.template.spec.priorityClassName: the pod template of Deployment "
        '"default/web" names PriorityClass "gold", which is not defined '
        "(defined: system-cluster-critical, system-node-critical)"
    ]


def test_workload_namespaces_are_created_implicitly() -> None:
    scenario = load_scenario(HEAD + objects(DEPLOYMENT.replace("name: web}", "name: web, namespace: shop}")))
    assert "shop" in scenario.namespaces


@pytest.mark.parametrize(
    ("manifests", "expected"),
    [
        (
            (DEPLOYMENT, DEPLOYMENT),
            'scenario.yaml:15 spec.objects[1]: duplicate Deployment "default/web" (first defined on line 7)',
        ),
        (
            (SERVICE, SERVICE),
            'scenario.yaml:11 spec.objects[1]: duplicate Service "default/web" (first defined on line 7)',
        ),
    ],
    ids=["two deployments with one name are rejected", "two services with one name are rejected"],
)
def test_duplicate_workloads_are_errors(manifests: tuple[str, ...], expected: str) -> None:
    assert errors_of(HEAD + objects(*manifests))[0] == expected


def test_workloads_of_different_kinds_or_namespaces_may_share_a_name() -> None:
    scenario = load_scenario(
        HEAD + objects(DEPLOYMENT, STATEFUL_SET, DEPLOYMENT.replace("name: web}", "name: web, namespace: b}"))
    )
    assert len(scenario.workloads) == 3


# -- the real example manifests ----------------------------------------------------------


def test_deployment_yaml_loads_a_two_replica_nginx_deployment(public_data: Callable[[str], Path]) -> None:
    scenario = load_scenario_file(public_data("k8s-examples/deployment.yaml"))
    (d,) = scenario.workloads
    assert isinstance(d, Deployment)
    assert (d.name, d.replicas, d.strategy, d.template.image, d.line) == (
        "nginx-deployment",
        2,
        "RollingUpdate",
        "nginx:1.15",
        1,
    )
    assert d.template.prototype.requests == {}  # no resource requests: BestEffort pods
    assert scenario.pods == []
    assert scenario.services == []


def test_web_statefulset_yaml_loads_a_headless_service_and_the_stateful_set(public_data: Callable[[str], Path]) -> None:
    scenario = load_scenario_file(public_data("k8s-examples/web-statefulset.yaml"))
    (svc,) = scenario.services
    assert (svc.name, svc.selector, svc.line) == ("nginx", {"app": "nginx"}, 1)
    (sts,) = scenario.workloads
    assert isinstance(sts, StatefulSet)
    assert (sts.name, sts.replicas, sts.service_name, sts.pod_management_policy, sts.line) == (
        "web",
        2,
        "nginx",
        "OrderedReady",
        15,
    )
    assert sts.template.image == "registry.k8s.io/nginx-slim:0.7"


def test_zookeeper_yaml_loads_services_a_pdb_and_a_stateful_set_with_its_quirks(
    public_data: Callable[[str], Path],
) -> None:
    scenario = load_scenario_file(public_data("k8s-examples/zookeeper.yaml"))
    assert [(s.name, s.line) for s in scenario.services] == [("zk-hs", 1), ("zk-cs", 17)]
    (pdb,) = scenario.pdbs
    assert (pdb.name, pdb.max_unavailable) == ("zk-pdb", 1)
    (sts,) = scenario.workloads
    assert isinstance(sts, StatefulSet)
    assert (sts.name, sts.replicas, sts.service_name, sts.update_strategy, sts.line) == (
        "zk",
        3,
        "zk-hs",
        "RollingUpdate",
        40,
    )
    proto = sts.template.prototype
    assert proto.requests == {"cpu": 500, "memory": 2**30}
    # The anti-affinity term selects key "app", but the pods are labelled app.kubernetes.io/name.
    assert proto.affinity is not None
    assert proto.affinity.pod_anti_affinity is not None
    term = proto.affinity.pod_anti_affinity.required[0]
    assert term.label_selector is not None
    assert not term.label_selector.matches(proto.labels)


# -- timeline actions --------------------------------------------------------------------

WEB = objects(DEPLOYMENT, STATEFUL_SET.replace("name: web}", "name: db}"))
NODES = "  nodes: [{name: a}, {name: b}]\n"


def timeline(*entries: str) -> str:
    return "  timeline:\n" + "".join(f"    - {entry}\n" for entry in entries)


@pytest.mark.parametrize(
    ("entry", "action", "target", "params"),
    [
        (
            "{at: 10s, action: scale, target: deployment/web, replicas: 4}",
            "scale",
            "deployment/default/web",
            {"replicas": 4},
        ),
        (
            "{at: 10s, action: scale, target: sts/default/db, replicas: 0}",
            "scale",
            "statefulset/default/db",
            {"replicas": 0},
        ),
        (
            "{at: 10s, action: setImage, target: deployment/web, image: 'web:2'}",
            "setImage",
            "deployment/default/web",
            {"image": "web:2", "container": None},
        ),
        (
            "{at: 10s, action: setImage, target: statefulset/db, image: 'web:2', container: web}",
            "setImage",
            "statefulset/default/db",
            {"image": "web:2", "container": "web"},
        ),
        ("{at: 10s, action: rolloutRestart, target: Deployment/web}", "rolloutRestart", "deployment/default/web", {}),
        ("{at: 10s, action: drainNode, target: node/a}", "drainNode", "node/a", {}),
        ("{at: 10s, action: delete, target: statefulset/db}", "delete", "statefulset/default/db", {}),
        ("{at: 10s, action: delete, target: pod/db-0}", "delete", "pod/default/db-0", {}),
    ],
    ids=[
        "scale stores the replica count",
        "scale to zero with a short kind name and a namespace",
        "setImage without a container changes every container",
        "setImage may name one container",
        "rolloutRestart takes a target only and kinds are case-insensitive",
        "drainNode targets a node",
        "delete takes a workload",
        "delete may target a stateful set pod by its ordinal name",
    ],
)
def test_timeline_actions_parse(entry: str, action: str, target: str, params: dict[str, Any]) -> None:
    scenario = load_scenario(HEAD + NODES + WEB + timeline(entry))
    (act,) = scenario.timeline
    assert (act.action, act.target, act.params, act.at_ms, act.line) == (action, target, params, 10_000, 25)


def test_a_workload_created_on_the_timeline_can_be_scaled_later() -> None:
    create = "{at: 30s, action: create, object: " + _flow(DEPLOYMENT) + "}"
    scale = "{at: 60s, action: scale, target: deployment/web, replicas: 3}"
    scenario = load_scenario(HEAD + timeline(scale, create))
    assert [(a.at_ms, a.action) for a in scenario.timeline] == [(30_000, "create"), (60_000, "scale")]
    (created,) = scenario.timeline[0].objects
    assert isinstance(created, Deployment)
    assert created.uid == "deployment/default/web"
    assert scenario.workloads == []


def test_a_workload_deleted_and_created_again_gets_a_new_uid() -> None:
    entries = (
        "{at: 10s, action: delete, target: deployment/web}",
        "{at: 20s, action: create, object: " + _flow(DEPLOYMENT) + "}",
        "{at: 30s, action: setImage, target: deployment/web, image: 'web:3', container: web}",
    )
    scenario = load_scenario(HEAD + objects(DEPLOYMENT) + timeline(*entries))
    assert scenario.workloads[0].uid == "deployment/default/web"
    (again,) = scenario.timeline[1].objects
    assert isinstance(again, Deployment)
    assert again.uid == "deployment/default/web~1"


def test_services_and_jobs_can_be_created_on_the_timeline() -> None:
    entry = "{at: 5s, action: create, objects: [" + _flow(SERVICE) + ", " + _flow(JOB) + "]}"
    (act,) = load_scenario(HEAD + timeline(entry)).timeline
    assert [type(obj) for obj in act.objects] == [Service, Job]


BAD_TIMELINES = [
    (
        timeline("{at: 10s, action: scale, target: deployment/web, replicas: 3}"),
        'scenario.yaml:7 spec.timeline[0].target: no Deployment "default/web" exists at 10s',
    ),
    (
        timeline(
            "{at: 60s, action: create, object: " + _flow(DEPLOYMENT) + "}",
            "{at: 30s, action: scale, target: deployment/web, replicas: 3}",
        ),
        'scenario.yaml:8 spec.timeline[1].target: no Deployment "default/web" exists at 30s',
    ),
    (
        WEB
        + timeline(
            "{at: 10s, action: delete, target: deployment/web}",
            "{at: 20s, action: rolloutRestart, target: deployment/web}",
        ),
        'scenario.yaml:25 spec.timeline[1].target: no Deployment "default/web" exists at 20s',
    ),
    (
        WEB + timeline("{at: 10s, action: scale, target: deployment/web}"),
        "scenario.yaml:24 spec.timeline[0].replicas: is required",
    ),
    (
        WEB + timeline("{at: 10s, action: scale, target: deployment/web, replicas: -1}"),
        "scenario.yaml:24 spec.timeline[0].replicas: must be at least 0, got -1",
    ),
    (
        WEB + timeline("{at: 10s, action: scale, target: deployment/web, replicas: '3'}"),
        'scenario.yaml:24 spec.timeline[0].replicas: expected an integer, got a string ("3")',
    ),
    (
        WEB + timeline("{at: 10s, action: scale, target: job/pi, replicas: 2}"),
        'scenario.yaml:24 spec.timeline[0].target: "job/pi" is not a target of scale; write '
        "<kind>/[<namespace>/]<name> (<kind>: deployment, statefulset, replicaset)",
    ),
    (
        WEB + timeline("{at: 10s, action: scale, target: deployment/a/b/c, replicas: 2}"),
        'scenario.yaml:24 spec.timeline[0].target: "deployment/a/b/c" is not a target of scale; write '
        "<kind>/[<namespace>/]<name> (<kind>: deployment, statefulset, replicaset)",
    ),
    (
        WEB + timeline("{at: 10s, action: scale, target: deployment/web, replicas: 2, image: x}"),
        "scenario.yaml:24 spec.timeline[0].image: unknown field; expected one of at, action, target, replicas",
    ),
    (
        WEB + timeline("{at: 10s, action: setImage, target: deployment/web}"),
        "scenario.yaml:24 spec.timeline[0].image: is required",
    ),
    (
        WEB + timeline("{at: 10s, action: setImage, target: deployment/web, image: 'web:2', container: sidecar}"),
        'scenario.yaml:24 spec.timeline[0].container: no container "sidecar" in the pod template of Deployment '
        '"default/web" (containers: web)',
    ),
    (
        WEB + timeline("{at: 10s, action: setImage, target: deployment/web, image: 'web 2'}"),
        'scenario.yaml:24 spec.timeline[0].image: "web 2" is not an image reference (it contains whitespace)',
    ),
    (
        WEB + timeline("{at: 10s, action: setImage, target: deployment/web, image: 'web:2', container: ''}"),
        "scenario.yaml:24 spec.timeline[0].container: must not be empty (leave it out to change every container)",
    ),
    (
        WEB + timeline("{at: 10s, action: rolloutRestart, target: replicaset/web}"),
        'scenario.yaml:24 spec.timeline[0].target: "replicaset/web" is not a target of rolloutRestart; write '
        "<kind>/[<namespace>/]<name> (<kind>: deployment, statefulset)",
    ),
    (
        WEB + timeline("{at: 10s, action: drainNode, target: node/zz}"),
        'scenario.yaml:24 spec.timeline[0].target: no node "zz" exists at 10s',
    ),
    (
        WEB + timeline("{at: 10s, action: drainNode, target: deployment/web}"),
        'scenario.yaml:24 spec.timeline[0].target: "deployment/web" is not a target of drainNode; write node/<name>',
    ),
    (
        WEB + timeline("{at: 10s, action: delete, target: service/web}"),
        'scenario.yaml:24 spec.timeline[0].target: "service/web" is not a target of delete; write '
        "<kind>/[<namespace>/]<name> (<kind>: pod, deployment, statefulset, replicaset, job) or node/<name>",
    ),
    (
        WEB + timeline("{at: 10s, action: delete, target: pod/db-1}"),
        'scenario.yaml:24 spec.timeline[0].target: no pod "default/db-1" exists at 10s',
    ),
    (
        WEB + timeline("{at: 10s, action: create, object: " + _flow(DEPLOYMENT) + "}"),
        'scenario.yaml:24 spec.timeline[0].object: a Deployment "default/web" already exists at 10s',
    ),
    (
        objects(SERVICE) + timeline("{at: 10s, action: create, object: " + _flow(SERVICE) + "}"),
        'scenario.yaml:12 spec.timeline[0].object: a Service "default/web" already exists at 10s',
    ),
]


@pytest.mark.parametrize(
    ("body", "expected"),
    BAD_TIMELINES,
    ids=[
        "scaling a workload that does not exist names the line",
        "scaling before the workload is created is an error",
        "a deleted workload cannot be restarted",
        "scale needs replicas",
        "scale to a negative count is rejected",
        "replicas must be an integer",
        "a Job cannot be scaled",
        "a target with too many parts is rejected",
        "scale takes no image",
        "setImage needs an image",
        "setImage of a container the template lacks lists the containers",
        "an image with spaces is rejected",
        "an empty container name is rejected",
        "a replica set cannot be restarted",
        "draining a node that does not exist is an error",
        "only nodes are drained",
        "services cannot be deleted on the timeline",
        "a stateful set pod beyond its replicas does not exist",
        "creating a workload that exists is an error",
        "creating a service that exists is an error",
    ],
)
def test_bad_timeline_actions_name_field_and_line(body: str, expected: str) -> None:
    assert errors_of(HEAD + body)[0] == expected


def test_scaling_a_stateful_set_up_makes_its_higher_ordinals_targetable() -> None:
    entries = (
        "{at: 10s, action: scale, target: statefulset/db, replicas: 3}",
        "{at: 20s, action: delete, target: pod/db-2}",
    )
    scenario = load_scenario(HEAD + WEB + timeline(*entries))
    assert scenario.timeline[1].target == "pod/default/db-2"


def test_the_documented_workload_example_loads() -> None:
    docs = (REPO_ROOT / "docs" / "scenario.md").read_text(encoding="utf-8")
    (example,) = [block for block in re.findall(r"```yaml\n(.*?)```", docs, re.S) if "name: rollout" in block]
    scenario = load_scenario(example)
    assert [(w.kind, w.name) for w in scenario.workloads] == [("Deployment", "web"), ("StatefulSet", "db")]
    assert [(a.action, a.target, a.params) for a in scenario.timeline[1:]] == [
        ("setImage", "deployment/default/web", {"image": "web:2", "container": "web"}),
        ("scale", "statefulset/default/db", {"replicas": 3}),
        ("delete", "pod/default/db-0", {}),
        ("drainNode", "node/node-a", {}),
        ("rolloutRestart", "deployment/default/web", {}),
    ]
    bad = example + "    - {at: 4m, action: scale, target: job/report, replicas: 1}\n"
    assert errors_of(bad)[0].startswith('scenario.yaml:60 spec.timeline[6].target: "job/report" is not a target')
