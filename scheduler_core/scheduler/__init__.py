"""kube-scheduler itself (``pkg/scheduler``): its configuration, cache, queue, framework, plugins
and the scheduling cycle.

Laid out as upstream's tree: ``config.py`` (``apis/config``: a policy once loaded),
``profile.py`` (``apis/config/v1/default_plugins.go``), ``policy.py`` (the policy documents),
``cache.py`` (``backend/cache``: NodeInfo, the snapshot), ``queue/`` (``backend/queue``),
``framework/`` (``framework/interface.go``, ``runtime``), ``plugins/`` (one module per plugin,
``plugins/registry.go``), ``eventhandlers.py`` (``eventhandlers.go``), ``schedule_one.py``
(``schedule_one.go``: the scheduling and binding cycles), ``fastpath.py`` (the same decisions,
in arrays), ``tie_break.py``, ``reservation.py`` (kubeviz's upgrade-aware reservation) and
``legacy/`` (the v1.5-era scheduler). The policy editor's lists come from ``catalog.py``."""

from __future__ import annotations

from .catalog import DEFAULT_FILTER_PLUGINS, DEFAULT_SCORE_PLUGINS, GPU_POLICIES, GPU_PRESCORE_POLICIES, GPU_SHARE
from .config import Policy, ProfileConfig
from .plugins.default_preemption import (
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    DefaultPreemption,
)
from .plugins.node_resources_fit import REQUESTED_TO_CAPACITY_RATIO, STRATEGIES, NodeResourcesFit, parse_fit_args
from .plugins.resource_allocation import parse_resource_specs
from .policy import (
    BUILTIN_POLICIES_DIR,
    CONFIG_API_VERSION,
    POLICY_API_VERSION,
    UNMODELLED_PLUGINS,
    builtin_policies,
    builtin_policy,
    builtin_policy_names,
    kubernetes_version_problem,
    load_policy,
    load_policy_file,
)
from .preferences import DEFAULT_PREFERENCES, Preference, plugin_name, score_preferences
from .profile import DEFAULT_PLUGINS, default_policy, default_profile
from .tie_break import TIE_BREAK_RANDOM, TIE_BREAK_SHUFFLED_FIRST_FIT, TIE_BREAKS, NodeOrder, describe_tie
from .versions import (
    DEFAULT_KUBERNETES_VERSION,
    GATE_DEFAULTS,
    KUBERNETES_VERSIONS,
    LOCKED_GATES,
    QUEUEING_HINTS,
    V1_31,
    V1_36,
    locked_reason,
)

__all__ = [
    "DEFAULT_KUBERNETES_VERSION",
    "GATE_DEFAULTS",
    "KUBERNETES_VERSIONS",
    "LOCKED_GATES",
    "QUEUEING_HINTS",
    "V1_31",
    "V1_36",
    "BUILTIN_POLICIES_DIR",
    "CONFIG_API_VERSION",
    "DEFAULT_FILTER_PLUGINS",
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
    "DEFAULT_PLUGINS",
    "DEFAULT_PREFERENCES",
    "DEFAULT_SCORE_PLUGINS",
    "DefaultPreemption",
    "GPU_POLICIES",
    "GPU_PRESCORE_POLICIES",
    "GPU_SHARE",
    "NodeOrder",
    "NodeResourcesFit",
    "POLICY_API_VERSION",
    "Policy",
    "Preference",
    "ProfileConfig",
    "REQUESTED_TO_CAPACITY_RATIO",
    "STRATEGIES",
    "TIE_BREAKS",
    "TIE_BREAK_RANDOM",
    "TIE_BREAK_SHUFFLED_FIRST_FIT",
    "UNMODELLED_PLUGINS",
    "builtin_policies",
    "builtin_policy",
    "builtin_policy_names",
    "default_policy",
    "default_profile",
    "describe_tie",
    "load_policy",
    "kubernetes_version_problem",
    "load_policy_file",
    "locked_reason",
    "parse_fit_args",
    "parse_resource_specs",
    "plugin_name",
    "score_preferences",
]
