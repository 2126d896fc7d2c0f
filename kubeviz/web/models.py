"""What the web app stores: clusters, scenarios, policies, runs and each run's trace.

The database is the truth; the websocket only shows it live. A run's trace is stored as
rows ordered by ``seq`` (one per engine event) plus periodic snapshots of the whole view
state, so any moment can be shown again without rerunning the engine. Who may see, cancel,
fork or edit any of it is kubeviz/web/access.py's alone.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.urls import reverse

from .services.names import VisibleName


class Visibility(models.TextChoices):
    PUBLIC = "public", "Public"
    PRIVATE = "private", "Private"


class Cluster(models.Model):
    """Nodes, and the pods already running on them, for documents without nodes (docs/clusters.md).

    ``document`` is what scheduler_core.documents.load_cluster reads: kubectl's output, a
    Scenario document or Node manifests; ``summary`` keeps its counts for the list.
    """

    name = models.CharField(max_length=100, validators=[VisibleName()])
    description = models.TextField(blank=True)
    document = models.TextField(
        help_text="kubectl get nodes (and pods) -o yaml output, a kubeviz Scenario document or Node manifests."
    )
    summary = models.JSONField(default=dict, blank=True)  # nodes, zones, pods, cpu, memory
    # The file it was uploaded as: its page names the document's lines by it, as the upload did.
    source_name = models.CharField(max_length=200, default="cluster.yaml", validators=[VisibleName("file name")])
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE)
    visibility = models.CharField(max_length=10, choices=Visibility.choices, default=Visibility.PUBLIC)
    builtin = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-builtin", "name", "pk"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("cluster-detail", args=[self.pk])


class Scenario(models.Model):
    """An uploaded or built-in scenario document, validated by scheduler_core when saved."""

    slug = models.SlugField(max_length=120, unique=True)
    name = models.CharField(max_length=120, validators=[VisibleName()])
    description = models.TextField(blank=True)
    watch_for = models.JSONField(default=list, blank=True)
    document = models.TextField()
    source_name = models.CharField(max_length=200, default="scenario.yaml")
    cluster = models.ForeignKey(Cluster, null=True, blank=True, on_delete=models.SET_NULL)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE)
    visibility = models.CharField(max_length=10, choices=Visibility.choices, default=Visibility.PUBLIC)
    builtin = models.BooleanField(default=False)
    preview = models.JSONField(default=dict, blank=True)  # counts for the library cards
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-builtin", "name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("scenario-detail", args=[self.slug])


class Policy(models.Model):
    """A KubeSchedulerConfiguration or kubeviz Policy document, validated by scheduler_core."""

    slug = models.SlugField(max_length=120, unique=True)
    name = models.CharField(max_length=120, validators=[VisibleName()])
    description = models.TextField(blank=True)
    document = models.TextField()
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE)
    visibility = models.CharField(max_length=10, choices=Visibility.choices, default=Visibility.PUBLIC)
    builtin = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-builtin", "name"]
        verbose_name_plural = "policies"

    def __str__(self) -> str:
        return self.name


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Recording"
    FINISHED = "finished", "Finished"
    FAILED = "failed", "Failed"


class Run(models.Model):
    """One scenario × policy × seed, recorded once from start to end. Its id is the shareable URL.

    Watching is playback: every viewer moves a playhead of their own over the stored events,
    so nothing a viewer does is stored here. The owner's cancel (``stop_requested``) is the
    only control on the computation. A fork (``parent`` set) replays the parent's scenario and
    seed to event ``fork_seq`` under the parent's policy, applies ``fork_action`` and goes on
    under ``policy``.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="runs")
    policy = models.ForeignKey(Policy, on_delete=models.PROTECT, related_name="runs")
    # The cluster a scenario without nodes ran on (None when the scenario has nodes of its own).
    cluster = models.ForeignKey(Cluster, null=True, blank=True, on_delete=models.PROTECT, related_name="runs")
    seed = models.IntegerField(default=0)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.QUEUED)
    # The owner's cancel; the step loop reads it between batches.
    stop_requested = models.BooleanField(default=False)
    # What if? A run forked from ``parent`` at its event ``fork_seq`` with one action.
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="forks")
    fork_seq = models.IntegerField(null=True, blank=True)
    fork_action = models.JSONField(default=dict, blank=True)
    # Progress, written with each batch.
    steps = models.IntegerField(default=0)
    last_seq = models.IntegerField(default=-1)
    t_ms = models.BigIntegerField(default=0)
    progress = models.FloatField(default=0)
    detail = models.CharField(max_length=10, default="full")
    # The run's event cap when its requester's stored-events quota left less than
    # KUBEVIZ_RUN_MAX_EVENTS (services/quota.py); None: that setting. Kept so a resumed run
    # replays under the same cap.
    max_events = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    # Why the recording ended, as the engine's run_finished says it ("steady: ...", "time limit ...").
    end_reason = models.CharField(max_length=300, blank=True)
    # Who computes it: the executor holding ``lease`` writes ``heartbeat`` with every batch; a
    # run whose heartbeat goes stale is taken over (and resumed) or failed by the reaper.
    lease = models.CharField(max_length=40, blank=True)
    heartbeat = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # A hash of the client that asked for it (rate limits for visitors without an account).
    client_key = models.CharField(max_length=64, blank=True, db_index=True)
    # Built-in runs are computed once per scenario, policy, seed and engine version and shared.
    shared_key = models.CharField(max_length=200, null=True, blank=True, unique=True)
    summary = models.JSONField(default=dict, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.scenario} × {self.policy} (seed {self.seed})"

    def get_absolute_url(self) -> str:
        return reverse("run-detail", args=[self.id])

    @property
    def group_name(self) -> str:
        return f"run-{self.id}"

    @property
    def shown_error(self) -> str:
        """Why the run failed, as anyone who may see it is told: ``error`` up to its first blank line
        (runs failed before the rule kept a traceback after one; only the server log has it now)."""
        return self.error.split("\n\n", 1)[0]

    @property
    def done(self) -> bool:
        return self.status in (RunStatus.FINISHED, RunStatus.FAILED)


