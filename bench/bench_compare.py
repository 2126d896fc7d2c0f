"""How long a 4-policy comparison on a 500-node scenario takes, from the request to the last
run finished, through the web app's own services (store every event, snapshots, metrics).

Runs in the embedded mode (threads in one process, SQLite in a temporary directory) so it
needs no Redis; prints figures only. With REDIS_URL set and `make worker` running twice, the
same comparison runs on Celery workers (measured separately; see the closing notes).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

NODES, PODS = 500, 2000
POLICIES = ("default", "bin-packing", "no-preemption", "score-all-nodes")


def scenario_yaml(nodes: int, pods: int) -> str:
    """The benchmark workload (bench/workload.py's shapes) as a Scenario document."""
    import random

    rng = random.Random(1)
    lines = [
        "apiVersion: kubeviz.dev/v1",
        "kind: Scenario",
        "metadata: {name: bench-compare}",
        "spec:",
        "  seed: 1",
        "  nodes:",
    ]
    for i in range(nodes):
        cpu, mem = rng.choice(((8, 32), (16, 64), (32, 128)))
        zone = ("zone-a", "zone-b", "zone-c")[i % 3]
        taint = ", taints: [{key: dedicated, value: batch, effect: NoSchedule}]" if i % 10 == 0 else ""
        lines.append(
            f"    - {{name: node-{i:05d}, allocatable: {{cpu: '{cpu}', memory: {mem}Gi, pods: 110}}, "
            f"labels: {{topology.kubernetes.io/zone: {zone}}}{taint}}}"
        )
    lines.append("  objects:")
    for j in range(pods):
        cpu, mem = rng.choice((("100m", "256Mi"), ("250m", "512Mi"), ("500m", "1Gi"), ("1", "2Gi")))
        tol = (
            ", tolerations: [{key: dedicated, operator: Equal, value: batch, effect: NoSchedule}]"
            if j % 10 == 0
            else ""
        )
        container = f"{{name: c, image: 'app-{j % 50}:1', resources: {{requests: {{cpu: '{cpu}', memory: {mem}}}}}}}"
        lines.append(
            f"    - {{apiVersion: v1, kind: Pod, metadata: {{name: pod-{j:06d}, labels: {{app: app-{j % 50}}}}}, "
            f"spec: {{containers: [{container}]{tol}}}}}"
        )
    return "\n".join(lines) + "\n"


def engine_alone(text: str, policy_document: str) -> float:
    """One policy's run by the engine alone, from the document (what a worker does before storing)."""
    from kubeviz.web.services.engine import parse_policy, parse_scenario
    from scheduler_core.simulation.simulation import Simulation

    started = time.perf_counter()
    Simulation(parse_scenario(text, "bench-compare.yaml"), parse_policy(policy_document), 1).run()
    return time.perf_counter() - started


def setup_django(*, embedded: bool = True) -> None:
    """Django on a fresh SQLite file with runs in threads (``embedded``), else on the environment's
    DATABASE_URL and REDIS_URL (shared with Celery workers); migrated, built-ins loaded."""
    if embedded:
        tmp = tempfile.mkdtemp(prefix="kubeviz-bench-")
        os.environ["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
        os.environ["KUBEVIZ_RUN_MODE"] = "thread"
        os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kubeviz.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from kubeviz.web.services.builtins import load_builtins

    call_command("migrate", verbosity=0)
    load_builtins()


def main() -> None:
    setup_django(embedded=os.environ.get("KUBEVIZ_RUN_MODE") != "celery")
    from kubeviz.web.models import Policy, Run, RunStatus, Scenario
    from kubeviz.web.services.comparisons import create_comparison
    from kubeviz.web.services.engine import parse_scenario, scenario_preview

    text = scenario_yaml(NODES, PODS)
    parsed = parse_scenario(text, "bench-compare.yaml")
    Scenario.objects.filter(slug="bench-compare").delete()
    scenario = Scenario.objects.create(
        slug="bench-compare", name="bench-compare", document=text, builtin=False, preview=scenario_preview(parsed)
    )
    policies = [Policy.objects.get(slug=slug) for slug in POLICIES]
    slowest = max(engine_alone(text, policy.document) for policy in policies)
    started = time.perf_counter()
    comparison = create_comparison(scenario, policies, [1], None)
    created = time.perf_counter() - started
    run_ids = list(comparison.entries.values_list("run_id", flat=True))
    while Run.objects.filter(id__in=run_ids).exclude(status__in=[RunStatus.FINISHED, RunStatus.FAILED]).exists():
        time.sleep(0.5)
    total = time.perf_counter() - started
    runs = list(Run.objects.filter(id__in=run_ids))
    events = sum(r.last_seq + 1 for r in runs)
    failed = [r for r in runs if r.status == RunStatus.FAILED]
    mode = "Celery workers" if os.environ["KUBEVIZ_RUN_MODE"] == "celery" else "embedded mode (threads, SQLite)"
    print(f"comparison   {len(POLICIES)} policies × {NODES} nodes × {PODS} pods, {mode}")
    print(f"  request handled in {created:.1f}s; all runs finished {total:.1f}s after the request")
    print(f"  slowest single engine run (parse + simulate) {slowest:.1f}s; ratio {total / slowest:.2f}×")
    failures = f"; FAILED: {len(failed)}" if failed else ""
    print(f"  {events} events stored ({events / total:.0f} events/s across runs){failures}")


if __name__ == "__main__":
    main()
