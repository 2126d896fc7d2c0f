"""What a preemption decided, as the framework hands it on (``framework/preemption/preemption.go``).

Upstream's ``framework/preemption`` package holds the ``Candidate`` a preemption plugin finds
(a node and the victims to remove there) and the ``Evaluator`` that acts on the best one
(``prepareCandidate``: delete the victims, clear lower-priority nominations on that node). Here
the plugin (``plugins/default_preemption.py``) only decides, and returns a
:class:`PreemptionDecision` in its ``PostFilterResult``; the scheduling loop acts on it and
``explain`` shows it without acting, neither knowing which plugin decided.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...api.model import Pod
from ...trace.events import PreemptionDecisionFields
from .types import Status

__all__ = ["Candidate", "PreemptionDecision", "PreemptionExecutor", "MSG_WAITING_FOR_PREEMPTION"]

# default_preemption.go PreEnqueue (v1.36.2): the preemptor's gate while its victims go.
MSG_WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"


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
    # v1.36: the plugin's executor (the loop acts through it; None: the v1.31 model), and
    # whether it deletes the victims asynchronously (the SchedulerAsyncPreemption gate)
    executor: PreemptionExecutor | None = None
    asynchronous: bool = False

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


class PreemptionExecutor:
    """framework/preemption/executor.go Executor (v1.36.2): what a preemption that is under way
    leaves for the rest of the scheduler to read.

    - ``preempting``: preemptors (by uid) whose victims are being deleted asynchronously
      (prepareCandidateAsync inserts the uid in the cycle, before the goroutine starts, and
      removes it when the goroutine ends); DefaultPreemption's PreEnqueue gates them meanwhile.
    - ``last_victim``: lastVictimsPendingPreemption, the victim whose deletion the goroutine is
      making last; once that pod is gone or terminating the preemption counts as done, even
      before the goroutine has returned (so the deletion event is not lost to the gate).
    - ``preempted``: victims (by uid) that got the DisruptionTarget condition with reason
      PreemptionByScheduler (PreemptPod's status patch); ``podTerminatingByPreemption`` asks it.

    The scheduling loop deletes the victims through it (``schedule_one.py``); kubeviz's API calls
    take no virtual time, so the "goroutine" runs at the cycle's instant, right after the failed
    pod is back in the queue (docs/mapping.md).
    """

    def __init__(self) -> None:
        self.preempting: set[str] = set()
        self.last_victim: dict[str, Pod] = {}
        self.preempted: dict[int, Pod] = {}  # by id(): a pod object is its identity
        # the API server's view of a pod (the pod lister), set by the loop that deletes
        self.pod_exists: Callable[[Pod], bool] = lambda _pod: True

    @staticmethod
    def uid(pod: Pod) -> str:
        """The preemptor's key in ``preempting`` (its UID upstream; a pod without one, its name)."""
        return pod.uid or pod.key

    def mark_preempted(self, victim: Pod) -> None:
        """PreemptPod's status patch: DisruptionTarget, reason PreemptionByScheduler."""
        self.preempted[id(victim)] = victim

    def is_pod_running_preemption(self, uid: str) -> bool:
        """executor.go isRunningPreemption."""
        if uid not in self.preempting:
            return False
        victim = self.last_victim.get(uid)
        if victim is None:
            return True  # the goroutine has not reached its last victim yet
        # Victim already deleted, or its deletion has started: preemption is done.
        return not (victim.terminating or not self.pod_exists(victim))

    def terminating_by_preemption(self, pod: Pod) -> bool:
        """default_preemption.go podTerminatingByPreemption: deleting, with the DisruptionTarget
        condition this scheduler's preemption set."""
        return pod.terminating and self.preempted.get(id(pod)) is pod
