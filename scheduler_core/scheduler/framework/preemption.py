"""What a preemption decided, as the framework hands it on (``framework/preemption/preemption.go``).

Upstream's ``framework/preemption`` package holds the ``Candidate`` a preemption plugin finds
(a node and the victims to remove there) and the ``Evaluator`` that acts on the best one
(``prepareCandidate``: delete the victims, clear lower-priority nominations on that node). Here
the plugin (``plugins/default_preemption.py``) only decides, and returns a
:class:`PreemptionDecision` in its ``PostFilterResult``; the scheduling loop acts on it and
``explain`` shows it without acting, neither knowing which plugin decided.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...api.model import Pod
from ...trace.events import PreemptionDecisionFields
from .types import Status

__all__ = ["Candidate", "PreemptionDecision"]


@dataclass
class Candidate:
    """preemption.go Candidate: a node where removing ``victims`` lets the pod fit, and how many
    PodDisruptionBudgets removing them violates (extenderv1.Victims.NumPDBViolations)."""

    node: str
    victims: list[Pod]
    pdb_violations: int


@dataclass
class PreemptionDecision:
    """Everything a preemption considered, for the trace and for ``explain``; ``chosen`` is the
    candidate the loop acts on (its victims deleted, its node the pod's nomination)."""

    eligible: bool
    reason: str | None = None
    candidates: list[Candidate] = field(default_factory=list)
    chosen: Candidate | None = None
    decided_by: str | None = None
    node_statuses: dict[str, Status] = field(default_factory=dict)  # dry-run failures, by node
    offset: int = 0
    num_candidates: int = 0

    def as_dict(self) -> PreemptionDecisionFields:
        return {
            "eligible": self.eligible,
            "reason": self.reason,
            "candidates": [
                {"node": c.node, "victims": [v.key for v in c.victims], "pdb_violations": c.pdb_violations}
                for c in self.candidates
            ],
            "chosen": self.chosen.node if self.chosen else None,
            "decided_by": self.decided_by,
        }
