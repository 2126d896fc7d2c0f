"""Scenario library, detail tables, uploads and policy notes — plain functions the views call.

Nothing here renders HTML: the functions return model querysets, dataclasses and dicts of
plain strings, and the templates escape every one of them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet

import scheduler_core.api
from scheduler_core.api import (
    CPU,
    MEMORY,
    PODS,
    Deployment,
    Job,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    ReplicaSet,
    Service,
    StatefulSet,
    TimelineAction,
    Workload,
    format_amount,
)
from scheduler_core.documents import CpuBudgetExceeded, LoadError, Problem, describe_start, format_duration

from ..access import is_owner, listed_runs, scenario_cluster, visible_scenarios
from ..models import Cluster, Policy, Run, Scenario, Visibility
from ..request_types import Viewer
from . import slugs
from .engine import parse_scenario, scenario_preview
from .names import check_document_name

__all__ = [
    "FLAGSHIP_SLUG",
    "PAGE_SIZE",
    "TABLES",
    "BadPage",
    "Card",
    "Created",
    "DocumentLine",
    "PageLink",
    "ScenarioDetail",
    "ScenarioTables",
    "TablePage",
    "Upload",
    "create_scenario",
    "detail_tables",
    "first_sentence",
    "format_ms",
    "library_cards",
    "library_scenarios",
    "numbered_lines",
    "page_url",
    "parse_stored",
    "policy_suggestions",
    "recent_runs",
    "requested_pages",
    "scenario_detail",
    "shown_preview",
    "table_for_element",
    "unique_slug",
]

# The scenario the library points newcomers at first.
FLAGSHIP_SLUG = "sts-upgrade-under-pressure"
# Slugs the URL map already uses under /scenarios/.

# Library


def library_scenarios(user: Viewer, query: str = "") -> QuerySet[Scenario]:
    """Built-in and public scenarios plus the user's private ones, filtered by name."""
    scenarios = visible_scenarios(user).select_related("owner")
    query = query.strip()
    if query:
        scenarios = scenarios.filter(Q(name__icontains=query) | Q(slug__icontains=query))
    return scenarios


@dataclass
class Card:
    """One library card."""

    scenario: Scenario
    summary: str
    mine: bool
    flagship: bool
    preview: dict[str, Any]  # what the card counts, as this viewer may see it (shown_preview)


def library_cards(user: Viewer, query: str = "") -> list[Card]:
    return [
        Card(
            scenario=s,
            summary=first_sentence(s.description),
            mine=is_owner(s, user),
            flagship=s.builtin and s.slug == FLAGSHIP_SLUG,
            preview=shown_preview(s, user),
        )
        for s in library_scenarios(user, query).select_related("cluster")
    ]


def shown_preview(scenario: Scenario, user: Viewer | None) -> dict[str, Any]:
    """The scenario's counts for ``user``: a scenario stored with a cluster counted that cluster's
    nodes, which someone who may not see the cluster is not told (they see no nodes, as on the
    scenario's page)."""
    preview = dict(scenario.preview)
    if scenario.cluster_id is not None and scenario_cluster(scenario, user) is None:
        preview["nodes"] = 0
    return preview


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def first_sentence(text: str, limit: int = 220) -> str:
    """The description's first sentence (cut at ``limit`` characters with an ellipsis)."""
    text = " ".join(text.split())
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0]
    if len(sentence) > limit:
        sentence = sentence[: limit - 1].rsplit(" ", 1)[0] + "…"
    return sentence


# Detail

# Rows per page in each of the detail page's tables (an uploaded cluster may have thousands of nodes).
PAGE_SIZE = 50
# The detail page's tables by the query parameter that pages through each (``?nodes=2&objects=3``),
# with the word for their rows in "nodes 1–50 of 501". ``objects`` are the pods of ``spec.objects``.
TABLES: dict[str, str] = {"nodes": "nodes", "workloads": "workloads", "objects": "pods", "timeline": "actions"}
# A timeline action creating many objects names this many of them and counts the rest.
WHAT_LIMIT = 10
# Parsing is most of a big scenario's page (pure-Python YAML), so its rows are cached by content:
# a new document, source name or cluster is a new key. Bump the version when a row's keys change.
DETAIL_CACHE_VERSION = 5  # 5: a cluster's running pods among the objects; 4: quantities in units people read
DETAIL_CACHE_SECONDS = 60 * 60


