"""What if? ``switchKubernetesVersion``: a run forked into the other Kubernetes version, its
policy kept (docs/forks.md). The fork shares the parent's past and goes on under the policy
loaded as that version, the queue kept as switchPolicy keeps it. The parent runs v1.31 (pinned:
v1.36 is the default now) and is forked into v1.36; the way back is the last case."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_core.documents.scenario import load_scenario_file
from scheduler_core.scheduler.policy import builtin_policy
from scheduler_core.simulation.fork import ForkAction, ForkError, fork_simulation
from scheduler_core.simulation.simulation import Simulation
from scheduler_core.trace.stream import dumps

SCENARIOS = Path(__file__).parents[3] / "scheduler_core" / "scenarios"
AT = 50  # mixed-small under default at v1.31, seed 1: the end of a step (test_fork.py)


def _v1_31(name="default"):
    return builtin_policy(name, kubernetes_version="v1.31")


def _scenario():
    return load_scenario_file(SCENARIOS / "mixed-small.yaml")


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"action": "switchKubernetesVersion"}, "version", "is required"),
        ({"action": "switchKubernetesVersion", "version": "v1.33"}, "version", "is not a Kubernetes version"),
        ({"action": "switchKubernetesVersion", "version": "v1.36", "target": "x"}, "target", "is not a field"),
    ],
    ids=["the version is required", "only a modelled version is taken", "it takes no target"],
)
def test_a_bad_version_switch_names_the_field(data, field, message):
    with pytest.raises(ForkError) as err:
        ForkAction.from_dict(data)
    assert err.value.field == field
    assert message in str(err.value)


def test_the_action_reads_back_and_says_itself():
    action = ForkAction.from_dict({"action": "switchKubernetesVersion", "version": " v1.36 "})
    assert action.as_dict() == {"action": "switchKubernetesVersion", "version": "v1.36"}
    assert action.describe() == "switch to Kubernetes v1.36"


def test_the_fork_shares_the_past_and_goes_on_under_the_other_version():
    parent = Simulation(_scenario(), _v1_31(), 1)
    parent.run()
    at_v136 = builtin_policy("default", kubernetes_version="v1.36")
    action = {"action": "switchKubernetesVersion", "version": "v1.36"}
    sim = fork_simulation(_scenario(), _v1_31(), 1, AT, action, at_v136)
    assert sim.policy.kubernetes_version == "v1.36"
    assert [dumps(e) for e in sim.trace.events[: AT + 1]] == [dumps(e) for e in parent.trace.events[: AT + 1]]
    mark = sim.trace.events[AT + 1]
    assert mark["type"] == "action"
    assert mark["fork_seq"] == AT
    assert mark["what_if"] == "switch to Kubernetes v1.36"


@pytest.mark.parametrize(
    ("continue_version", "message"),
    [(None, "needs the policy loaded as that version"), ("v1.31", "runs v1.31, not v1.36")],
    ids=["the policy under the version is required", "it must run the version named"],
)
def test_the_switch_needs_the_policy_under_that_version(continue_version, message):
    action = {"action": "switchKubernetesVersion", "version": "v1.36"}
    given = None if continue_version is None else _v1_31("spread")
    with pytest.raises(ForkError, match=message):
        fork_simulation(_scenario(), _v1_31(), 1, AT, action, given)


def test_switching_to_the_version_the_run_has_is_refused():
    action = {"action": "switchKubernetesVersion", "version": "v1.31"}
    with pytest.raises(ForkError, match="already runs Kubernetes v1.31"):
        fork_simulation(_scenario(), _v1_31(), 1, AT, action, _v1_31())


def test_a_run_at_the_default_version_forks_back_into_v1_31():
    """The default is v1.36: the same switch the other way, to see what v1.31 would have done."""
    parent = Simulation(_scenario(), builtin_policy("default"), 1)
    parent.run()
    assert parent.policy.kubernetes_version == "v1.36"
    action = {"action": "switchKubernetesVersion", "version": "v1.31"}
    sim = fork_simulation(_scenario(), builtin_policy("default"), 1, AT, action, _v1_31())
    assert sim.policy.kubernetes_version == "v1.31"
    assert [dumps(e) for e in sim.trace.events[: AT + 1]] == [dumps(e) for e in parent.trace.events[: AT + 1]]
    assert sim.trace.events[AT + 1]["what_if"] == "switch to Kubernetes v1.31"
