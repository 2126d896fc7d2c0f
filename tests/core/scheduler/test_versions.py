"""spec.kubernetesVersion and each version's feature gates (pkg/features/kube_features.go)."""

from __future__ import annotations

import pytest

from scheduler_core.documents.errors import LoadError
from scheduler_core.scheduler.policy import load_policy
from scheduler_core.scheduler.versions import GATE_DEFAULTS, V1_31, V1_36

HEAD = "apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata: {name: p}\n"


def _load(spec: str):
    return load_policy(HEAD + "spec:\n" + "".join(f"  {line}\n" for line in spec.splitlines()))


@pytest.mark.parametrize("version", [V1_31, V1_36])
def test_a_version_brings_its_gate_defaults(version: str) -> None:
    policy = _load(f"kubernetesVersion: {version}")
    assert policy.kubernetes_version == version
    assert dict(policy.feature_gates) == dict(GATE_DEFAULTS[version])
    assert policy.queueing_hints is GATE_DEFAULTS[version]["SchedulerQueueingHints"]


def test_v136_gates_as_upstream_defaults_them() -> None:
    policy = _load("kubernetesVersion: v1.36")
    for gate in (
        "SchedulerQueueingHints",
        "SchedulerPopFromBackoffQ",
        "SchedulerAsyncPreemption",
        "ClearingNominatedNodeNameAfterBinding",
        "NominatedNodeNameForExpectation",
        "OpportunisticBatching",
        "DynamicResourceAllocation",
    ):
        assert policy.gate(gate), gate
    assert not _load("kubernetesVersion: v1.31").gate("SchedulerPopFromBackoffQ")


def test_a_gate_may_be_overridden_where_the_version_allows() -> None:
    policy = _load("kubernetesVersion: v1.36\nfeatureGates: {SchedulerPopFromBackoffQ: false}")
    assert not policy.gate("SchedulerPopFromBackoffQ")
    assert policy.gate("SchedulerAsyncPreemption")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("kubernetesVersion: v1.35", 'spec.kubernetesVersion: "v1.35" is not one of v1.31, v1.36'),
        (
            "kubernetesVersion: v1.36\nfeatureGates: {SchedulerQueueingHints: false}",
            "spec.featureGates.SchedulerQueueingHints: cannot be false under v1.36: QueueingHints are GA",
        ),
        (
            "kubernetesVersion: v1.36\nfeatureGates: {DynamicResourceAllocation: false}",
            "spec.featureGates.DynamicResourceAllocation: cannot be false under v1.36",
        ),
        (
            "kubernetesVersion: v1.31\nfeatureGates: {SchedulerPopFromBackoffQ: true}",
            "spec.featureGates.SchedulerPopFromBackoffQ: unknown feature gate under v1.31",
        ),
        (
            "kubernetesVersion: v1.36\nqueueMode: fifo",
            "spec.queueMode: fifo needs kubernetesVersion v1.31: kube-scheduler v1.36 has no queue without",
        ),
        (
            "schedulerMode: legacy",  # no version: the default, v1.36
            "spec.schedulerMode: legacy needs kubernetesVersion v1.31",
        ),
        (
            "kubernetesVersion: v1.31\nqueueMode: fifo\nfeatureGates: {SchedulerQueueingHints: true}",
            "spec.featureGates.SchedulerQueueingHints: needs queueMode priority",
        ),
    ],
)
def test_bad_versions_and_gates_name_the_field(spec: str, message: str) -> None:
    with pytest.raises(LoadError) as err:
        _load(spec)
    assert message in str(err.value)
