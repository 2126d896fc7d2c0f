"""The words of the scheduler, once: what the glossary page, the run page's tooltips and
docs/glossary.md all show.

Every term the pages explain lives in ``TERMS`` (a slug, the word as the pages print it, one to
three plain sentences, and the upstream file of kubernetes/kubernetes where the rule lives).
The ``term`` template tag (kubeviz/web/templatetags/terms.py) reads its tooltip from here, so a
page cannot explain a word the glossary lacks. Plain Python, no Django: ``python -m
kubeviz.web.services.glossary`` prints docs/glossary.md, and a test keeps that file equal to it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Term", "Section", "SECTIONS", "TERMS", "UPSTREAM_BASE", "term", "markdown"]

UPSTREAM_BASE = "https://github.com/kubernetes/kubernetes/blob/master/"
Q = "pkg/scheduler/internal/queue/scheduling_queue.go"
ONE = "pkg/scheduler/schedule_one.go"
IFACE = "pkg/scheduler/framework/interface.go"
RUNTIME = "pkg/scheduler/framework/runtime/framework.go"
PREEMPT = "pkg/scheduler/framework/preemption/preemption.go"
CACHE = "pkg/scheduler/internal/cache/cache.go"
B36Q = "pkg/scheduler/backend/queue/scheduling_queue.go"  # v1.36's layout
B36B = "pkg/scheduler/backend/queue/backoff_queue.go"
DRA_TYPES = "staging/src/k8s.io/api/resource/v1/types.go"
DRA_PLUGIN = "pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go"
DRA_ALLOCATOR = "staging/src/k8s.io/dynamic-resource-allocation/structured/allocator.go"


@dataclass(frozen=True)
class Term:
    """One glossary entry. ``slug`` is the page anchor (``/glossary/#slug``)."""

    slug: str
    name: str
    text: str
    upstream: str = ""  # a path inside kubernetes/kubernetes, or "" (kubeviz's own idea)
    section: str = ""

    @property
    def upstream_url(self) -> str:
        return UPSTREAM_BASE + self.upstream if self.upstream else ""


@dataclass(frozen=True)
class Section:
    key: str
    title: str


SECTIONS = (
    Section("queue", "The scheduling queue"),
    Section("cycle", "A scheduling cycle"),
    Section("score", "Scores"),
    Section("bind", "Assume and bind"),
    Section("preemption", "Priority and preemption"),
    Section("constraints", "Where a pod may go"),
    Section("page", "On the run page"),
    Section("cluster", "Changing the cluster"),
    Section("dra", "Devices (Dynamic Resource Allocation)"),
)


def _t(section: str, slug: str, name: str, text: str, upstream: str = "") -> Term:
    return Term(slug=slug, name=name, text=text, upstream=upstream, section=section)


TERMS: tuple[Term, ...] = (
    # -- the queue ---------------------------------------------------------------------
    _t(
        "queue",
        "activeq",
        "activeQ",
        "The pods ready to be tried, in a heap: the highest priority pops first, then the one that "
        "has waited longest. The scheduler takes one pod at a time from its head.",
        Q,
    ),
    _t(
        "queue",
        "backoffq",
        "backoffQ",
        "Pods that failed recently and wait out their backoff before going back to activeQ. "
        "It is ordered by when each pod's backoff ends.",
        Q,
    ),
    _t(
        "queue",
        "unschedulable-pods",
        "unschedulablePods",
        "Pods that fit nowhere, parked until a cluster event that could help them (a node added, a "
        "pod deleted, …) or the 5-minute leftover flush moves them out. The run page's "
        "'Unschedulable' lane.",
        Q,
    ),
    _t(
        "queue",
        "backoff",
        "backoff",
        "How long a failed pod waits before its next try: 1 s after the first attempt, doubling "
        "with each attempt (2 s, 4 s, 8 s) up to 10 s.",
        Q,
    ),
    _t(
        "queue",
        "flush",
        "flush",
        "Two timers move pods without any cluster event: every 1 s, pods whose backoff is over go "
        "from backoffQ to activeQ; every 30 s, pods that sat in unschedulablePods too long (the "
        "leftover) go back to be tried.",
        Q,
    ),
    _t(
        "queue",
        "leftover",
        "leftover",
        "A pod that has been in unschedulablePods for more than 5 minutes "
        "(podMaxInUnschedulablePodsDuration). The 30-second flush retries it even if no event "
        "suggested it might fit.",
        Q,
    ),
    _t(
        "queue",
        "cluster-event",
        "cluster event",
        "A change the scheduler hears about from the API server: a node added or updated, a pod "
        "added, deleted or bound. A pod in unschedulablePods moves only on an event one of the "
        "plugins that rejected it registered for.",
        "pkg/scheduler/eventhandlers.go",
    ),
    _t(
        "queue",
        "queueinghint",
        "QueueingHint",
        "A per-plugin function that looks at a cluster event and says whether it could make a "
        "rejected pod schedulable. Off by default in v1.31 (any event a rejecting plugin registered "
        "for moves the pod; the SchedulerQueueingHints gate turns them on), GA and locked on in v1.36.",
        "pkg/scheduler/framework/types.go",
    ),
    _t(
        "queue",
        "pop-from-backoffq",
        "pop from backoffQ",
        "v1.36 (the SchedulerPopFromBackoffQ gate): when activeQ is empty, the scheduler takes the "
        "pod whose backoff ends first from backoffQ instead of waiting. So in an idle scheduler an "
        "event that moves a pod to backoffQ retries it at once; v1.31 waits out the backoff.",
        B36Q,
    ),
    _t(
        "queue",
        "error-backoff",
        "error backoff",
        "v1.36: a pod whose attempt failed with an error (not 'fits nowhere') waits in a heap of its "
        "own beside backoffQ, and pop from backoffQ never takes it early: it is retried only when "
        "its backoff is over.",
        B36B,
    ),
    # -- a cycle -----------------------------------------------------------------------
    _t(
        "cycle",
        "scheduling-cycle",
        "scheduling cycle",
        "One pod popped from activeQ and decided: PreFilter, Filter, (PostFilter if nothing fits), "
        "Score, selectHost, then assume, Reserve and Permit. Cycles run one at a time.",
        ONE,
    ),
    _t(
        "cycle",
        "binding-cycle",
        "binding cycle",
        "After a scheduling cycle chose a node: PreBind, Bind (write spec.nodeName through the API "
        "server) and PostBind. It runs asynchronously, so the next pod's cycle need not wait.",
        ONE,
    ),
    _t(
        "cycle",
        "extension-point",
        "extension point",
        "A named step of the cycle where plugins are called: PreFilter, Filter, PostFilter, "
        "PreScore, Score, NormalizeScore, Reserve, Permit, PreBind, Bind, PostBind.",
        IFACE,
    ),
    _t(
        "cycle",
        "prefilter",
        "PreFilter",
        "Runs once per pod before any node is checked: plugins compute what Filter needs, and may "
        "reject the pod outright (then no node is looked at).",
        IFACE,
    ),
    _t(
        "cycle",
        "filter",
        "Filter",
        "Runs for each node: every Filter plugin must say the pod fits there, and the first that "
        "refuses stops the checks for that node with its reason.",
        RUNTIME,
    ),
    _t(
        "cycle",
        "postfilter",
        "PostFilter",
        "Runs only when no node fits. The default PostFilter plugin is DefaultPreemption, which "
        "looks for lower-priority pods to evict.",
        IFACE,
    ),
    _t(
        "cycle",
        "prescore",
        "PreScore",
        "Runs once per pod before scoring, so Score plugins can share per-pod work (in the cycle state).",
        IFACE,
    ),
    _t(
        "cycle",
        "score",
        "Score",
        "Runs for each feasible node: each Score plugin gives the node a raw score by its own rule. "
        "Skipped when only one node fits.",
        RUNTIME,
    ),
    _t(
        "cycle",
        "normalizescore",
        "NormalizeScore",
        "A Score plugin's chance to map its raw scores onto 0–100 over this cycle's nodes (for "
        "example reversing counts, so fewer untolerated taints scores higher).",
        RUNTIME,
    ),
    _t(
        "cycle",
        "reserve",
        "Reserve",
        "Runs right after assume, so plugins can set resources aside for the pod; if anything later "
        "fails, Unreserve undoes it.",
        IFACE,
    ),
    _t(
        "cycle",
        "permit",
        "Permit",
        "The last gate of the scheduling cycle: a plugin may allow, deny or make the pod wait before binding.",
        IFACE,
    ),
    _t(
        "cycle",
        "prebind",
        "PreBind",
        "Work that must happen before the pod is bound, such as attaching volumes (not modelled by kubeviz).",
        IFACE,
    ),
    _t(
        "cycle",
        "bind-point",
        "Bind",
        "The extension point that binds: DefaultBinder writes the binding to the API server.",
        "pkg/scheduler/framework/plugins/defaultbinder/default_binder.go",
    ),
    _t(
        "cycle",
        "plugin",
        "plugin",
        "One rule of the scheduler, such as NodeResourcesFit or TaintToleration, called at the "
        "extension points it implements. A policy (profile) lists the plugins and their weights.",
        "pkg/scheduler/framework/plugins/registry.go",
    ),
    _t(
        "cycle",
        "feasible-node",
        "feasible node",
        "A node every Filter plugin accepted for the pod. Only feasible nodes are scored.",
        ONE,
    ),
    _t(
        "cycle",
        "numfeasiblenodestofind",
        "numFeasibleNodesToFind",
        "How many feasible nodes the scheduler looks for before it stops filtering: all of them "
        "below 100 nodes, otherwise a percentage of the cluster (at least 100 nodes). Filtering "
        "starts where the previous cycle stopped, so every node gets its turn.",
        ONE,
    ),
    _t(
        "cycle",
        "percentageofnodestoscore",
        "percentageOfNodesToScore",
        "The setting behind numFeasibleNodesToFind. Unset (the default), it adapts: 50% minus one "
        "point per 125 nodes, never below 5%.",
        ONE,
    ),
    # -- scores ------------------------------------------------------------------------
    _t(
        "score",
        "raw-score",
        "raw",
        "The number a Score plugin first gives a node, in its own units (a count of taints, a "
        "percentage of free CPU, …).",
        RUNTIME,
    ),
    _t(
        "score",
        "normalized-score",
        "normalized",
        "The raw score mapped onto 0–100 by the plugin's NormalizeScore, so plugins can be added up fairly.",
        RUNTIME,
    ),
    _t(
        "score",
        "weighted-score",
        "weighted",
        "The normalized score times the plugin's weight in the policy. A node's total is the sum of "
        "its weighted scores; the highest total wins.",
        RUNTIME,
    ),
    _t(
        "score",
        "selecthost",
        "selectHost",
        "kube-scheduler v1.31's last step: picks the node with the highest total, ties broken by "
        "reservoir sampling with a random number kubeviz draws from the run's seed; v1.36 has no "
        "selectHost (see heap-order tie-break). A policy may instead say tieBreak: shuffled-first-fit "
        "(the GPU presets do, as the FGD paper's simulator): the tied node first in a node order "
        "shuffled once per run wins.",
        ONE,
    ),
    _t(
        "score",
        "heap-order-tie-break",
        "heap-order tie-break",
        "v1.36's way to pick among nodes with the same best score: the node scores go into a heap "
        "and the node it brings to the root wins, usually the first top node in Filter order. "
        "v1.31's selectHost picks one of the tied nodes at random.",
        ONE,
    ),
    # -- assume and bind ---------------------------------------------------------------
    _t(
        "bind",
        "assume",
        "assume",
        "The scheduler's cache counts the pod on its chosen node at once, before the API server has "
        "bound it, so the next cycle does not hand out the same room.",
        CACHE,
    ),
    _t(
        "bind",
        "bind",
        "bind",
        "The API server records the pod's node (spec.nodeName); from then on the kubelet runs it. "
        "In kubeviz this happens after the policy's bind latency.",
        "pkg/scheduler/framework/plugins/defaultbinder/default_binder.go",
    ),
    _t(
        "bind",
        "forget",
        "forget",
        "When binding fails (the node or pod went away), the cache drops the assumed pod, the room "
        "is freed and the pod goes back to the queue.",
        CACHE,
    ),
    _t(
        "bind",
        "expected-placement",
        "expected placement",
        "v1.36 (NominatedNodeNameForExpectation): at the start of the binding cycle the scheduler "
        "writes the chosen node into the pod's nominatedNodeName, so others see where it is "
        "expected to land; it is cleared once the pod is bound.",
        ONE,
    ),
    # -- priority and preemption -------------------------------------------------------
    _t(
        "preemption",
        "nominated-pod",
        "nominated",
        "A pod whose preemption freed (or is freeing) room on a node gets that node as its "
        "status.nominatedNodeName. The scheduler tries that node first next time, and pods of "
        "equal or lower priority must fit beside it there.",
        Q,
    ),
    _t(
        "preemption",
        "nominatednodename",
        "nominatedNodeName",
        "The pod field that records a nomination. It is a hint, not a binding: the pod may still end up elsewhere.",
        ONE,
    ),
    _t(
        "preemption",
        "preemption",
        "preemption",
        "When no node fits a pod, DefaultPreemption looks for nodes where evicting lower-priority "
        "pods would make room, picks one by five criteria in order, deletes the victims and "
        "nominates the pod to that node.",
        PREEMPT,
    ),
    _t(
        "preemption",
        "victim",
        "victim",
        "A lower-priority pod that preemption deletes to make room. It gets its graceful "
        "termination period before its resources are free.",
        PREEMPT,
    ),
    _t(
        "preemption",
        "reprieve",
        "reprieve",
        "During preemption's dry run every lower-priority pod is removed from the node, then each "
        "is added back (most important first) if the preemptor still fits; the ones added back are "
        "spared.",
        "pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go",
    ),
    _t(
        "preemption",
        "pdb",
        "PodDisruptionBudget",
        "A limit on how many pods of a set may be down by choice at once. Preemption prefers victims "
        "that break no budget but may break one; an eviction (a drain) never does.",
        "pkg/controller/disruption/disruption.go",
    ),
    _t(
        "preemption",
        "priority",
        "priority",
        "A pod's importance, a number (spec.priority) copied from its PriorityClass. activeQ pops "
        "higher priority first, and only higher-priority pods can preempt.",
        "pkg/scheduler/framework/plugins/queuesort/priority_sort.go",
    ),
    _t(
        "preemption",
        "priorityclass",
        "PriorityClass",
        "A named priority value that pods refer to by priorityClassName; it may also set the pod's preemptionPolicy.",
        "pkg/apis/scheduling/types.go",
    ),
    _t(
        "preemption",
        "preemptionpolicy",
        "preemptionPolicy",
        "PreemptLowerPriority (the default) or Never. A pod with Never waits its turn by priority "
        "but never evicts anyone.",
        PREEMPT,
    ),
    _t(
        "preemption",
        "terminating",
        "terminating",
        "A pod that has been deleted and is within its grace period (30 s unless it says "
        "otherwise). Its resources still count on the node until it is gone.",
    ),
    _t(
        "preemption",
        "async-preemption",
        "async preemption",
        "v1.36 (SchedulerAsyncPreemption): the victims are deleted in the background while the "
        "scheduler goes on; the preemptor waits in the queue and is retried when the deletions "
        "arrive. In v1.31 the cycle deletes the victims itself before it moves on.",
        "pkg/scheduler/framework/preemption/executor.go",
    ),
    # -- where a pod may go ------------------------------------------------------------
    _t(
        "constraints",
        "taint-toleration",
        "taint / toleration",
        "A taint on a node keeps pods off unless they carry a matching toleration. NoSchedule and "
        "NoExecute taints filter; PreferNoSchedule taints only lower the score (TaintToleration normalizes "
        "the count reversed, so fewer bad taints = 100).",
        "pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go",
    ),
    _t(
        "constraints",
        "node-affinity",
        "node affinity",
        "Rules on node labels: required terms filter nodes, preferred terms add their weights to "
        "the score (normalized so the best node gets 100).",
        "pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go",
    ),
    _t(
        "constraints",
        "pod-affinity",
        "pod (anti-)affinity",
        "Rules about other pods: go (or do not go) to a topology domain, such as a zone or a node, "
        "where pods with certain labels already run.",
        "pkg/scheduler/framework/plugins/interpodaffinity/filtering.go",
    ),
    _t(
        "constraints",
        "topology-spread",
        "topology spread",
        "topologySpreadConstraints keep a set of pods evenly spread over zones or nodes: a domain "
        "may not have more than maxSkew pods above the emptiest one.",
        "pkg/scheduler/framework/plugins/podtopologyspread/filtering.go",
    ),
    _t(
        "constraints",
        "reservation",
        "reservation",
        "kubeviz's upgrade-aware policy: when a StatefulSet pod is deleted for a rollout, its node "
        "keeps the pod's room for the replacement, held like a nomination. Not part of "
        "kube-scheduler (docs/reservation.md).",
    ),
    # -- the run page ------------------------------------------------------------------
    _t(
        "page",
        "requested",
        "requested",
        "The solid part of a node's bar: what the pods placed (assumed, bound or terminating) on the "
        "node request, as a share of its allocatable resources.",
        "pkg/scheduler/framework/types.go",
    ),
    _t(
        "page",
        "held",
        "held",
        "The hatched part of a node's bar: room counted for pods nominated to the node or reserved "
        "on it, which pods of equal or lower priority must fit beside.",
        RUNTIME,
    ),
    _t(
        "page",
        "reserved",
        "reserved",
        "A node keeping room for a StatefulSet pod's replacement under the upgrade-aware "
        "reservation (a kubeviz policy; see reservation).",
    ),
    _t(
        "page",
        "chosen",
        "chosen",
        "The node the current cycle picked for its pod (★ in the tables, a green outline in the grid).",
        ONE,
    ),
    _t(
        "page",
        "rejected",
        "rejected",
        "A node a Filter plugin refused for the current pod; the reason is the plugin's own words.",
        RUNTIME,
    ),
    _t(
        "page",
        "kubernetes-version",
        "Kubernetes version",
        "Which kube-scheduler a policy runs (spec.kubernetesVersion): v1.36, the default, or v1.31. The version "
        "brings its default plugins and feature gates; the badge on a policy, a run and each "
        "column says which one ran.",
        "pkg/features/kube_features.go",
    ),
    # -- changing the cluster ----------------------------------------------------------
    _t(
        "cluster",
        "cordon",
        "cordon",
        "Mark a node unschedulable (spec.unschedulable): its pods keep running but no new pod is placed there.",
        "pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go",
    ),
    _t(
        "cluster",
        "drain",
        "drain",
        "Cordon a node, then evict its pods one by one; an eviction a PodDisruptionBudget refuses "
        "is retried every 5 s, as kubectl drain does.",
        "staging/src/k8s.io/kubectl/pkg/drain/drain.go",
    ),
    _t(
        "cluster",
        "eviction",
        "eviction",
        "A polite delete through the eviction API: it is refused when it would break a PodDisruptionBudget.",
        "pkg/registry/core/pod/storage/eviction.go",
    ),
    _t(
        "cluster",
        "fork",
        "fork (what if?)",
        "A new run that replays this one up to the playhead, then does one thing differently (cordon "
        "a node, delete a pod, switch policy, …) and goes on.",
    ),  # -- devices (DRA) -----------------------------------------------------------------
    _t(
        "dra",
        "dra",
        "Dynamic Resource Allocation (DRA)",
        "How Kubernetes gives pods devices such as GPUs one by one instead of as an anonymous count "
        "(resource.k8s.io/v1, GA since v1.34). Drivers publish devices in ResourceSlices, pods ask "
        "for them through ResourceClaims, and the scheduler picks concrete devices on a node.",
        DRA_PLUGIN,
    ),
    _t(
        "dra",
        "dynamicresources",
        "DynamicResources",
        "The scheduler plugin for DRA: PreFilter gathers the pod's claims, Filter runs the allocator "
        "on each node, Reserve keeps its choice, PreBind writes the allocation and reservedFor. A "
        "node where the claims cannot all be satisfied is rejected with “cannot allocate all claims”.",
        DRA_PLUGIN,
    ),
    _t(
        "dra",
        "resourceslice",
        "ResourceSlice",
        "A list of devices a driver publishes, with their attributes and capacities: for one node "
        "(spec.nodeName), for the nodes a selector picks, or for all nodes (network-attached "
        "devices). Slices of one driver with the same pool name form a pool.",
        DRA_TYPES,
    ),
    _t(
        "dra",
        "device",
        "device",
        "One thing a driver can hand to a pod (a GPU, a NIC, a part of an accelerator), named "
        "within its pool. Its attributes (model, driverVersion, …) are what selectors test, its "
        "capacities (memory, …) what a claim may consume.",
        DRA_TYPES,
    ),
    _t(
        "dra",
        "deviceclass",
        "DeviceClass",
        "A kind of device, defined by an admin: a name and CEL selectors a device must match. A "
        "claim's request names a class; a class may also name an extended resource (such as "
        "nvidia.com/gpu) its devices serve.",
        DRA_TYPES,
    ),
    _t(
        "dra",
        "cel-selector",
        "CEL selector",
        "An expression over device.driver, device.attributes and device.capacity that must be true "
        "for a device to be picked; a class's selectors and a request's all apply. Its cost is "
        "limited, so a selector cannot keep the scheduler busy.",
        "staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go",
    ),
    _t(
        "dra",
        "resourceclaim",
        "ResourceClaim",
        "A request for devices: each of its requests names a DeviceClass, maybe selectors and "
        "constraints, and how many devices (a count, or All). A pod names its claims in "
        "spec.resourceClaims; several pods may share one claim and so its devices.",
        DRA_TYPES,
    ),
    _t(
        "dra",
        "resourceclaimtemplate",
        "ResourceClaimTemplate",
        "A claim to stamp out per pod: for each pod that refers to it, the resource claim "
        "controller creates a ResourceClaim of its own (named after the pod) and deletes it when "
        "the pod is gone.",
        "pkg/controller/resourceclaim/controller.go",
    ),
    _t(
        "dra",
        "dra-allocation",
        "allocation",
        "The devices the allocator chose for a claim, written to its status.allocation at PreBind. "
        "A device in one claim's allocation goes to no other claim unless it allows several "
        "allocations; clearing the allocation (deallocation) frees it.",
        DRA_ALLOCATOR,
    ),
    _t(
        "dra",
        "reservedfor",
        "reservedFor",
        "A claim's status.reservedFor: the pods using it (at most 256). When no pod is left in it, "
        "the resource claim controller clears the claim's allocation and its devices are free.",
        DRA_TYPES,
    ),
    _t(
        "dra",
        "consumable-capacity",
        "consumable capacity (shared device)",
        "A device with allowMultipleAllocations may go to several claims at once, each taking part "
        "of its capacity (say 20 Gi of a GPU's 80 Gi of memory) within the driver's request policy. "
        "This is DRAConsumableCapacity, beta and on in v1.36.",
        DRA_ALLOCATOR,
    ),
    _t(
        "dra",
        "firstavailable",
        "firstAvailable",
        "A request that lists alternatives (sub-requests) in order of preference: the allocator "
        "takes the first it can satisfy, so a pod can ask for one big GPU or else two small ones.",
        DRA_TYPES,
    ),
    _t(
        "dra",
        "matchattribute",
        "matchAttribute",
        "A claim constraint: all devices picked for the requests it lists must have the same value "
        "of one attribute (the same PCIe root, say). When no combination agrees, the claim cannot "
        "be allocated on that node.",
        DRA_TYPES,
    ),
    _t(
        "dra",
        "dra-extended-resource",
        "extended resource backed by DRA",
        "A pod asking for an extended resource such as nvidia.com/gpu: 1 can be served by a device "
        "of the DeviceClass that names that resource, on a node whose devices come through DRA; the "
        "scheduler makes a claim for the pod. This is DRAExtendedResource, beta and on in v1.36.",
        DRA_PLUGIN,
    ),
    _t(
        "dra",
        "kep-5690",
        "KEP-5690 (preemption for devices)",
        "Upstream's proposal to let preemption free DRA devices: evicting lower-priority pods whose "
        "claims hold a node's own devices. No released kube-scheduler does it; in v1.36 a pod that "
        "needs a device waits until one is freed. kubeviz runs the proposal only as a what-if, the "
        "policy dra-device-preemption (spec.kep5690DRAPreemption).",
    ),
)

_BY_SLUG = {t.slug: t for t in TERMS}


def term(slug: str) -> Term:
    """The term with this slug; a KeyError names it (a page asking for a word the glossary lacks)."""
    try:
        return _BY_SLUG[slug]
    except KeyError:
        raise KeyError(f"glossary has no term {slug!r}") from None


def markdown() -> str:
    """docs/glossary.md, generated from ``TERMS`` so the docs and the pages say the same."""
    lines = [
        "# Glossary",
        "",
        "<!-- Generated by `python -m kubeviz.web.services.glossary > docs/glossary.md`; edit",
        "     kubeviz/web/services/glossary.py instead (a test keeps the two equal). -->",
        "",
        "The words the run page uses, as the web app's glossary page (`/glossary/`) and its",
        "definitions explain them (a term on any page opens its definition on a tap, a click,",
        "keyboard focus or hover). Upstream paths are inside kubernetes/kubernetes.",
        "",
    ]
    for section in SECTIONS:
        lines += [f"## {section.title}", ""]
        for t in TERMS:
            if t.section != section.key:
                continue
            source = f" Upstream: `{t.upstream}`." if t.upstream else ""
            lines.append(f'- **{t.name}** <a id="{t.slug}"></a> — {t.text}{source}')
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