def format_ms(ms: int | None) -> str:
    """A virtual time the way the documents write it: ``0s``, ``40s``, ``1m30s``, ``250ms``."""
    return "" if ms is None else format_duration(ms)


def _resources(resources: dict[str, int] | Any, names: Sequence[str] = (CPU, MEMORY)) -> dict[str, str]:
    return {name: format_amount(name, resources[name]) if resources.get(name) else "" for name in names}


def _pod_name(pod: Pod) -> str:
    return pod.name if pod.namespace == "default" else f"{pod.namespace}/{pod.name}"


def _node_row(node: Node) -> dict[str, Any]:
    amounts = _resources(node.allocatable, (CPU, MEMORY, PODS))
    extended = [
        f"{name}: {format_amount(name, amount)}"
        for name, amount in sorted(node.allocatable.items())
        if name not in (CPU, MEMORY, PODS, "ephemeral-storage") and amount
    ]
    # Every label as it is, kubernetes.io/hostname included: a shortened key looks like a real one.
    labels = [f"{k}={v}" for k, v in sorted(node.labels.items())]
    taints = [f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}" for t in node.taints]
    return {
        "name": node.name,
        "cpu": amounts[CPU],
        "memory": amounts[MEMORY],
        "pods": amounts[PODS],
        "extended": extended,
        "labels": labels,
        "taints": taints,
        "unschedulable": node.unschedulable,
    }


def _pod_notes(pod: Pod) -> list[str]:
    notes: list[str] = []
    if pod.node_selector:
        notes.append("nodeSelector " + ", ".join(f"{k}={v}" for k, v in pod.node_selector.items()))
    affinity = pod.affinity
    if affinity is not None:
        if affinity.node_affinity is not None:
            notes.append("node affinity")
        if affinity.pod_affinity is not None:
            notes.append("pod affinity")
        if affinity.pod_anti_affinity is not None:
            notes.append("pod anti-affinity")
    if pod.tolerations:
        notes.append(f"tolerates {len(pod.tolerations)}")
    if pod.topology_spread_constraints:
        notes.append(_plural(len(pod.topology_spread_constraints), "spread constraint"))
    if pod.host_ports:
        notes.append("hostPort " + ", ".join(str(p.host_port) for p in pod.host_ports))
    if pod.run_duration_ms is not None:
        notes.append(f"runs {format_ms(pod.run_duration_ms)}")
    if pod.preemption_policy == "Never":
        notes.append("never preempts")
    return notes


def _pod_row(pod: Pod) -> dict[str, Any]:
    priority = str(pod.priority)
    if pod.priority_class_name:
        priority = f"{pod.priority} ({pod.priority_class_name})"
    return {
        "name": _pod_name(pod),
        **_resources(pod.requests),
        "priority": priority,
        "node": pod.node_name,
        # status.startTime of a pod the document gives as already running (snapshot_time.py)
        "started": describe_start(pod.start_time_ms) if pod.start_time_ms is not None else "",
        "notes": _pod_notes(pod),
    }


def _workload_row(workload: Workload) -> dict[str, Any]:
    prototype = workload.template.prototype
    notes: list[str] = []
    if isinstance(workload, Job):
        size = f"{workload.completions} completions, {workload.parallelism} at a time"
        if prototype.run_duration_ms is not None:
            notes.append(f"each runs {format_ms(prototype.run_duration_ms)}")
    else:
        size = f"{workload.replicas} replicas"
    if isinstance(workload, Deployment):
        notes.append(
            workload.strategy
            if workload.strategy != "RollingUpdate"
            else f"maxSurge {workload.max_surge}, maxUnavailable {workload.max_unavailable}"
        )
    elif isinstance(workload, StatefulSet):
        notes.append(workload.pod_management_policy)
        if workload.update_strategy != "RollingUpdate":
            notes.append(workload.update_strategy)
    notes.extend(_pod_notes(prototype))
    name = workload.name if workload.namespace == "default" else f"{workload.namespace}/{workload.name}"
    return {
        "kind": workload.kind,
        "name": name,
        "size": size,
        "image": workload.template.image,
        **_resources(prototype.requests),
        "notes": notes,
    }


