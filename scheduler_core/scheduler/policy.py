"""Load a scheduling policy: a KubeSchedulerConfiguration, or kubeviz's ``Policy`` wrapper around one.

Plugin sets merge as upstream does (see docs/policy.md):

1. ``config/v1`` defaulting (default_plugins.go ``mergePlugins``/``mergePluginSet``): the
   defaults are a ``multiPoint`` list. The profile's ``multiPoint.disabled`` removes defaults
   (``'*'`` all of them); a ``multiPoint.enabled`` entry naming a default replaces it *in
   place* (new weight, same position); other enabled entries are appended. The per-point sets
   (``filter``, ``score``, …) are the profile's own.
2. The framework (runtime/framework.go ``expandMultiPointPlugins``), per extension point: if the
   point disables ``'*'``, only its own ``enabled`` list runs. Otherwise the multiPoint plugins
   that implement the point and are not disabled there are expanded into it, ordered as
   (a) plugins enabled at the point that are also in multiPoint (an explicit override, in the
   point's order), then (b) the remaining multiPoint plugins in multiPoint order, then (c) the
   point's other enabled plugins.
3. Score weights (``getScoreWeights``): the ``score`` entry's weight wins over the multiPoint
   one; an unset weight is 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..documents.errors import LoadError, Problems
from ..documents.reader import Reader
from ..documents.yamlsource import Document, describe, index_path, key_path, load_documents, read_text_file
from .config import Policy, ProfileConfig
from .framework import EXTENSION_POINTS, Handle, PluginArgsError, extension_points_of
from .plugins import REGISTRY
from .profile import default_plugins
from .tie_break import TIE_BREAK_RANDOM, TIE_BREAKS
from .versions import GATE_DEFAULTS, KUBERNETES_VERSIONS, QUEUEING_HINTS, V1_31, V1_36, locked_reason

__all__ = [
    "CONFIG_API_VERSION",
    "POLICY_API_VERSION",
    "BUILTIN_POLICIES_DIR",
    "UNMODELLED_PLUGINS",
    "load_policy",
    "load_policy_file",
    "builtin_policies",
    "builtin_policy",
    "builtin_policy_names",
    "kubernetes_version_problem",
]

MAX_BACKOFF_SECONDS = 10 * 365 * 24 * 3600  # ten years, the virtual clock's horizon

# What a document leaves out is config.py's field defaults (the one place they are spelled).
_DEFAULT = Policy(profiles=())
_DEFAULT_PROFILE = ProfileConfig()

CONFIG_API_VERSION = "kubescheduler.config.k8s.io/v1"
POLICY_API_VERSION = "kubeviz.dev/v1"
BUILTIN_POLICIES_DIR = Path(__file__).parents[1] / "policies"

# Upstream plugins the simulator does not model (no volumes, gates or DRA). Disabling them or
# configuring their args is accepted and ignored, so real configuration files load; enabling
# them is an error.
UNMODELLED_PLUGINS = (
    "SchedulingGates",
    "VolumeRestrictions",
    "EBSLimits",
    "GCEPDLimits",
    "NodeVolumeLimits",
    "AzureDiskLimits",
    "CinderLimits",
    "VolumeBinding",
    "VolumeZone",
    "DynamicResources",
)

_CONFIG_FIELDS = (
    "apiVersion",
    "kind",
    "parallelism",
    "leaderElection",
    "clientConnection",
    "healthzBindAddress",
    "metricsBindAddress",
    "enableProfiling",
    "enableContentionProfiling",
    "delayCacheUntilActive",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "profiles",
    "extenders",
)
_PROFILE_FIELDS = ("schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore")
_POINT_FIELDS = ("multiPoint", *(point.name for point in EXTENSION_POINTS))
_WRAPPER_FIELDS = ("apiVersion", "kind", "metadata", "spec")
_WRAPPER_SPEC_FIELDS = (
    "queueMode",
    "schedulerMode",
    "upgradeAwareReservation",
    "kep5690DRAPreemption",
    "tieBreak",
    "bindLatency",
    "nodeUsageEvery",
    "kubernetesVersion",
    "featureGates",
    "configuration",
)


@dataclass
class _Entry:
    name: str
    weight: int | None
    path: str


@dataclass
class _PluginSet:
    enabled: list[_Entry] = field(default_factory=list)
    disabled: list[_Entry] = field(default_factory=list)

    @property
    def disabled_names(self) -> set[str]:
        return {e.name for e in self.disabled}


def _points_of(name: str) -> list[str]:
    return extension_points_of(REGISTRY[name])


class _PolicyReader:
    def __init__(self, r: Reader) -> None:
        self.r = r
        # whose default profile (profile.default_plugins) profiles start from: the wrapper's
        # spec.kubernetesVersion, read before its configuration
        self.version = _DEFAULT.kubernetes_version

    # -- plugin sets

    def plugin_set(self, value: Any, path: str, point: str) -> _PluginSet:
        r = self.r
        obj = r.mapping(value, path)
        r.only_fields(obj, path, ("enabled", "disabled"))
        result = _PluginSet()
        seen: set[str] = set()
        for item_path, item in r.items(obj.get("enabled"), key_path(path, "enabled")):
            entry = self.entry(item, item_path, point, enabled=True)
            if entry is None:
                continue
            if entry.name in seen:
                r.error(key_path(item_path, "name"), f"{entry.name} is enabled twice at {point}")
                continue
            seen.add(entry.name)
            result.enabled.append(entry)
        for item_path, item in r.items(obj.get("disabled"), key_path(path, "disabled")):
            entry = self.entry(item, item_path, point, enabled=False)
            if entry is not None:
                result.disabled.append(entry)
        return result

    def entry(self, value: Any, path: str, point: str, *, enabled: bool) -> _Entry | None:
        r = self.r
        obj = r.mapping(value, path)
        r.only_fields(obj, path, ("name", "weight") if enabled else ("name",))
        name_path = key_path(path, "name")
        name = r.string(obj.get("name"), name_path, required=True)
        if not name:
            return None
        weight = None
        if obj.get("weight") is not None:
            weight = r.integer(obj.get("weight"), key_path(path, "weight"), 1)
            if weight is not None and not 1 <= weight <= 100:
                r.error(key_path(path, "weight"), f"must be between 1 and 100, got {weight}")
                weight = None
        if name == "*":
            if enabled:
                r.error(name_path, "'*' can only be disabled")
                return None
            return _Entry(name, None, path)
        if name not in REGISTRY:
            if name in UNMODELLED_PLUGINS:
                if enabled:
                    r.error(
                        name_path,
                        f"{name} is not modelled by kubeviz (no volumes, scheduling gates or dynamic resources)",
                    )
                return None
            r.error(name_path, f'unknown plugin "{name}"; known plugins: {", ".join(REGISTRY)}')
            return None
        if enabled and point != "multiPoint" and point not in _points_of(name):
            implemented = ", ".join(_points_of(name)) or "none"
            r.error(name_path, f"{name} does not implement {point} (it implements {implemented})")
            return None
        return _Entry(name, weight, path)

    # -- profiles

    def profile(self, value: Any, path: str) -> tuple[ProfileConfig, str]:
        r = self.r
        obj = r.mapping(value, path)
        r.only_fields(obj, path, _PROFILE_FIELDS)
        name_path = key_path(path, "schedulerName")
        default_name = _DEFAULT_PROFILE.scheduler_name
        scheduler_name = r.string(obj.get("schedulerName"), name_path, default_name) or default_name
        plugins_path = key_path(path, "plugins")
        plugins_obj = r.mapping(obj.get("plugins"), plugins_path)
        r.only_fields(plugins_obj, plugins_path, _POINT_FIELDS)
        sets = {
            point: self.plugin_set(plugins_obj.get(point), key_path(plugins_path, point), point)
            for point in _POINT_FIELDS
        }
        multi_point = _merge_multi_point(sets["multiPoint"], self.version)
        plugins: dict[str, tuple[str, ...]] = {}
        for point in EXTENSION_POINTS:
            plugins[point.name] = self.expand(multi_point, sets[point.name], point.name, plugins_path)
        weights = _score_weights(sets["score"].enabled + multi_point, plugins["score"])
        if len(plugins["queueSort"]) != 1:
            r.error(plugins_path, f"exactly one queueSort plugin must be enabled, got {len(plugins['queueSort'])}")
        if not plugins["bind"]:
            r.error(plugins_path, "at least one bind plugin must be enabled")
        pct_path = key_path(path, "percentageOfNodesToScore")
        pct = _DEFAULT_PROFILE.percentage_of_nodes_to_score
        if obj.get("percentageOfNodesToScore") is not None:
            pct = r.integer(obj.get("percentageOfNodesToScore"), pct_path, 0, minimum=0, maximum=100)
        plugin_args = self.plugin_config(obj.get("pluginConfig"), key_path(path, "pluginConfig"))
        profile = ProfileConfig(
            scheduler_name=scheduler_name,
            plugins=plugins,
            weights=weights,
            plugin_args=plugin_args,
            percentage_of_nodes_to_score=pct,
        )
        return profile, name_path

    def expand(self, multi_point: list[_Entry], own: _PluginSet, point: str, plugins_path: str) -> tuple[str, ...]:
        specific = [e.name for e in own.enabled]
        disabled = own.disabled_names
        if "*" in disabled:
            return tuple(specific)
        overrides: set[str] = set()
        expanded: list[str] = []
        for entry in multi_point:
            if point not in _points_of(entry.name) or entry.name in disabled:
                continue
            if entry.name in specific:
                overrides.add(entry.name)
                continue
            if entry.name in expanded:
                self.r.error(key_path(entry.path, "name"), f"plugin {entry.name} is already registered at {point}")
                continue
            expanded.append(entry.name)
        first = [name for name in specific if name in overrides]
        rest = [name for name in specific if name not in overrides]
        return tuple(first + expanded + rest)

    def plugin_config(self, value: Any, path: str) -> dict[str, dict[str, Any]]:
        r = self.r
        out: dict[str, dict[str, Any]] = {}
        for item_path, item in r.items(value, path):
            obj = r.mapping(item, item_path)
            r.only_fields(obj, item_path, ("name", "args"))
            name_path = key_path(item_path, "name")
            name = r.string(obj.get("name"), name_path, required=True)
            if not name:
                continue
            if name not in REGISTRY:
                if name not in UNMODELLED_PLUGINS:
                    r.error(name_path, f'unknown plugin "{name}"; known plugins: {", ".join(REGISTRY)}')
                continue
            if name in out:
                r.error(name_path, f"{name} is configured twice")
                continue
            args_path = key_path(item_path, "args")
            args = dict(r.mapping(obj.get("args"), args_path))
            kind = args.pop("kind", None)
            api_version = args.pop("apiVersion", None)
            if kind is not None and kind != f"{name}Args":
                r.error(key_path(args_path, "kind"), f"expected {name}Args, got {describe(kind)}")
            if api_version is not None and api_version != CONFIG_API_VERSION:
                r.error(
                    key_path(args_path, "apiVersion"), f"expected {CONFIG_API_VERSION}, got {describe(api_version)}"
                )
            try:
                REGISTRY[name](Handle(), args)
            except PluginArgsError as exc:
                field_path = args_path
                if exc.field:
                    field_path = f"{args_path}{exc.field}" if exc.field.startswith("[") else f"{args_path}.{exc.field}"
                r.error(field_path, exc.message)
            except (TypeError, ValueError, KeyError, AttributeError) as exc:
                r.error(args_path, f"invalid args for {name}: {exc}")
            out[name] = args
        return out

    # -- the whole configuration

    def configuration(self, value: Any, path: str, name: str) -> Policy:
        r = self.r
        obj = r.mapping(value, path)
        r.only_fields(obj, path, _CONFIG_FIELDS)
        api_version = obj.get("apiVersion")
        if api_version != CONFIG_API_VERSION:
            r.error(key_path(path, "apiVersion"), f"expected {CONFIG_API_VERSION}, got {describe(api_version)}")
        if obj.get("kind") != "KubeSchedulerConfiguration":
            r.error(key_path(path, "kind"), f"expected KubeSchedulerConfiguration, got {describe(obj.get('kind'))}")
        r.integer(obj.get("parallelism"), key_path(path, "parallelism"), 16, minimum=1)
        extenders = obj.get("extenders")
        if extenders:
            r.error(key_path(path, "extenders"), "scheduler extenders are not supported")
        pct = r.integer(
            obj.get("percentageOfNodesToScore"),
            key_path(path, "percentageOfNodesToScore"),
            _DEFAULT.percentage_of_nodes_to_score,
            minimum=0,
            maximum=100,
        )
        initial_path = key_path(path, "podInitialBackoffSeconds")
        # Upstream only asks for more than 0 (apis/config/validation); kubeviz's virtual clock, like
        # its timeline, stays within ten years.
        initial = r.integer(
            obj.get("podInitialBackoffSeconds"),
            initial_path,
            _DEFAULT.pod_initial_backoff_seconds,
            minimum=1,
            maximum=MAX_BACKOFF_SECONDS,
        )
        max_path = key_path(path, "podMaxBackoffSeconds")
        maximum = r.integer(
            obj.get("podMaxBackoffSeconds"),
            max_path,
            _DEFAULT.pod_max_backoff_seconds,
            minimum=1,
            maximum=MAX_BACKOFF_SECONDS,
        )
        if maximum < initial:
            r.error(max_path, f"must be at least podInitialBackoffSeconds ({initial}), got {maximum}")
        profiles: list[ProfileConfig] = []
        names: dict[str, str] = {}
        profiles_path = key_path(path, "profiles")
        for item_path, item in r.items(obj.get("profiles"), profiles_path):
            profile, name_path = self.profile(item, item_path)
            if profile.scheduler_name in names:
                r.error(name_path, f'duplicate schedulerName "{profile.scheduler_name}"')
                continue
            names[profile.scheduler_name] = name_path
            profiles.append(profile)
        if not obj.get("profiles"):
            profiles.append(self.profile({}, index_path(profiles_path, 0))[0])
        if len({p.plugins["queueSort"] for p in profiles}) > 1:
            r.error(profiles_path, "every profile must use the same queueSort plugin")
        return Policy(
            profiles=tuple(profiles),
            name=name,
            percentage_of_nodes_to_score=pct,
            pod_initial_backoff_seconds=initial,
            pod_max_backoff_seconds=maximum,
        )

    def wrapper(self, value: Mapping[str, Any], default_name: str) -> Policy:
        r = self.r
        r.only_fields(value, "", _WRAPPER_FIELDS)
        if value.get("apiVersion") != POLICY_API_VERSION:
            r.error("apiVersion", f"expected {POLICY_API_VERSION}, got {describe(value.get('apiVersion'))}")
        meta = r.mapping(value.get("metadata"), "metadata")
        r.only_fields(meta, "metadata", ("name", "annotations", "labels"))
        name = r.string(meta.get("name"), "metadata.name", default_name) or default_name
        spec = r.mapping(value.get("spec"), "spec")
        r.only_fields(spec, "spec", _WRAPPER_SPEC_FIELDS)
        queue_mode = r.choice(spec.get("queueMode"), "spec.queueMode", ("priority", "fifo"), _DEFAULT.queue_mode)
        scheduler_mode = r.choice(
            spec.get("schedulerMode"), "spec.schedulerMode", ("framework", "legacy"), _DEFAULT.scheduler_mode
        )
        upgrade_aware = r.boolean(
            spec.get("upgradeAwareReservation"), "spec.upgradeAwareReservation", _DEFAULT.upgrade_aware_reservation
        )
        tie_break = r.choice(spec.get("tieBreak"), "spec.tieBreak", TIE_BREAKS, _DEFAULT.tie_break)
        if tie_break != TIE_BREAK_RANDOM and scheduler_mode == "legacy":
            r.error("spec.tieBreak", f"{tie_break} needs schedulerMode framework (the legacy scheduler has its own)")
        # A zero duration, like a missing one, is the default.
        bind_latency = r.duration_ms(spec.get("bindLatency"), "spec.bindLatency") or _DEFAULT.bind_latency_ms
        usage_every = r.duration_ms(spec.get("nodeUsageEvery"), "spec.nodeUsageEvery") or _DEFAULT.node_usage_every_ms
        version = r.choice(
            spec.get("kubernetesVersion"), "spec.kubernetesVersion", KUBERNETES_VERSIONS, _DEFAULT.kubernetes_version
        )
        self.version = version
        dra_preemption = r.boolean(
            spec.get("kep5690DRAPreemption"), "spec.kep5690DRAPreemption", _DEFAULT.kep5690_dra_preemption
        )
        if dra_preemption and version != V1_36:
            r.error("spec.kep5690DRAPreemption", _kep5690_problem(version))
        gates = self.feature_gates(spec.get("featureGates"), "spec.featureGates", version)
        queueing_hints = gates[QUEUEING_HINTS]
        if queueing_hints and (queue_mode != "priority" or scheduler_mode != "framework"):
            if locked_reason(version, QUEUEING_HINTS):  # v1.36: no hints off, so no FIFO queue either
                field_path = "spec.queueMode" if queue_mode != "priority" else "spec.schedulerMode"
                mode = queue_mode if queue_mode != "priority" else scheduler_mode
                r.error(
                    field_path,
                    f"{mode} needs kubernetesVersion v1.31: kube-scheduler {version} has no queue without "
                    "QueueingHints (they are locked on since v1.34)",
                )
            else:
                r.error(
                    "spec.featureGates.SchedulerQueueingHints",
                    "needs queueMode priority and schedulerMode framework (the FIFO queue has no hints)",
                )
        configuration = spec.get("configuration")
        if configuration is None:
            configuration = {"apiVersion": CONFIG_API_VERSION, "kind": "KubeSchedulerConfiguration"}
        policy = self.configuration(configuration, "spec.configuration", name)
        return replace(
            policy,
            queue_mode=queue_mode,
            scheduler_mode=scheduler_mode,
            upgrade_aware_reservation=upgrade_aware,
            kep5690_dra_preemption=dra_preemption,
            tie_break=tie_break,
            bind_latency_ms=bind_latency,
            node_usage_every_ms=usage_every,
            kubernetes_version=version,
            feature_gates=tuple(sorted(gates.items())),
            queueing_hints=queueing_hints,
        )

    def feature_gates(self, value: Any, path: str, version: str) -> dict[str, bool]:
        """``featureGates: {Name: bool}`` as kube-scheduler's ``--feature-gates`` takes them:
        only ``version``'s gates are known, and a gate it locks cannot change."""
        r = self.r
        known = GATE_DEFAULTS[version]
        gates = dict(known)
        obj = r.mapping(value, path)
        for name, on in obj.items():
            gate_path = key_path(path, str(name))
            if name not in known:
                r.error(gate_path, f"unknown feature gate under {version}; kubeviz models {', '.join(sorted(known))}")
                continue
            gates[name] = r.boolean(on, gate_path)
            reason = locked_reason(version, name)
            if reason and gates[name] != known[name]:
                r.error(gate_path, f"cannot be {str(gates[name]).lower()} under {version}: {reason}")
        return gates


