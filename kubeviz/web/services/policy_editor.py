"""The policy editor's two views of one policy: a flat dict of form knobs, and the YAML document.

``knobs_from_document`` reads the knobs off the *loaded* policy (what the scheduler will
really run, after upstream's plugin-set merging), and ``document_from_knobs`` writes the
smallest kubeviz ``Policy`` wrapper that loads back to those knobs: only what differs from
upstream's defaults, in the order docs/policy.md shows. When given the document being edited
(``base_text``) it keeps what the form has no knob for: metadata, ``nodeUsageEvery``, other
feature gates, the configuration's other top-level fields, the first profile's name and
percentage override, other plugins' ``pluginConfig`` and any further profiles.

``unexpressed`` says what the form would lose (plugin order, a per-point override, …), so
the page can warn before a knob edit rewrites such a document.

Nothing here renders HTML or touches the database, apart from :func:`unique_policy_slug`.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml
from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

import scheduler_core.scheduler
from scheduler_core.api import CPU, MEMORY
from scheduler_core.documents import LoadError, Problem, load_documents
from scheduler_core.scheduler import (
    BUILTIN_POLICIES_DIR,
    CONFIG_API_VERSION,
    DEFAULT_KUBERNETES_VERSION,
    GATE_DEFAULTS,
    POLICY_API_VERSION,
    QUEUEING_HINTS,
    REQUESTED_TO_CAPACITY_RATIO,
    TIE_BREAK_RANDOM,
    TIE_BREAK_SHUFFLED_FIRST_FIT,
    TIE_BREAKS,
    builtin_policy_names,
    load_policy,
    parse_resource_specs,
)

from ..models import Policy
from .names import check_document_name
from .policy_catalog import (
    DEFAULT_CPU_WEIGHT,
    DEFAULT_MEMORY_WEIGHT,
    DEFAULT_MIN_CANDIDATE_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_PERCENTAGE,
    DEFAULT_RESOURCE_WEIGHTS,
    DEFAULT_SHAPE,
    DEFAULT_STRATEGY,
    FIT,
    GPU_POLICIES,
    GPU_PRESCORE_POLICIES,
    GPU_SHARE,
    PREEMPTION,
    filter_plugins,
    score_plugins,
)
from .read_limits import size_error
from .scenarios import format_ms
from .slugs import unique_slug

__all__ = [
    "TIE_BREAKS",
    "TIE_BREAK_LABELS",
    "SOURCE_NAME",
    "default_knobs",
    "document_from_knobs",
    "knobs_from_document",
    "preset_document",
    "preset_names",
    "too_big",
    "unexpressed",
    "save_policy",
    "unique_policy_slug",
    "validate",
]

# What the editor calls the document in its error messages.
SOURCE_NAME = "policy.yaml"

# Which plugins the knobs cover, and their arguments' defaults, are policy_catalog's: read from
# the engine's registry and the plugins' argument parsers.

# What a document leaves unsaid: the engine's Policy field defaults (config.Policy) and its
# default profile. The knobs start from it and document_from_knobs writes only what differs.
_DEFAULT_POLICY = scheduler_core.scheduler.default_policy()

# Configuration fields the knobs own; the others (parallelism, leaderElection, …) are kept.
_KNOB_CONFIG_FIELDS = frozenset(
    {"apiVersion", "kind", "percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles"}
)
# pluginConfig args the knobs own, by plugin; other args of these plugins are kept.
_KNOB_ARGS = {FIT: ("scoringStrategy",), PREEMPTION: ("minCandidateNodesPercentage", "minCandidateNodesAbsolute")}

# Presets


# The tie-break rules as the editor names them (scheduler_core/scheduler/tie_break.py).
TIE_BREAK_LABELS = {
    TIE_BREAK_RANDOM: "random (kube-scheduler)",
    TIE_BREAK_SHUFFLED_FIRST_FIT: "shuffled-first-fit (FGD paper's simulator)",
}


def preset_names() -> list[str]:
    """The built-in policies a new policy can start from, default first."""
    names = builtin_policy_names()
    return sorted(names, key=lambda name: (name != "default", name))


def preset_document(name: str) -> str:
    """A built-in preset's document as shipped (comments and all); KeyError for unknown names."""
    if name not in builtin_policy_names():
        raise KeyError(name)
    return (BUILTIN_POLICIES_DIR / f"{name}.yaml").read_text(encoding="utf-8")