def _describe_object(obj: object) -> str:
    if isinstance(obj, Pod):
        requests = _resources(obj.requests)
        amounts = ", ".join(f"{v} {k}" for k, v in requests.items() if v)
        return f"Pod {_pod_name(obj)}" + (f" ({amounts})" if amounts else "")
    if isinstance(obj, Node):
        capacity = _resources(obj.allocatable)
        return f"Node {obj.name} ({capacity[CPU] or '0'} cpu, {capacity[MEMORY] or '0'} memory)"
    if isinstance(obj, Job):
        return f"Job {obj.name} ({obj.completions} completions)"
    if isinstance(obj, Deployment | ReplicaSet | StatefulSet):
        return f"{obj.kind} {obj.name} ({obj.replicas} replicas)"
    if isinstance(obj, Service | PodDisruptionBudget | PriorityClass):
        return f"{type(obj).__name__} {obj.name}"
    return type(obj).__name__


def _timeline_row(action: TimelineAction) -> dict[str, Any]:
    what = [_describe_object(obj) for obj in action.objects[:WHAT_LIMIT]]
    if len(action.objects) > WHAT_LIMIT:
        what.append(f"… and {len(action.objects) - WHAT_LIMIT} more")
    detail = ""
    if action.action == "scale":
        detail = f"replicas → {action.params.get('replicas')}"
    elif action.action == "setImage":
        detail = f"image → {action.params.get('image')}"
        if action.params.get("container"):
            detail += f" (container {action.params['container']})"
    return {
        "at": format_ms(action.at_ms),
        "action": action.action,
        "target": action.target,
        "what": what,
        "detail": detail,
    }


def _plural(count: int, word: str) -> str:
    if count == 1:
        return f"1 {word}"
    return f"{count} {word[:-1] + 'ies' if word.endswith('y') and not word.endswith('ey') else word + 's'}"


@dataclass
class ScenarioDetail:
    """Every row of every table of a stored scenario, as display strings; what the cache keeps.

    ``problems`` is set (and ``rows`` empty) when the document no longer loads.
    """

    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by TABLES key
    extras: list[str] = field(default_factory=list)  # "1 Service", "2 PriorityClasses"
    seed: int = 0
    pod_startup: str = ""
    end_at: str = ""
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # the loader's (Scenario.warnings)


def _detail_of(parsed: scheduler_core.api.Scenario) -> ScenarioDetail:
    extras = [
        _plural(len(items), word)
        for items, word in (
            (parsed.services, "Service"),
            (parsed.pdbs, "PodDisruptionBudget"),
            (parsed.priority_classes, "PriorityClass"),
        )
        if items
    ]
    return ScenarioDetail(
        rows={
            "nodes": [_node_row(n) for n in parsed.nodes],
            "workloads": [_workload_row(w) for w in parsed.workloads],
            "objects": [_pod_row(p) for p in parsed.pods],
            "timeline": [_timeline_row(a) for a in parsed.timeline],
        },
        extras=extras,
        seed=parsed.seed,
        pod_startup=format_ms(parsed.pod_startup_ms) if parsed.pod_startup_ms else "",
        end_at=format_ms(parsed.end_ms),
        warnings=list(parsed.warnings),
    )


def _detail_cache_key(scenario: Scenario, cluster: Cluster | None) -> str:
    digest = hashlib.sha256()
    cluster_document = cluster.document if cluster is not None else ""
    for part in (scenario.source_name, scenario.document, cluster_document):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(b"%d:" % len(data) + data)
    return f"kubeviz:scenario-detail:{DETAIL_CACHE_VERSION}:{digest.hexdigest()}"


def scenario_detail(scenario: Scenario, cluster: Cluster | None) -> ScenarioDetail:
    """The stored document's rows (or its problems), on ``cluster``'s nodes when it has none,
    parsed once and then read from the cache.

    ``cluster`` is the scenario's own cluster as the viewer may see it (access.scenario_cluster):
    a stranger to a private cluster sees the scenario without it, never that cluster's nodes.
    """
    key = _detail_cache_key(scenario, cluster)
    detail = cache.get(key)
    if not isinstance(detail, ScenarioDetail):
        try:
            detail = _detail_of(parse_stored(scenario, cluster))
        except CpuBudgetExceeded as exc:  # not the document's fault alone: try again next time
            return ScenarioDetail(problems=exc.problems)
        except LoadError as exc:  # stored before the engine learned to refuse it
            detail = ScenarioDetail(problems=exc.problems)
        cache.set(key, detail, DETAIL_CACHE_SECONDS)
    return detail