def _merge_multi_point(custom: _PluginSet, version: str) -> list[_Entry]:
    """default_plugins.go mergePluginSet, with ``version``'s defaults as the multiPoint list."""
    disabled = custom.disabled_names
    by_name = {e.name: e for e in custom.enabled}
    replaced: set[str] = set()
    merged: list[_Entry] = []
    if "*" not in disabled:
        for name, weight in default_plugins(version):
            if name in disabled:
                continue
            entry = by_name.get(name)
            if entry is not None:
                replaced.add(name)
                merged.append(entry)
            else:
                merged.append(_Entry(name, weight or None, ""))
    merged.extend(e for e in custom.enabled if e.name not in replaced)
    return merged


def _score_weights(entries: list[_Entry], score_plugins: tuple[str, ...]) -> dict[str, int]:
    """framework.go getScoreWeights: the first entry for a plugin wins; unset is 1."""
    weights: dict[str, int] = {}
    for entry in entries:
        if "score" not in _points_of(entry.name) or entry.name in weights:
            continue
        weights[entry.name] = entry.weight or 1
    return {name: weights.get(name, 1) for name in score_plugins}


def _at_version(data: dict[str, Any], version: str, name: str) -> dict[str, Any]:
    """The document ``data`` as a Policy wrapper naming ``version``: its gates the version has
    and lets change are kept, the others dropped (an override, not the author's choice)."""
    if data.get("kind") != "Policy":
        data = {
            "apiVersion": POLICY_API_VERSION,
            "kind": "Policy",
            "metadata": {"name": name},
            "spec": {"configuration": data},
        }
    spec = dict(data.get("spec") or {}) if isinstance(data.get("spec") or {}, Mapping) else {}
    gates = spec.get("featureGates")
    if isinstance(gates, Mapping):
        known = GATE_DEFAULTS[version]
        spec["featureGates"] = {
            k: v for k, v in gates.items() if k in known and (locked_reason(version, k) is None or v == known[k])
        }
    spec["kubernetesVersion"] = version
    return {**data, "spec": spec}


