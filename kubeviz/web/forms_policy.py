"""The policy editor's forms: the knobs (one field per knob of services.policy_editor) and the save form.

Ranges here are the form's own (what an input may hold); everything that depends on more
than one field (backoff order, shape order, preemption's two minimums) is left to the
engine's loader, so its messages — with line and field path — are the ones people see.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django import forms

from .forms import DocumentTextField, visibility_field
from .services.names import VisibleName
from .services.policy_catalog import GPU_POLICIES, GPU_SHARE, PREEMPTION, STRATEGIES, filter_plugins, score_plugins
from .services.policy_editor import TIE_BREAK_LABELS, TIE_BREAKS, too_big
from .services.versions import DEFAULT_KUBERNETES_VERSION, KUBERNETES_VERSIONS, hints_lock, version_gates

__all__ = ["PolicyKnobsForm", "PolicySaveForm", "MIN_SHAPE_ROWS"]

# The RequestedToCapacityRatio table always has at least this many rows, and one blank row more
# than the shape has points, so a point can be added without JavaScript.
MIN_SHAPE_ROWS = 4
MAX_SHAPE_ROWS = 50
_SHAPE_KEY = re.compile(r"^shape_([0-9]{1,4})_(?:utilization|score)$")  # ASCII, short: int() of 5,000 digits raises


def _number(minimum: int, maximum: int | None = None, *, label: str = "", help_text: str = "") -> forms.IntegerField:
    attrs: dict[str, Any] = {"min": minimum, "class": "num"}
    if maximum is not None:
        attrs["max"] = maximum
    return forms.IntegerField(
        min_value=minimum,
        max_value=maximum,
        label=label,
        help_text=help_text,
        widget=forms.NumberInput(attrs=attrs),
    )


class PolicyKnobsForm(forms.Form):
    """The common knobs. ``knobs()`` gives the dict ``document_from_knobs`` takes."""

    preemption = forms.BooleanField(required=False, label=f"{PREEMPTION} (postFilter)")
    min_candidate_nodes_percentage = _number(0, 100, label="minCandidateNodesPercentage")
    min_candidate_nodes_absolute = _number(0, label="minCandidateNodesAbsolute")
    scoring_strategy = forms.ChoiceField(choices=[(s, s) for s in STRATEGIES], label="Scoring strategy")
    write_scoring_strategy = forms.BooleanField(
        required=False, label="Write scoringStrategy out even when it is the default (as the spread preset does)"
    )
    cpu_weight = _number(0, 100, label="cpu")
    memory_weight = _number(0, 100, label="memory")
    extra_resource = forms.CharField(
        required=False,
        max_length=253,
        label="Extra resource",
        widget=forms.TextInput(attrs={"placeholder": "nvidia.com/gpu", "spellcheck": "false"}),
    )
    extra_weight = forms.IntegerField(
        required=False,
        label="Extra resource weight",
        min_value=0,
        max_value=100,
        widget=forms.NumberInput(attrs={"min": 0, "max": 100, "class": "num"}),
    )
    percentage_of_nodes_to_score = _number(0, 100, label="percentageOfNodesToScore", help_text="0 = adaptive")
    pod_initial_backoff_seconds = _number(1, label="podInitialBackoffSeconds")
    pod_max_backoff_seconds = _number(1, label="podMaxBackoffSeconds")
    queue_mode = forms.ChoiceField(
        choices=[("priority", "priority"), ("fifo", "fifo (v1.5)")],
        label="Queue",
        help_text="priority: activeQ, backoffQ and unschedulable pods; fifo: one queue, as in v1.5 "
        "(with Kubernetes version v1.31: v1.36 locks QueueingHints on, which the FIFO queue has not).",
    )
    scheduler_mode = forms.ChoiceField(
        choices=[("framework", "framework"), ("legacy", "legacy (v1.5)")],
        label="Scheduler",
        help_text="legacy: v1.5 predicates and priorities; the plugin settings above are not used "
        "(with Kubernetes version v1.31, as for fifo).",
    )
    upgrade_aware_reservation = forms.BooleanField(required=False, label="Upgrade-aware reservation")
    kep5690_dra_preemption = forms.BooleanField(required=False, label="DRA preemption (KEP-5690, proposed)")
    queueing_hints = forms.BooleanField(required=False, label="QueueingHints (feature gate)")
    kubernetes_version = forms.ChoiceField(
        required=False,
        choices=[(v, v) for v in KUBERNETES_VERSIONS],
        label="Kubernetes version",
        help_text="Which kube-scheduler runs the policy: its default profile and feature gates (docs/policy.md).",
    )
    tie_break = forms.ChoiceField(
        choices=[(rule, TIE_BREAK_LABELS[rule]) for rule in TIE_BREAKS],
        label="Tie-break (selectHost)",
        help_text="Which of several top-scored nodes wins. random: kube-scheduler's rule; shuffled-first-fit: the "
        "first tied node in an order shuffled once per run, as the FGD paper's simulator does (docs/policy.md).",
    )
    bind_latency_ms = _number(0, 3_600_000, label="Bind latency (ms)")
    gpu_sharing = forms.BooleanField(required=False, label=f"{GPU_SHARE} (filter and reserve)")
    gpu_policy = forms.ChoiceField(
        required=False,
        choices=[("", "none"), *((name, name) for name in GPU_POLICIES)],
        label="GPU policy (score)",
        help_text="One of the GPU-sharing paper's six policies, scored with weight 1 (docs/gpu.md).",
    )

    def __init__(self, *args: Any, shape_rows: int = MIN_SHAPE_ROWS, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.version = str(
            (self.data.get("kubernetes_version") if self.is_bound else None)
            or self.initial.get("kubernetes_version")
            or DEFAULT_KUBERNETES_VERSION
        )
        if self.version not in KUBERNETES_VERSIONS:
            self.version = DEFAULT_KUBERNETES_VERSION  # the select refuses it; the knobs are the default's
        # The plugin knobs are the version's default profile's (v1.36 adds DynamicResources).
        self.filter_names = filter_plugins(self.version)
        self.score_defaults = score_plugins(self.version)
        for name in self.filter_names:
            self.fields[f"filter_{name}"] = forms.BooleanField(required=False, label=name)
        for name, default in self.score_defaults:
            self.fields[f"score_{name}_on"] = forms.BooleanField(required=False, label=name)
            self.fields[f"score_{name}_weight"] = _number(
                1, 100, label=f"{name} weight", help_text=f"default {default}"
            )
        if self.is_bound:
            self._default_new_plugins()
        # A version that locks QueueingHints (v1.36: GA, locked on since v1.34) shows the box
        # checked and disabled; a disabled field takes its initial value, whatever is posted.
        self.hints_lock = hints_lock(self.version)
        if self.hints_lock:
            hints = self.fields["queueing_hints"]
            hints.disabled = True
            hints.initial = True
            self.initial["queueing_hints"] = True
        if self.is_bound:
            indexes = [int(m[1]) for key in self.data if (m := _SHAPE_KEY.match(key))]
            shape_rows = max(indexes, default=-1) + 1
        self.shape_row_count = min(max(shape_rows, MIN_SHAPE_ROWS), MAX_SHAPE_ROWS)
        for i in range(self.shape_row_count):
            for part, maximum in (("utilization", 100), ("score", 10)):
                self.fields[f"shape_{i}_{part}"] = forms.IntegerField(
                    required=False,
                    min_value=0,
                    max_value=maximum,
                    label=f"point {i + 1} {part}",
                    widget=forms.NumberInput(attrs={"min": 0, "max": maximum, "class": "num"}),
                )

    def _default_new_plugins(self) -> None:
        """Posted from the knobs of another version (``shown_kubernetes_version``): a plugin that
        version's profile did not have had no box on the page, so it takes its default (on, its
        default weight) rather than reading as unchecked."""
        shown = str(self.data.get("shown_kubernetes_version") or self.version)
        if shown == self.version or shown not in KUBERNETES_VERSIONS:
            return
        shown_filters = set(filter_plugins(shown))
        shown_scores = {name for name, _ in score_plugins(shown)}
        data = self.data.copy()  # type: ignore[attr-defined]  # a QueryDict or a dict; the copy is mutable
        for name in self.filter_names:
            if name not in shown_filters:
                data[f"filter_{name}"] = "on"
        for name, default in self.score_defaults:
            if name not in shown_scores:
                data[f"score_{name}_on"] = "on"
                data[f"score_{name}_weight"] = str(default)
        self.data = data

    @classmethod
    def from_knobs(cls, knobs: Mapping[str, Any]) -> PolicyKnobsForm:
        """An unbound form showing these knobs (the shape spread over its rows)."""
        shape = list(knobs.get("shape") or [])
        initial = {key: value for key, value in knobs.items() if key != "shape"}
        for i, (utilization, score) in enumerate(shape):
            initial[f"shape_{i}_utilization"] = utilization
            initial[f"shape_{i}_score"] = score
        return cls(initial=initial, shape_rows=len(shape) + 1)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for i in range(self.shape_row_count):
            utilization = cleaned.get(f"shape_{i}_utilization")
            score = cleaned.get(f"shape_{i}_score")
            if (utilization is None) != (score is None) and not self.has_error(f"shape_{i}_utilization"):
                self.add_error(f"shape_{i}_utilization", f"Point {i + 1} needs both a utilization and a score.")
        return cleaned

    def knobs(self) -> dict[str, Any]:
        """The knobs (call after ``is_valid()``); blank shape rows are left out."""
        data = dict(self.cleaned_data)
        shape = []
        for i in range(self.shape_row_count):
            utilization = data.pop(f"shape_{i}_utilization", None)
            score = data.pop(f"shape_{i}_score", None)
            if utilization is not None and score is not None:
                shape.append([utilization, score])
        data["shape"] = shape
        data["extra_resource"] = (data.get("extra_resource") or "").strip()
        data["extra_weight"] = data.get("extra_weight") or 0
        data["kubernetes_version"] = data.get("kubernetes_version") or DEFAULT_KUBERNETES_VERSION
        if self.hints_lock:
            data["queueing_hints"] = True
        return data

    # For the template: the dynamic fields grouped as the page shows them.

    def gates(self) -> list[Any]:
        """The feature gates of the version shown (services.versions.Gate), for the list under the select."""
        return version_gates(self.version)

    def filter_fields(self) -> list[forms.BoundField]:
        return [self[f"filter_{name}"] for name in self.filter_names]

    def score_rows(self) -> list[tuple[str, int, forms.BoundField, forms.BoundField]]:
        return [
            (name, default, self[f"score_{name}_on"], self[f"score_{name}_weight"])
            for name, default in self.score_defaults
        ]

    def _fields(self, *names: str) -> list[forms.BoundField]:
        return [self[name] for name in names]

    def candidate_fields(self) -> list[forms.BoundField]:
        return self._fields("min_candidate_nodes_percentage", "min_candidate_nodes_absolute")

    def resource_fields(self) -> list[forms.BoundField]:
        return self._fields("cpu_weight", "memory_weight", "extra_resource", "extra_weight")

    def cycle_fields(self) -> list[forms.BoundField]:
        return self._fields("percentage_of_nodes_to_score", "pod_initial_backoff_seconds", "pod_max_backoff_seconds")

    def mode_fields(self) -> list[forms.BoundField]:
        return self._fields("queue_mode", "scheduler_mode", "tie_break", "bind_latency_ms")

    def shape_rows(self) -> list[tuple[int, forms.BoundField, forms.BoundField]]:
        return [(i + 1, self[f"shape_{i}_utilization"], self[f"shape_{i}_score"]) for i in range(self.shape_row_count)]


class PolicySaveForm(forms.Form):
    """Name, description, visibility and the document; the document is what is saved."""

    name = forms.CharField(
        max_length=120,
        required=False,
        validators=[VisibleName()],
        help_text="Leave empty to use the document's metadata.name.",
    )
    description = forms.CharField(
        required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}), label="Description"
    )
    visibility = visibility_field("policies")
    document = DocumentTextField(
        label="YAML",
        widget=forms.Textarea(attrs={"rows": 30, "spellcheck": "false", "autocomplete": "off", "wrap": "off"}),
    )

    def clean_document(self) -> str:
        text: str = self.cleaned_data["document"]
        error = too_big(text)
        if error:
            raise forms.ValidationError(f"The document {error}")
        return text