class BadPage(ValueError):
    """A table's page parameter that is not a whole number."""

    def __init__(self, parameter: str, value: str) -> None:
        self.parameter = parameter
        shown = value if len(value) <= 20 else value[:19] + "…"
        super().__init__(f"?{parameter}= takes a page number (1, 2, 3, …), not {shown!r}")


def requested_pages(query: Mapping[str, str], *, strict: bool = True) -> dict[str, int]:
    """The page each table's parameter asks for; tables not named are left out (page 1).

    Any whole number is taken (``detail_tables`` clamps it to the pages there are); anything else
    raises :class:`BadPage`, or is left out when ``strict`` is false.
    """
    pages: dict[str, int] = {}
    for name in TABLES:
        value = (query.get(name) or "").strip()
        if not value:
            continue
        try:
            pages[name] = int(value)
        except ValueError:
            if strict:
                raise BadPage(name, value) from None
    return pages


def page_url(path: str, pages: Mapping[str, int]) -> str:
    """``path`` with every table's page in its query string, first pages left out."""
    query = urlencode([(name, pages[name]) for name in TABLES if pages.get(name, 1) != 1])
    return f"{path}?{query}" if query else path


def _element_id(table: str) -> str:
    return f"scenario-{table}"


def table_for_element(element_id: str | None) -> str | None:
    """The table whose section has this HTML id (``scenario-nodes`` → ``nodes``), if any."""
    return next((name for name in TABLES if _element_id(name) == element_id), None)


@dataclass(frozen=True)
class PageLink:
    """A link to one page of a table: ``href`` keeps every table's page (the address without
    JavaScript), ``hx_get`` names only this table's (the view merges the address bar's)."""

    number: int
    href: str
    hx_get: str
    current: bool = False


@dataclass
class TablePage:
    """One page of one table: its rows, where they sit among all of them, and the page links."""

    name: str  # the TABLES key and query parameter
    noun: str  # "nodes", "pods"
    rows: list[dict[str, Any]]
    number: int
    num_pages: int
    total: int
    links: list[PageLink | None]  # None: pages left out ("…")
    previous: PageLink | None
    next: PageLink | None

    @property
    def element_id(self) -> str:
        """The id of the table's section, which an htmx page link swaps."""
        return _element_id(self.name)

    @property
    def first(self) -> int:
        """The 1-based position of the first row shown (0 when there are none)."""
        return (self.number - 1) * PAGE_SIZE + 1 if self.rows else 0

    @property
    def last(self) -> int:
        return (self.number - 1) * PAGE_SIZE + len(self.rows)


@dataclass
class ScenarioTables:
    """What the detail page shows: one page of each table and the scenario's summary."""

    nodes: TablePage
    workloads: TablePage
    objects: TablePage
    timeline: TablePage
    url: str  # the page's address with these pages (what an htmx page link pushes)
    extras: list[str]
    seed: int
    pod_startup: str
    end_at: str

    def table(self, name: str) -> TablePage:
        page: TablePage = getattr(self, name)
        return page


def _page_numbers(number: int, num_pages: int, around: int = 2) -> list[int | None]:
    """First, last and the pages around ``number``; None where pages are left out."""
    wanted = sorted({1, num_pages, *range(max(1, number - around), min(num_pages, number + around) + 1)})
    out: list[int | None] = []
    previous = 0
    for n in wanted:
        if n - previous == 2:  # a gap of one page: the page itself is no wider than "…"
            out.append(previous + 1)
        elif n - previous > 2:
            out.append(None)
        out.append(n)
        previous = n
    return out