# Validation


def too_big(text: str) -> str | None:
    """``"is 2.3 MiB; the limit is 256.0 KiB."`` for a document over KUBEVIZ_MAX_POLICY_BYTES, else None."""
    return size_error(len(text.encode("utf-8", "surrogatepass")), settings.KUBEVIZ_MAX_POLICY_BYTES)


def validate(text: str) -> list[Problem]:
    """What the engine's loader says about the document; empty when it loads.

    A document over KUBEVIZ_MAX_POLICY_BYTES is not read at all (real policies are a few KiB).
    """
    over = too_big(text)
    if over:
        return [Problem(SOURCE_NAME, None, "", f"the document {over}")]
    try:
        load_policy(text, SOURCE_NAME)
    except LoadError as exc:
        return sorted(exc.problems, key=lambda p: (p.line is None, p.line or 0))
    return []


# Document → knobs


def default_knobs(version: str | None = None) -> dict[str, Any]:
    """The knobs of upstream's default configuration of ``version`` (the default version's when
    None): its default profile's plugins, and its feature gates (QueueingHints off in v1.31)."""
    knobs: dict[str, Any] = {f"filter_{name}": True for name in filter_plugins(version)}
    for name, weight in score_plugins(version):
        knobs[f"score_{name}_on"] = True
        knobs[f"score_{name}_weight"] = weight
    knobs.update(
        preemption=True,
        min_candidate_nodes_percentage=DEFAULT_MIN_CANDIDATE_PERCENTAGE,
        min_candidate_nodes_absolute=DEFAULT_MIN_CANDIDATE_ABSOLUTE,
        scoring_strategy=DEFAULT_STRATEGY,
        write_scoring_strategy=False,
        cpu_weight=DEFAULT_CPU_WEIGHT,
        memory_weight=DEFAULT_MEMORY_WEIGHT,
        extra_resource="",
        extra_weight=0,
        shape=[list(point) for point in DEFAULT_SHAPE],
        gpu_sharing=False,
        gpu_policy="",
    )
    # What a Policy wrapper leaves unsaid takes the engine's Policy defaults (config.Policy).
    knobs.update(_policy_settings(_DEFAULT_POLICY))
    if version and version != _DEFAULT_POLICY.kubernetes_version:
        knobs["kubernetes_version"] = version
        knobs["queueing_hints"] = bool(GATE_DEFAULTS.get(version, {}).get(QUEUEING_HINTS))
    return knobs


def knobs_from_document(text: str) -> dict[str, Any]:
    """The form's knobs for a document; raises LoadError when it does not load."""
    return knobs_from_policy(load_policy(text, SOURCE_NAME))