def _load(text: str, source: str, policy_source: str, kubernetes_version: str | None = None) -> Policy:
    documents = load_documents(text, source)
    if len(documents) != 1:
        line = documents[1].line if len(documents) > 1 else None
        raise LoadError.single(source, line, "", f"a policy is one document, got {len(documents)}")
    doc: Document = documents[0]
    problems = Problems()
    r = Reader(source, doc, problems)
    data = r.mapping(doc.data, "", required=True)
    problems.raise_if_any()
    reader = _PolicyReader(r)
    default_name = Path(source).stem or "policy"
    if kubernetes_version is not None:
        problem = _version_problem(kubernetes_version)
        if problem:
            raise LoadError.single(source, None, "spec.kubernetesVersion", problem)
        spec = data.get("spec") if data.get("kind") == "Policy" else None
        names_version = isinstance(spec, Mapping) and spec.get("kubernetesVersion") is not None
        try:
            own: Policy | None = _load(text, source, policy_source)
        except LoadError:
            # A document naming no version reads at the default (v1.36), where a FIFO queue or
            # legacy scheduler cannot load; as the version asked for it may (v1.31): the load
            # below, at that version, reports whatever is really wrong.
            if names_version:
                raise
            own = None
        if own is not None:
            problem = kubernetes_version_problem(own, kubernetes_version)
            if problem:
                raise LoadError.single(source, None, "spec.kubernetesVersion", problem)
        data = _at_version(data, kubernetes_version, own.name if own is not None else default_name)
    kind = data.get("kind")
    if kind == "Policy":
        policy = reader.wrapper(data, default_name)
    elif kind == "KubeSchedulerConfiguration":
        policy = reader.configuration(data, "", default_name)
    else:
        r.error("kind", f"expected KubeSchedulerConfiguration or Policy ({POLICY_API_VERSION}), got {describe(kind)}")
        problems.raise_if_any()
        raise AssertionError("unreachable")
    problems.raise_if_any()
    return replace(policy, source=policy_source)


