"""What the policy editor offers, and the defaults it leaves out of a document: read from the engine.

The plugin lists come from the engine's catalog (:mod:`scheduler_core.scheduler.catalog`, itself
read off the registry and the default profile), the strategies and argument defaults from the
plugins' own argument parsers. So a plugin, strategy or default changed in the engine is
changed in the form and in what ``document_from_knobs`` counts as "upstream's default" alike;
nothing here is written twice.
"""

from __future__ import annotations

from scheduler_core.api import CPU, MEMORY
from scheduler_core.scheduler import (
    DEFAULT_FILTER_PLUGINS,
    DEFAULT_KUBERNETES_VERSION,
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    DEFAULT_SCORE_PLUGINS,
    GPU_POLICIES,
    GPU_PRESCORE_POLICIES,
    GPU_SHARE,
    KUBERNETES_VERSIONS,
    STRATEGIES,
    DefaultPreemption,
    NodeResourcesFit,
    builtin_policy,
    default_profile,
    parse_fit_args,
)

__all__ = [
    "DEFAULT_CPU_WEIGHT",
    "DEFAULT_MEMORY_WEIGHT",
    "DEFAULT_MIN_CANDIDATE_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_PERCENTAGE",
    "DEFAULT_RESOURCE_WEIGHTS",
    "DEFAULT_SHAPE",
    "DEFAULT_STRATEGY",
    "FILTER_PLUGINS",
    "FILTER_PLUGINS_BY_VERSION",
    "FIT",
    "GPU_POLICIES",
    "GPU_PRESCORE_POLICIES",
    "GPU_SHARE",
    "PREEMPTION",
    "SCORE_PLUGINS",
    "SCORE_PLUGINS_BY_VERSION",
    "SHAPE_PRESET",
    "STRATEGIES",
    "filter_plugins",
    "score_plugins",
]

# The filter plugins the form switches on and off, in the default profile's order, and the
# score plugins with their default weights (config/v1 default_plugins.go), in order: the default
# version's. Each version has its own default profile (v1.36 adds DynamicResources at filter and
# score), so the knobs of a policy are its version's (profile.default_profile).
FILTER_PLUGINS: tuple[str, ...] = DEFAULT_FILTER_PLUGINS
SCORE_PLUGINS: tuple[tuple[str, int], ...] = DEFAULT_SCORE_PLUGINS


def _lists(version: str) -> tuple[tuple[str, ...], tuple[tuple[str, int], ...]]:
    profile = default_profile(version=version)
    return profile.plugins["filter"], tuple((name, profile.weights[name]) for name in profile.plugins["score"])


_BY_VERSION = {version: _lists(version) for version in KUBERNETES_VERSIONS}
FILTER_PLUGINS_BY_VERSION: dict[str, tuple[str, ...]] = {v: lists[0] for v, lists in _BY_VERSION.items()}
SCORE_PLUGINS_BY_VERSION: dict[str, tuple[tuple[str, int], ...]] = {v: lists[1] for v, lists in _BY_VERSION.items()}


def filter_plugins(version: str | None = None) -> tuple[str, ...]:
    """The filter knobs of ``version`` (the default version's when None or unknown)."""
    return FILTER_PLUGINS_BY_VERSION.get(version or DEFAULT_KUBERNETES_VERSION, FILTER_PLUGINS)


def score_plugins(version: str | None = None) -> tuple[tuple[str, int], ...]:
    """The score knobs of ``version`` with their default weights (the default version's when None or unknown)."""
    return SCORE_PLUGINS_BY_VERSION.get(version or DEFAULT_KUBERNETES_VERSION, SCORE_PLUGINS)


# GPU sharing (docs/gpu.md): GpuShare at filter and reserve, and at most one of the paper's six
# policies at score (weight 1); those that are PreScore plugins too are enabled there as well.
GPU_SHARE: str = GPU_SHARE
GPU_POLICIES: tuple[str, ...] = GPU_POLICIES
GPU_PRESCORE_POLICIES: tuple[str, ...] = GPU_PRESCORE_POLICIES

FIT: str = NodeResourcesFit.name
PREEMPTION: str = DefaultPreemption.name

# DefaultPreemption's defaults (apis/config/v1/defaults.go), which the document leaves out.
DEFAULT_MIN_CANDIDATE_PERCENTAGE: int = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
DEFAULT_MIN_CANDIDATE_ABSOLUTE: int = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE

# NodeResourcesFit's scoringStrategy when a profile gives none: what its parser defaults to.
_FIT_DEFAULTS = parse_fit_args(None)
DEFAULT_STRATEGY: str = _FIT_DEFAULTS.strategy
DEFAULT_RESOURCE_WEIGHTS: tuple[tuple[str, int], ...] = tuple(
    (spec.name, spec.weight) for spec in _FIT_DEFAULTS.resources
)
# The form has a cpu and a memory weight; a resource not scored by default starts at 0 (off).
DEFAULT_CPU_WEIGHT: int = dict(DEFAULT_RESOURCE_WEIGHTS).get(CPU, 0)
DEFAULT_MEMORY_WEIGHT: int = dict(DEFAULT_RESOURCE_WEIGHTS).get(MEMORY, 0)

# What the shape rows start with when switching to RequestedToCapacityRatio. Upstream has no
# default shape (validation requires one for that type), so the form starts from the
# rtcr-binpack preset's, read through the loader and Fit's parser rather than copied here.
SHAPE_PRESET = "rtcr-binpack"
DEFAULT_SHAPE: tuple[tuple[int, int], ...] = parse_fit_args(
    builtin_policy(SHAPE_PRESET).profiles[0].plugin_args[FIT]
).shape