def knobs_from_policy(policy: scheduler_core.scheduler.Policy) -> dict[str, Any]:
    """The knobs of a loaded policy (its first profile; the form edits that one)."""
    version = policy.kubernetes_version
    knobs = default_knobs(version)
    profile = policy.profiles[0]
    for name in filter_plugins(version):
        knobs[f"filter_{name}"] = name in profile.plugins.get("filter", ())
    for name, weight in score_plugins(version):
        on = name in profile.plugins.get("score", ())
        knobs[f"score_{name}_on"] = on
        knobs[f"score_{name}_weight"] = profile.weights.get(name, weight) if on else weight
    knobs["gpu_sharing"] = GPU_SHARE in profile.plugins.get("filter", ())
    knobs["gpu_policy"] = next((name for name in profile.plugins.get("score", ()) if name in GPU_POLICIES), "")
    knobs["preemption"] = PREEMPTION in profile.plugins.get("postFilter", ())
    preemption_args = profile.plugin_args.get(PREEMPTION, {})
    knobs["min_candidate_nodes_percentage"] = preemption_args.get(
        "minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_PERCENTAGE
    )
    knobs["min_candidate_nodes_absolute"] = preemption_args.get(
        "minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_ABSOLUTE
    )
    strategy = profile.plugin_args.get(FIT, {}).get("scoringStrategy")
    if strategy is not None:
        knobs["scoring_strategy"] = strategy.get("type", DEFAULT_STRATEGY)
        knobs["write_scoring_strategy"] = True
        # The loaded document passed the parser; it defaults a weight of 0 to 1.
        resources = [(r.name, r.weight) for r in parse_resource_specs(strategy.get("resources") or [], "resources")]
        if resources:
            weights = dict(resources)
            knobs["cpu_weight"] = weights.pop(CPU, 0)
            knobs["memory_weight"] = weights.pop(MEMORY, 0)
            if weights:
                knobs["extra_resource"], knobs["extra_weight"] = next(iter(weights.items()))
        shape = (strategy.get("requestedToCapacityRatio") or {}).get("shape") or []
        if shape:
            knobs["shape"] = [[int(p.get("utilization", 0)), int(p.get("score", 0))] for p in shape]
    knobs.update(_policy_settings(policy))
    return knobs


# The knobs the Policy wrapper sets, by their field name in config.Policy.
_POLICY_SETTINGS = (
    "percentage_of_nodes_to_score",
    "pod_initial_backoff_seconds",
    "pod_max_backoff_seconds",
    "queue_mode",
    "scheduler_mode",
    "upgrade_aware_reservation",
    "kep5690_dra_preemption",
    "queueing_hints",
    "tie_break",
    "bind_latency_ms",
    "kubernetes_version",
)


def _policy_settings(policy: scheduler_core.scheduler.Policy) -> dict[str, Any]:
    """The knobs the Policy wrapper sets, as the loaded policy has them."""
    return {name: getattr(policy, name) for name in _POLICY_SETTINGS}


# Knobs → document


def _plugins(knobs: Mapping[str, Any]) -> dict[str, Any]:
    """The first profile's ``plugins``: weights in place through multiPoint, offs per point.

    Only the knobs of the version's default profile count: v1.31 has no DynamicResources.
    """
    version = _version(knobs)
    scores = score_plugins(version)
    weights = [
        {"name": name, "weight": int(knobs[f"score_{name}_weight"])}
        for name, default in scores
        if knobs.get(f"score_{name}_on", True) and int(knobs.get(f"score_{name}_weight", default)) != default
    ]
    filters_off = [{"name": name} for name in filter_plugins(version) if not knobs.get(f"filter_{name}", True)]
    scores_off = [{"name": name} for name, _ in scores if not knobs.get(f"score_{name}_on", True)]
    plugins: dict[str, Any] = {}
    if weights:
        # multiPoint replaces the default entry in place, so score order stays upstream's.
        plugins["multiPoint"] = {"enabled": weights}
    gpu_policy = str(knobs.get("gpu_policy") or "")
    if gpu_policy in GPU_PRESCORE_POLICIES:
        plugins["preScore"] = {"enabled": [{"name": gpu_policy}]}
    if filters_off:
        plugins["filter"] = {"disabled": filters_off}
    if knobs.get("gpu_sharing"):
        plugins.setdefault("filter", {})["enabled"] = [{"name": GPU_SHARE}]
    if not knobs["preemption"]:
        plugins["postFilter"] = {"disabled": [{"name": PREEMPTION}]}
    if scores_off:
        plugins["score"] = {"disabled": scores_off}
    if gpu_policy:
        plugins.setdefault("score", {})["enabled"] = [{"name": gpu_policy, "weight": 1}]
    if knobs.get("gpu_sharing"):
        plugins["reserve"] = {"enabled": [{"name": GPU_SHARE}]}
    return plugins


