"""What a request to start a run names, checked once for the run form and the API.

Both answer a request with the same shared run (services/shared_runs.request_run); this module
turns the request's words (slugs, a seed, a cluster id) into the things the user may use, or an
error naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..access import visible_policies, visible_scenarios
from ..models import Cluster, Policy, Scenario
from ..request_types import Viewer
from .clusters import ClusterChoiceError, choose_run_cluster
from .shared_runs import scenario_seed

__all__ = ["DEFAULT_POLICY", "MAX_SEED", "RunChoice", "RunRequestError", "choose_run"]

DEFAULT_POLICY = "default"
# Seeds are stored in a signed 32-bit column and shown as typed.
MAX_SEED = 2**31 - 1


class RunRequestError(ValueError):
    """A field of the request that names nothing the user may use (``missing``: it names nothing
    they can see, which the run form answers with 404) or is out of range."""

    def __init__(self, field: str, message: str, *, missing: bool = False) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.missing = missing


@dataclass(frozen=True)
class RunChoice:
    scenario: Scenario
    policy: Policy
    seed: int
    cluster: Cluster | None


def choose_run(user: Viewer, scenario_slug: str, policy_slug: str, seed: int | None, cluster: str) -> RunChoice:
    """The scenario, policy, seed (default: the scenario's own) and cluster a request names.

    A slug the user may not see reads exactly like one that does not exist (access.py)."""
    scenario_slug = scenario_slug.strip()
    if not scenario_slug:
        raise RunRequestError("scenario", "choose a scenario to run")
    scenario = visible_scenarios(user).filter(slug=scenario_slug).first()
    if scenario is None:
        raise RunRequestError("scenario", f"no scenario {scenario_slug!r} you can run", missing=True)
    policy_slug = policy_slug.strip() or DEFAULT_POLICY
    policy = visible_policies(user).filter(slug=policy_slug).first()
    if policy is None:
        raise RunRequestError("policy", f"no policy {policy_slug!r} you can use", missing=True)
    if seed is not None and not 0 <= seed <= MAX_SEED:
        raise RunRequestError("seed", f"must be from 0 to {MAX_SEED}, not {seed}")
    try:
        chosen = choose_run_cluster(user, scenario, cluster)
    except ClusterChoiceError as refusal:
        raise RunRequestError(
            "cluster", str(refusal).removeprefix("cluster: "), missing=refusal.status == 404
        ) from None
    return RunChoice(scenario, policy, scenario_seed(scenario) if seed is None else seed, chosen)