def load_policy(text: str, source: str = "policy.yaml", *, kubernetes_version: str | None = None) -> Policy:
    """Load a KubeSchedulerConfiguration or a ``kubeviz.dev/v1 Policy``; raises LoadError.

    ``kubernetes_version`` loads it as if its ``spec.kubernetesVersion`` said that version (the
    CLI's ``--kubernetes-version``, the fork action ``switchKubernetesVersion``): the version's
    default profile and gates, with the document's own gates kept where that version has them
    and lets them change. A version the policy cannot run under is a LoadError
    (:func:`kubernetes_version_problem`)."""
    return _load(text, source, source, kubernetes_version)


def load_policy_file(path: str | Path, *, kubernetes_version: str | None = None) -> Policy:
    """Read ``path`` (UTF-8, size-capped like every document) and load it; errors name the file."""
    return load_policy(read_text_file(path), Path(path).name, kubernetes_version=kubernetes_version)


def _version_problem(version: str) -> str | None:
    if version not in KUBERNETES_VERSIONS:
        return f"{version!r} is not a Kubernetes version kubeviz models; use {' or '.join(KUBERNETES_VERSIONS)}"
    return None


def _kep5690_problem(version: str) -> str:
    return (
        f"KEP-5690's DRA preemption needs kubernetesVersion {V1_36}: it is a proposal for the DynamicResources "
        f"plugin of v1.36 and later, which kube-scheduler {version} does not run"
    )