class TraceEvent(models.Model):
    """One engine event of a run, as the engine emitted it (``data`` is the whole event)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")
    seq = models.IntegerField()
    t_ms = models.BigIntegerField()
    type = models.CharField(max_length=40)
    data = models.JSONField()

    class Meta:
        ordering = ["seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="unique_event_seq")]
        indexes = [models.Index(fields=["run", "t_ms"], name="event_time")]


class Snapshot(models.Model):
    """The whole view state after event ``seq`` (scheduler_core.results.ViewState.as_dict())."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="snapshots")
    seq = models.IntegerField()
    t_ms = models.BigIntegerField()
    state = models.JSONField()

    class Meta:
        ordering = ["seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="unique_snapshot_seq")]


class Comparison(models.Model):
    """2–6 policies on one scenario, side by side: one run per policy × seed. Its id is the shareable URL."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="comparisons")
    seeds = models.JSONField(default=list)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    # Set for the built-in comparisons (one shared comparison per key, created on first visit).
    builtin_key = models.SlugField(max_length=80, unique=True, null=True, blank=True)
    # A hash of the client that asked for it (rate limits for visitors without an account).
    client_key = models.CharField(max_length=64, blank=True, db_index=True)
    # The attempts the first seed's runs decided differently, computed once every one of them is done.
    divergences = models.JSONField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.scenario} compared ({self.id})"

    def get_absolute_url(self) -> str:
        return reverse("compare-detail", args=[self.id])

    @property
    def group_name(self) -> str:
        return f"compare-{self.id}"


class ComparisonRun(models.Model):
    """One run of a comparison: its column (one per policy, in the order chosen) and its seed."""

    comparison = models.ForeignKey(Comparison, on_delete=models.CASCADE, related_name="entries")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="comparison_entries")
    policy = models.ForeignKey(Policy, on_delete=models.PROTECT, related_name="comparison_entries")
    seed = models.IntegerField()
    column = models.PositiveSmallIntegerField()
    # The column's heading when the policy's name will not do (a fork and its parent may share a policy).
    label = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["column", "seed"]
        constraints = [
            models.UniqueConstraint(fields=["comparison", "column", "seed"], name="unique_comparison_column_seed")
        ]


class Presentation(models.Model):
    """One presentation of present mode (kubeviz/web/playback/presenting.py): a presenter's playhead
    that whoever opens its link follows, on whichever web process their socket lands.

    The row is what every process reads: the recording it presents, who may take it back (a hash
    of the presenter's private token), where the presenter's playhead was at their last move, how
    many sockets present it now and when a presenter was last connected (refreshed while one is).
    The moves themselves travel on the channel layer, to a group per presentation; the row is
    how a process joining late, or one that missed a message, finds the presenter."""

    key = models.CharField(max_length=40, unique=True)  # public: the follow link's ?presenter=<key>
    token_hash = models.CharField(max_length=64, unique=True)  # sha256 of the presenter's private token
    recording = models.CharField(max_length=200)  # the hub's key: run:<id>, compare:<id>:<unit>
    client_key = models.CharField(max_length=64, db_index=True)  # limits' salted hash: address or user
    signed_in = models.BooleanField(default=False)  # started by a signed-in user (bound per user)
    position = models.BigIntegerField(default=0)
    playing = models.BooleanField(default=False)
    follow = models.BooleanField(default=False)
    speed = models.FloatField(default=2.0)
    moment = models.CharField(max_length=40, blank=True)  # a lesson's moment
    moved_at = models.FloatField(default=0.0)  # wall-clock seconds of the presenter's last move
    presenters = models.PositiveIntegerField(default=0)  # sockets presenting it now, on every process
    seen_at = models.DateTimeField(db_index=True)  # a presenter was last connected
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"presentation {self.key} of {self.recording}"