def _version(knobs: Mapping[str, Any]) -> str:
    """The Kubernetes version the knobs are for (the default one when they name none)."""
    return str(knobs.get("kubernetes_version") or DEFAULT_KUBERNETES_VERSION)


def _resources(knobs: Mapping[str, Any]) -> list[dict[str, Any]]:
    resources = [
        {"name": name, "weight": int(knobs[key])}
        for name, key in ((CPU, "cpu_weight"), (MEMORY, "memory_weight"))
        if int(knobs[key] or 0) > 0
    ]
    extra = str(knobs.get("extra_resource") or "").strip()
    if extra and int(knobs.get("extra_weight") or 0) > 0:
        resources.append({"name": extra, "weight": int(knobs["extra_weight"])})
    return resources


def _fit_args(knobs: Mapping[str, Any]) -> dict[str, Any] | None:
    """NodeResourcesFit's scoringStrategy, or None when it is upstream's default and not asked for."""
    kind = knobs["scoring_strategy"]
    resources = _resources(knobs)
    default = kind == DEFAULT_STRATEGY and resources == [{"name": n, "weight": w} for n, w in DEFAULT_RESOURCE_WEIGHTS]
    if default and not knobs.get("write_scoring_strategy"):
        return None
    strategy: dict[str, Any] = {"type": kind, "resources": resources}
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        shape = [{"utilization": int(u), "score": int(s)} for u, s in knobs.get("shape") or []]
        strategy["requestedToCapacityRatio"] = {"shape": shape}
    return {"scoringStrategy": strategy}


def _preemption_args(knobs: Mapping[str, Any]) -> dict[str, Any] | None:
    args: dict[str, Any] = {}
    pct = int(knobs["min_candidate_nodes_percentage"])
    absolute = int(knobs["min_candidate_nodes_absolute"])
    if pct != DEFAULT_MIN_CANDIDATE_PERCENTAGE:
        args["minCandidateNodesPercentage"] = pct
    if absolute != DEFAULT_MIN_CANDIDATE_ABSOLUTE:
        args["minCandidateNodesAbsolute"] = absolute
    return args or None