def kubernetes_version_problem(policy: Policy, version: str) -> str | None:
    """Why ``policy`` cannot run under ``version``, or None when it can: an unknown version, a
    FIFO queue / legacy scheduler under a version that locks QueueingHints on (the loader's
    own rule for ``spec.featureGates.SchedulerQueueingHints``), or ``kep5690DRAPreemption``
    under another version than v1.36."""
    problem = _version_problem(version)
    if problem:
        return problem
    if policy.kep5690_dra_preemption and version != V1_36:
        return f"spec.kep5690DRAPreemption: {_kep5690_problem(version)}"
    hints_on = GATE_DEFAULTS[version][QUEUEING_HINTS] and locked_reason(version, QUEUEING_HINTS) is not None
    if hints_on and (policy.queue_mode != "priority" or policy.scheduler_mode != "framework"):
        return (
            f"{policy.name or 'the policy'} uses the v1.5-era FIFO queue or legacy scheduler, which {version} "
            f"cannot run: QueueingHints are locked on there and the FIFO queue has no hints; keep it on {V1_31}"
        )
    return None


def builtin_policy_names() -> list[str]:
    return sorted(p.stem for p in BUILTIN_POLICIES_DIR.glob("*.yaml"))


def builtin_policy(name: str, *, kubernetes_version: str | None = None) -> Policy:
    """A preset from scheduler_core/policies (``Policy.source`` is "" for presets)."""
    path = BUILTIN_POLICIES_DIR / f"{name}.yaml"
    if not path.is_file():
        raise KeyError(f"no built-in policy {name!r}; built-in: {', '.join(builtin_policy_names())}")
    return _load(path.read_text(encoding="utf-8"), path.name, "", kubernetes_version)


def builtin_policies() -> dict[str, Policy]:
    return {name: builtin_policy(name) for name in builtin_policy_names()}
