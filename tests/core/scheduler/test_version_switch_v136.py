"""A policy loaded as another Kubernetes version (load_policy's kubernetes_version): what the CLI's
``--kubernetes-version`` and the fork action ``switchKubernetesVersion`` run, and the trace's
``run_started`` that says which version ran."""

from __future__ import annotations

import pytest

from scheduler_core.api.scenario_types import Scenario
from scheduler_core.documents import LoadError
from scheduler_core.scheduler import (
    GATE_DEFAULTS,
    QUEUEING_HINTS,
    V1_31,
    V1_36,
    Policy,
    builtin_policy,
    kubernetes_version_problem,
    load_policy,
)
from scheduler_core.simulation.simulation import Simulation
from tests.core.builders import make_node, make_pod

POP = "SchedulerPopFromBackoffQ"


def _doc(spec: str) -> str:
    return f"apiVersion: kubeviz.dev/v1\nkind: Policy\nmetadata: {{name: p}}\nspec: {spec}\n"


def _policy(spec: str, version: str | None = None) -> Policy:
    return load_policy(_doc(spec), kubernetes_version=version)


@pytest.mark.parametrize(
    ("spec", "version", "gates"),
    [
        ("{}", V1_36, dict(GATE_DEFAULTS[V1_36])),
        ("{kubernetesVersion: v1.36}", V1_31, {QUEUEING_HINTS: False}),
        # SchedulerQueueingHints on in v1.31 is v1.36's locked default anyway.
        ("{featureGates: {SchedulerQueueingHints: true}}", V1_36, dict(GATE_DEFAULTS[V1_36])),
        # A gate set away from v1.36's default keeps its setting; v1.31 does not have it.
        ("{kubernetesVersion: v1.36, featureGates: {SchedulerPopFromBackoffQ: false}}", V1_31, {QUEUEING_HINTS: False}),
    ],
    ids=[
        "v1.31 to v1.36 takes v1.36's gate defaults",
        "v1.36 to v1.31 leaves QueueingHints off, as v1.31 has it",
        "QueueingHints on in v1.31 is locked on in v1.36",
        "a gate the other version does not have is dropped",
    ],
)
def test_switching_is_what_the_document_would_load_to(spec: str, version: str, gates: dict[str, bool]) -> None:
    switched = _policy(spec, version)
    assert switched.kubernetes_version == version
    assert dict(switched.feature_gates) == gates
    assert switched.queueing_hints == gates[QUEUEING_HINTS]


def test_a_gate_override_the_target_version_allows_is_kept() -> None:
    """v1.36 with pop-from-backoffQ off, loaded as v1.36 itself: unchanged."""
    spec = "{kubernetesVersion: v1.36, featureGates: {SchedulerPopFromBackoffQ: false}}"
    assert _policy(spec, V1_36) == _policy(spec)
    assert dict(_policy(spec, V1_36).feature_gates)[POP] is False


@pytest.mark.parametrize("version", [V1_31, V1_36])
def test_the_override_equals_the_document_naming_that_version(version: str) -> None:
    """Profiles included: v1.36's default profile is its own (profile.default_plugins)."""
    assert _policy("{}", version) == _policy(f"{{kubernetesVersion: {version}}}")
    assert _policy("{kubernetesVersion: v1.36}", version) == _policy(f"{{kubernetesVersion: {version}}}")


def test_a_bare_configuration_is_loaded_as_the_version_too() -> None:
    bare = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    loaded = load_policy(bare, "bare.yaml", kubernetes_version=V1_36)
    assert loaded.kubernetes_version == V1_36
    assert loaded.profiles == _policy("{kubernetesVersion: v1.36}").profiles


@pytest.mark.parametrize(
    ("version", "problem"),
    [
        ("v1.32", "'v1.32' is not a Kubernetes version kubeviz models; use v1.31 or v1.36"),
        (V1_36, "legacy-v1.5 uses the v1.5-era FIFO queue or legacy scheduler, which v1.36 cannot run"),
    ],
    ids=["an unmodelled version is refused", "the FIFO queue cannot run where QueueingHints are locked on"],
)
def test_what_cannot_switch_says_why(version: str, problem: str) -> None:
    legacy = builtin_policy("legacy-v1.5")
    said = kubernetes_version_problem(legacy, version)
    assert said is not None
    assert said.startswith(problem)
    with pytest.raises(LoadError, match="cannot run|not a Kubernetes version"):
        builtin_policy("legacy-v1.5", kubernetes_version=version)
    assert kubernetes_version_problem(legacy, V1_31) is None


@pytest.mark.parametrize("version", [V1_31, V1_36])
def test_run_started_names_the_version_and_its_gates(version: str) -> None:
    scenario = Scenario(name="one", nodes=[make_node("n1")], pods=[make_pod("p1")])
    policy = builtin_policy("default", kubernetes_version=version)
    sim = Simulation(scenario, policy, 1)
    sim.run()
    first = sim.trace.events[0]
    assert first["type"] == "run_started"
    assert first["kubernetes_version"] == version
    assert first["feature_gates"] == dict(GATE_DEFAULTS[version])