def _num_pages(rows: Sequence[object]) -> int:
    return max(1, -(-len(rows) // PAGE_SIZE))


def _table_page(name: str, rows: list[dict[str, Any]], pages: dict[str, int], path: str) -> TablePage:
    """Page ``pages[name]`` (a valid one) of a table, its links keeping the other tables' ``pages``."""
    number, num_pages = pages[name], _num_pages(rows)

    def link(n: int) -> PageLink:
        return PageLink(n, page_url(path, {**pages, name: n}), f"{path}?{urlencode({name: n})}", n == number)

    start = (number - 1) * PAGE_SIZE
    return TablePage(
        name=name,
        noun=TABLES[name],
        rows=rows[start : start + PAGE_SIZE],
        number=number,
        num_pages=num_pages,
        total=len(rows),
        links=[None if n is None else link(n) for n in _page_numbers(number, num_pages)],
        previous=link(number - 1) if number > 1 else None,
        next=link(number + 1) if number < num_pages else None,
    )


def detail_tables(detail: ScenarioDetail, pages: Mapping[str, int], path: str) -> ScenarioTables:
    """The asked-for page of each table, linked from ``path``.

    A page before the first is the first, one past the last is the last.
    """
    rows = {name: detail.rows.get(name, []) for name in TABLES}
    clamped = {name: min(max(pages.get(name, 1), 1), _num_pages(rows[name])) for name in TABLES}
    return ScenarioTables(
        nodes=_table_page("nodes", rows["nodes"], clamped, path),
        workloads=_table_page("workloads", rows["workloads"], clamped, path),
        objects=_table_page("objects", rows["objects"], clamped, path),
        timeline=_table_page("timeline", rows["timeline"], clamped, path),
        url=page_url(path, clamped),
        extras=detail.extras,
        seed=detail.seed,
        pod_startup=detail.pod_startup,
        end_at=detail.end_at,
    )


def parse_stored(scenario: Scenario, cluster: Cluster | None = None) -> scheduler_core.api.Scenario:
    """Parse a stored scenario on ``cluster`` when it has no nodes of its own: what a run of it
    starts with (engine.parse_scenario), the cluster's running pods included; raises LoadError."""
    return parse_scenario(scenario.document, scenario.source_name, None if cluster is None else cluster.document)


def recent_runs(scenario: Scenario, user: Viewer, limit: int = 5) -> list[Run]:
    """The scenario's latest runs listed for this user (the run list's rule, access.listed_runs), newest first."""
    runs = listed_runs(user).filter(scenario=scenario).select_related("policy", "scenario").order_by("-created")
    return list(runs[:limit])


# Upload


# Characters of one line the upload page shows back next to its problems.
SHOWN_LINE_CHARS = 240


@dataclass
class DocumentLine:
    """One line of a submitted document, with the problems that point at it."""

    number: int
    text: str
    problems: list[Problem] = field(default_factory=list)
    gap_before: bool = False  # lines were left out above this one


def numbered_lines(text: str, problems: Sequence[Problem], source: str, context: int = 4) -> list[DocumentLine]:
    """The document as numbered lines, problems attached to their line.

    Short documents are shown whole; long ones only around the problem lines. A line longer
    than SHOWN_LINE_CHARS is cut (a hostile document can hold megabyte lines).
    """
    lines = [
        DocumentLine(i, line if len(line) <= SHOWN_LINE_CHARS else line[: SHOWN_LINE_CHARS - 1] + "…")
        for i, line in enumerate(text.splitlines(), start=1)
    ]
    for problem in problems:
        if problem.source == source and problem.line is not None and 1 <= problem.line <= len(lines):
            lines[problem.line - 1].problems.append(problem)
    if len(lines) <= 300:
        return lines
    wanted = {
        n for line in lines if line.problems for n in range(line.number - context, line.number + context + 1)
    } or set(range(1, 2 * context + 2))
    shown: list[DocumentLine] = []
    previous = 0
    for line in lines:
        if line.number in wanted:
            line.gap_before = line.number != previous + 1
            shown.append(line)
            previous = line.number
    return shown


def unique_slug(name: str) -> str:
    """A free slug for a new scenario."""
    return slugs.unique_slug(name, Scenario, "scenario")


@dataclass
class Upload:
    """A validated upload, ready to store."""

    text: str
    source_name: str
    name: str = ""
    visibility: str = Visibility.PUBLIC
    cluster: Cluster | None = None


@dataclass
class Created:
    scenario: Scenario
    cluster_ignored: bool  # a cluster was chosen but the document has nodes of its own
    warnings: list[str] = field(default_factory=list)  # the loader's (Scenario.warnings)


def create_scenario(upload: Upload, owner: User | None) -> Created:
    """Validate the document with the engine and store it; raises LoadError, storing nothing.

    Everything that can refuse the upload (reading, the caps, validation) runs before the one
    INSERT, which is a transaction of its own: a refused upload leaves no row behind.
    """
    # What a run of it will load (engine.parse_scenario): what uploads, runs.
    cluster_document = None if upload.cluster is None else upload.cluster.document
    parsed = parse_scenario(upload.text, upload.source_name, cluster_document)
    cluster_ignored = upload.cluster is not None and bool(parsed.nodes) and not parsed.nodes_from_cluster
    name = (upload.name.strip() or parsed.name or "scenario")[:120]
    if not upload.name.strip():  # the form checked its own name field (names.VisibleName)
        check_document_name(name, upload.text, upload.source_name)
    fields = {
        "name": name,
        "description": parsed.description,
        "watch_for": parsed.watch_for,
        "document": upload.text,
        "source_name": upload.source_name[:200],
        "cluster": None if cluster_ignored else upload.cluster,
        "owner": owner,
        "visibility": upload.visibility,
        "builtin": False,
        "preview": scenario_preview(parsed),
    }
    for _ in range(20):  # another upload may take the same slug between the check and the insert
        try:
            with transaction.atomic():
                scenario = Scenario.objects.create(slug=unique_slug(name), **fields)
            return Created(scenario, cluster_ignored, list(parsed.warnings))
        except IntegrityError:
            continue
    raise LoadError.single(upload.source_name, None, "", "could not choose a unique name; try another one")


# Policies

# Built-in policies and the built-in scenarios that show what they change.
POLICY_SUGGESTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "default": (
        ("mixed-small", "sts-upgrade-under-pressure", "preemption-basics"),
        "The baseline: run a scenario with it first, then with another policy to compare.",
    ),
    "upgrade-aware": (
        ("sts-upgrade-under-pressure",),
        "Run the StatefulSet upgrade with default and then with this: the rollout that stalls completes.",
    ),
    "dra-device-preemption": (
        ("dra-preemption",),
        "KEP-5690's proposal, not in any released kube-scheduler: compare with kubernetes-v1-36, which never "
        "preempts for a DRA device.",
    ),
    "bin-packing": (
        ("bin-packing-vs-spread",),
        "Compare with spread: pods pile onto few nodes, whole nodes stay empty.",
    ),
    "spread": (("bin-packing-vs-spread",), "Compare with bin-packing: every node ends up equally full."),
    "rtcr-binpack": (
        ("bin-packing-vs-spread",),
        "Bin packing through a custom scoring shape; compare with bin-packing.",
    ),
    "no-preemption": (
        ("preemption-basics", "preemption-cascade", "priority-inversion"),
        "Without DefaultPreemption a high-priority pod that fits nowhere just waits.",
    ),
    "legacy-v1.5": (
        ("mixed-small", "preemption-basics"),
        "The same scenario under the v1.5 algorithm: FIFO queue, 0–10 priorities, no preemption.",
    ),
    "score-all-nodes": (
        ("mixed-small",),
        "Only differs from default on clusters of more than 100 nodes; upload a big one to see it.",
    ),
    # default runs v1.36, whose QueueingHints are locked on: the gate's contrast is under v1.31.
    "queueing-hints": (
        ("queueing-hints",),
        "v1.31 with the QueueingHints gate on: compare with kubernetes-v1-31 (the gate off), not with "
        "default, which runs v1.36 with hints locked on.",
    ),
    "kubernetes-v1-31": (
        ("versions-retry-when-idle", "versions-preemption", "queueing-hints"),
        "kube-scheduler v1.31: compare with kubernetes-v1-36 (or default, which runs v1.36).",
    ),
    "kubernetes-v1-36": (
        ("versions-retry-when-idle", "versions-preemption"),
        "kube-scheduler v1.36, what default runs: compare with kubernetes-v1-31.",
    ),
}
GENERIC_SUGGESTION = "Then run the same scenario under the default policy and compare."


def policy_suggestions(policy: Policy, user: Viewer) -> tuple[list[Scenario], str]:
    """Scenarios to try a policy on, and a one-line note."""
    slugs: tuple[str, ...] = ()
    note = GENERIC_SUGGESTION
    if policy.builtin:
        slugs, note = POLICY_SUGGESTIONS.get(policy.slug, (slugs, note))
    found = {s.slug: s for s in visible_scenarios(user).filter(slug__in=slugs)}
    return [found[slug] for slug in slugs if slug in found], note
