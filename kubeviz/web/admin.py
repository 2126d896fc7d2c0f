from __future__ import annotations

from django.contrib import admin

from .models import Cluster, Comparison, ComparisonRun, Policy, Run, Scenario, Snapshot, TraceEvent


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("name", "owner", "visibility", "builtin", "created")


@admin.register(Scenario)
class ScenarioAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("name", "slug", "owner", "visibility", "builtin", "updated")
    list_filter = ("builtin", "visibility")
    search_fields = ("name", "slug", "description")


@admin.register(Policy)
class PolicyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("name", "slug", "owner", "visibility", "builtin", "updated")


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("id", "scenario", "policy", "seed", "status", "progress", "created")
    list_filter = ("status",)
    readonly_fields = ("summary", "metrics", "error")


@admin.register(TraceEvent)
class TraceEventAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("run", "seq", "t_ms", "type")
    list_filter = ("type",)


@admin.register(Snapshot)
class SnapshotAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("run", "seq", "t_ms")


class ComparisonRunInline(admin.TabularInline):  # type: ignore[type-arg]
    model = ComparisonRun
    extra = 0
    raw_id_fields = ("run",)


@admin.register(Comparison)
class ComparisonAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("id", "scenario", "seeds", "builtin_key", "owner", "created")
    list_filter = ("builtin_key",)
    readonly_fields = ("divergences",)
    inlines = (ComparisonRunInline,)


@admin.register(ComparisonRun)
class ComparisonRunAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("comparison", "column", "policy", "seed", "run")
    raw_id_fields = ("run", "comparison")