def _base(base_text: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(wrapper, configuration) of the document being edited, or two empty dicts if it does not load."""
    if not base_text or validate(base_text):
        return {}, {}
    # The loader's reader (bounded and ~10× faster than yaml.safe_load); the text just loaded.
    data: dict[str, Any] = load_documents(base_text, SOURCE_NAME)[0].data
    if data.get("kind") == "KubeSchedulerConfiguration":
        return {}, data
    return data, dict((data.get("spec") or {}).get("configuration") or {})


def _profile(knobs: Mapping[str, Any], base_profile: Mapping[str, Any]) -> dict[str, Any]:
    default_name = _DEFAULT_POLICY.profiles[0].scheduler_name
    profile: dict[str, Any] = {"schedulerName": base_profile.get("schedulerName", default_name)}
    if base_profile.get("percentageOfNodesToScore") is not None:
        profile["percentageOfNodesToScore"] = base_profile["percentageOfNodesToScore"]
    plugins = _plugins(knobs)
    if plugins:
        profile["plugins"] = plugins
    config: list[dict[str, Any]] = []
    owned = {FIT: _fit_args(knobs), PREEMPTION: _preemption_args(knobs)}
    for entry in base_profile.get("pluginConfig") or []:
        name = entry.get("name")
        if name not in owned:
            config.append(entry)
            continue
        # Keep what the form has no knob for (e.g. ignoredResources) next to the knobs' args.
        dropped = ("apiVersion", "kind", *_KNOB_ARGS[name])
        args = {k: v for k, v in (entry.get("args") or {}).items() if k not in dropped}
        args.update(owned.pop(name) or {})
        if args:
            config.append({"name": name, "args": args})
    config.extend({"name": name, "args": args} for name, args in owned.items() if args)
    if config:
        profile["pluginConfig"] = config
    return profile


def _profile_is_default(profile: Mapping[str, Any]) -> bool:
    return set(profile) == {"schedulerName"} and profile["schedulerName"] == _DEFAULT_POLICY.profiles[0].scheduler_name


def document_from_knobs(knobs: Mapping[str, Any], base_text: str | None = None) -> str:
    """The smallest kubeviz Policy document with these knobs, as YAML.

    ``base_text`` is the document being edited: what the form has no knob for is kept from
    it (when it loads).
    """
    base_wrapper, base_config = _base(base_text)
    base_spec = base_wrapper.get("spec") or {}
    default = _DEFAULT_POLICY
    spec: dict[str, Any] = {}
    if knobs["queue_mode"] != default.queue_mode:
        spec["queueMode"] = knobs["queue_mode"]
    if knobs["scheduler_mode"] != default.scheduler_mode:
        spec["schedulerMode"] = knobs["scheduler_mode"]
    if bool(knobs["upgrade_aware_reservation"]) != default.upgrade_aware_reservation:
        spec["upgradeAwareReservation"] = bool(knobs["upgrade_aware_reservation"])
    if bool(knobs.get("kep5690_dra_preemption")) != default.kep5690_dra_preemption:
        spec["kep5690DRAPreemption"] = bool(knobs.get("kep5690_dra_preemption"))
    if knobs["tie_break"] != default.tie_break:
        spec["tieBreak"] = knobs["tie_break"]
    bind_latency_ms = int(knobs["bind_latency_ms"] or 0)
    if bind_latency_ms != default.bind_latency_ms:
        spec["bindLatency"] = format_ms(bind_latency_ms)
    version = _version(knobs)
    if version != default.kubernetes_version:
        spec["kubernetesVersion"] = version
    # The version's own gates only: a v1.36 gate is unknown to v1.31 (versions.GATE_DEFAULTS).
    known = GATE_DEFAULTS.get(version, {})
    gates = {k: v for k, v in (base_spec.get("featureGates") or {}).items() if k != QUEUEING_HINTS and k in known}
    hints_default = default.queueing_hints if version == default.kubernetes_version else known.get(QUEUEING_HINTS)
    if bool(knobs.get("queueing_hints")) != hints_default:
        gates[QUEUEING_HINTS] = bool(knobs.get("queueing_hints"))
    if gates:
        spec["featureGates"] = gates
    if "nodeUsageEvery" in base_spec:
        spec["nodeUsageEvery"] = base_spec["nodeUsageEvery"]

    config: dict[str, Any] = {"apiVersion": CONFIG_API_VERSION, "kind": "KubeSchedulerConfiguration"}
    for key, name in (
        ("percentageOfNodesToScore", "percentage_of_nodes_to_score"),
        ("podInitialBackoffSeconds", "pod_initial_backoff_seconds"),
        ("podMaxBackoffSeconds", "pod_max_backoff_seconds"),
    ):
        if int(knobs[name]) != getattr(default, name):
            config[key] = int(knobs[name])
    config.update({k: copy.deepcopy(v) for k, v in base_config.items() if k not in _KNOB_CONFIG_FIELDS})
    base_profiles: Sequence[Mapping[str, Any]] = base_config.get("profiles") or [{}]
    profiles = [_profile(knobs, base_profiles[0]), *copy.deepcopy(list(base_profiles[1:]))]
    if len(profiles) > 1 or not _profile_is_default(profiles[0]):
        config["profiles"] = profiles
    if set(config) != {"apiVersion", "kind"}:
        spec["configuration"] = config

    metadata = dict(base_wrapper.get("metadata") or {}) or {"name": "my-policy"}
    document = {"apiVersion": POLICY_API_VERSION, "kind": "Policy", "metadata": metadata, "spec": spec}
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False, allow_unicode=True)


# What the form cannot show


def _differences(a: scheduler_core.scheduler.Policy, b: scheduler_core.scheduler.Policy) -> list[str]:
    out: list[str] = []
    for field in (*_POLICY_SETTINGS, "node_usage_every_ms"):
        if getattr(a, field) != getattr(b, field):
            out.append(field)
    if len(a.profiles) != len(b.profiles):
        out.append("the number of profiles")
    for i, (pa, pb) in enumerate(zip(a.profiles, b.profiles, strict=False)):
        for point in sorted(set(pa.plugins) | set(pb.plugins)):
            mine, theirs = pa.plugins.get(point, ()), pb.plugins.get(point, ())
            if mine != theirs:
                what = "order" if sorted(mine) == sorted(theirs) else "plugins"
                out.append(f"profiles[{i}] {point} {what}")
        if pa.weights != pb.weights:
            out.append(f"profiles[{i}] score weights")
        for name in sorted(set(pa.plugin_args) | set(pb.plugin_args)):
            if pa.plugin_args.get(name) != pb.plugin_args.get(name):
                out.append(f"profiles[{i}] {name} args")
        if pa.percentage_of_nodes_to_score != pb.percentage_of_nodes_to_score:
            out.append(f"profiles[{i}] percentageOfNodesToScore")
    return out


def unexpressed(text: str) -> list[str]:
    """What rewriting this (loadable) document from the form's knobs would change; [] if nothing."""
    policy = load_policy(text, SOURCE_NAME)
    rewritten = load_policy(document_from_knobs(knobs_from_policy(policy), text), SOURCE_NAME)
    return _differences(policy, rewritten)


# Saving


def unique_policy_slug(name: str) -> str:
    """A free slug for a new policy."""
    return unique_slug(name, Policy, "policy")


_METADATA_NAME = re.compile(r"^(metadata:\n(?:[ \t]+#.*\n)*[ \t]+name:[ \t]*)(\S[^\n]*?)([ \t]*(?:#[^\n]*)?)$", re.M)


def named_document(document: str, name: str) -> str:
    """``document`` with its wrapper's ``metadata.name`` set to ``name``, so a policy saved as
    "my-pack" from the default preset does not say ``name: default`` inside. Only that one line
    changes (comments and layout stay); a document without the wrapper's metadata is kept as is."""
    match = _METADATA_NAME.search(document)
    if match is None:
        return document
    quoted = json.dumps(name, ensure_ascii=False)  # a JSON string is a YAML string
    if match.group(2).strip("\"'") == name:
        return document
    return document[: match.start(2)] + quoted + document[match.end(2) :]


def save_policy(
    *, policy: Policy | None, name: str, description: str, visibility: str, document: str, owner: User
) -> Policy:
    """Check ``document`` with the engine's loader and store it: into ``policy``, or as a new
    policy of ``owner``'s. One rule for the editor's page and the API.

    Raises LoadError (naming ``policy.yaml``, the line and the field) and stores nothing. The
    name defaults to the document's metadata.name; a new policy gets a free slug made from it.
    """
    loaded = load_policy(document, SOURCE_NAME)
    if not name.strip():  # the form checked its own name field (names.VisibleName)
        check_document_name(loaded.name, document, SOURCE_NAME)
    chosen = (name.strip() or loaded.name or "policy")[:120]
    fields = {
        "name": chosen,
        "description": description.strip(),
        "visibility": visibility,
        "document": named_document(document, chosen),
    }
    if policy is not None:
        for key, value in fields.items():
            setattr(policy, key, value)
        policy.save()
        return policy
    for _ in range(20):  # another save may take the same slug between the check and the insert
        try:
            with transaction.atomic():
                return Policy.objects.create(
                    slug=unique_policy_slug(fields["name"]), owner=owner, builtin=False, **fields
                )
        except IntegrityError:
            continue
    raise LoadError([Problem(SOURCE_NAME, None, "", "could not choose a unique name; try another one")])
