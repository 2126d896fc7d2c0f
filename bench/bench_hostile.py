"""What a hostile document costs the process that serves it, measured where users send it.

Prints figures (never asserts them; the tests assert the refusals):

1. Web: a real daphne serving kubeviz (the command docker-compose.yml runs) on a fresh SQLite
   database; every document of tests/hostile.py's scenario corpus posted to the JSON API and to
   the upload page, the deep-nesting documents to the policy API and the cluster upload page too,
   and the largest document that is accepted (2 MiB, ~14,500 pods). For each: the answer, the
   CPU seconds of the daphne process (utime + stime from /proc) and its peak memory over what it
   held before (VmHWM, reset through /proc/<pid>/clear_refs), and the wall time.
2. DRA (tests/hostile_dra.py): each hostile object and selector once through the scenario API
   (a second door would find its selectors already compiled: the loader keeps them), a class of
   32 slow selectors new to each door (what the budget stops), and one slow selector aliased into
   1,000 classes (accepted: compiled once).
3. CLI: ``python -m scheduler_core simulate FILE`` on the deep-nesting documents and the largest
   accepted one: the child's CPU seconds and peak RSS, beside a trivial invocation's.

The budget is ``KUBEVIZ_READ_CPU_SECONDS`` (5 s): every figure should stay within it plus 1 s.
A request still running after BENCH_HOSTILE_TIMEOUT seconds (default 120) is given up and shown
as ">".
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.daphne_server import DaphneServer as Server  # noqa: E402
from tests.hostile import CLUSTER_CORPUS, POLICY_CORPUS, SCENARIO_CORPUS, Hostile  # noqa: E402
from tests.hostile_dra import ACCEPTED, ALIASED_COSTLY_SELECTOR, DRA_SCENARIO_CORPUS, costly_classes  # noqa: E402

TIMEOUT = float(os.environ.get("BENCH_HOSTILE_TIMEOUT", "120"))
DEEP = ("deep JSON, 8 KB", "deep JSON, 100 KB", "deep JSON, 2 MB")


def largest_accepted() -> Hostile:
    """A valid Scenario just under the 2 MiB limit: 50 nodes and as many small pods as fit."""
    lines = ["apiVersion: kubeviz.dev/v1", "kind: Scenario", "metadata: {name: largest}", "spec:", "  nodes:"]
    lines += [f'    - {{name: node-{i}, allocatable: {{cpu: "64", memory: 256Gi, pods: 500}}}}' for i in range(50)]
    lines.append("  objects:")
    pod = (
        "    - {apiVersion: v1, kind: Pod, metadata: {name: p%d}, spec: {containers: [{name: c, image: nginx,"
        " resources: {requests: {cpu: 10m}}}]}}"
    )
    size = sum(len(line) + 1 for line in lines)
    count = 0
    while size + len(pod % count) + 1 < 2 * 1024 * 1024 - 64:
        lines.append(pod % count)
        size += len(lines[-1]) + 1
        count += 1
    return Hostile(f"largest accepted ({count:,} pods)", "\n".join(lines) + "\n", "")


# -- the serving process ----------------------------------------------------------------


def web_rows(server: Server, largest: Hostile) -> list[tuple[str, str, str, float, int, float]]:
    rows = []
    deep = {
        kind: [h for h in corpus if h.name in DEEP]
        for kind, corpus in (("cluster", CLUSTER_CORPUS), ("policy", POLICY_CORPUS))
    }
    for hostile in [*SCENARIO_CORPUS, largest]:
        rows.append(
            (
                "scenario API",
                hostile.name,
                *server.measure(lambda h=hostile: server.api("/api/v1/scenarios/", {"text": h.text})),
            )
        )
        token = server.csrf("/scenarios/new/")
        form = {"name": "", "visibility": "public", "cluster": "", "csrfmiddlewaretoken": token}
        rows.append(
            (
                "scenario page",
                hostile.name,
                *server.measure(lambda h=hostile, f=form: server.open("/scenarios/new/", {**f, "text": h.text})),
            )
        )
    for hostile in deep["policy"]:
        rows.append(
            (
                "policy API",
                hostile.name,
                *server.measure(lambda h=hostile: server.api("/api/v1/policies/", {"document": h.text})),
            )
        )
    for hostile in deep["cluster"]:
        token = server.csrf("/clusters/new/")
        form = {"kind": "upload", "name": "", "visibility": "public", "csrfmiddlewaretoken": token}
        rows.append(
            (
                "cluster page",
                hostile.name,
                *server.measure(lambda h=hostile, f=form: server.open("/clusters/new/", {**f, "text": h.text})),
            )
        )
    return rows


def dra_rows(server: Server) -> list[tuple[str, str, str, float, int, float]]:
    """One row per DRA document, each selector new to the process where the figure is about compiling."""
    rows = []
    for hostile in [*DRA_SCENARIO_CORPUS, ALIASED_COSTLY_SELECTOR]:
        send = functools.partial(server.api, "/api/v1/scenarios/", {"text": hostile.text})
        rows.append(("scenario API", f"DRA: {hostile.name}"[:34], *server.measure(send)))
    for n, door in enumerate(("scenario API", "scenario page", "cluster page")):
        text = costly_classes(first=100_000 * (n + 1))
        if door == "scenario API":
            send = functools.partial(server.api, "/api/v1/scenarios/", {"text": text})
        else:
            path = "/scenarios/new/" if door == "scenario page" else "/clusters/new/"
            form = {"name": "", "visibility": "public", "csrfmiddlewaretoken": server.csrf(path), "text": text}
            form.update({"cluster": ""} if door == "scenario page" else {"kind": "upload"})
            send = functools.partial(server.open, path, form)
        rows.append((door, "DRA: 32 slow selectors (budget)", *server.measure(send)))
    aliased = {"text": ACCEPTED["a slow selector aliased into 1,000 classes"]}
    send = functools.partial(server.api, "/api/v1/scenarios/", aliased)
    rows.append(("scenario API", "DRA: slow selector in 1,000 classes", *server.measure(send)))
    return rows


# -- the CLI ------------------------------------------------------------------------------


def cli_row(workdir: Path, hostile: Hostile) -> tuple[str, float, int, float]:
    """(exit code, CPU s, peak RSS bytes, wall s) of ``simulate`` on ``hostile`` in a child process."""
    path = workdir / "hostile.yaml"
    path.write_text(hostile.text, encoding="utf-8", errors="surrogatepass")
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "scheduler_core", "simulate", str(path), "--no-progress", "--max-events", "1"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = started + TIMEOUT
    while True:  # wait4: this child's own CPU and peak memory
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            answer = f"exit {os.waitstatus_to_exitcode(status)}"
            break
        if time.perf_counter() > deadline:
            child.kill()
            pid, status, usage = os.wait4(child.pid, 0)
            answer = f">{TIMEOUT:g}s"
            break
        time.sleep(0.02)
    child.returncode = 0  # reaped here
    return answer, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, time.perf_counter() - started


def main() -> None:
    largest = largest_accepted()
    with tempfile.TemporaryDirectory(prefix="kubeviz-bench-hostile-") as tmp:
        workdir = Path(tmp)
        server = Server(workdir)
        try:
            rows = web_rows(server, largest) + dra_rows(server)
        finally:
            server.close()
        print("Hostile documents: cost to the serving process (daphne), budget KUBEVIZ_READ_CPU_SECONDS = 5 s")
        print(f"  {'door':14} {'document':34} {'answer':>7} {'CPU s':>7} {'peak MB':>8} {'wall s':>7}")
        for door, name, answer, cpu, peak, wall in rows:
            print(f"  {door:14} {name:34} {answer:>7} {cpu:7.2f} {peak / 1e6:8.1f} {wall:7.2f}")
        worst = max(rows, key=lambda row: row[3])
        print(f"  most CPU: {worst[3]:.2f} s ({worst[0]}, {worst[1]})")

        print("CLI: python -m scheduler_core simulate FILE (a child process each)")
        trivial = Hostile(
            "trivial (no document problems)",
            "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {name: t}\nspec: {}\n",
            "",
        )
        for hostile in [trivial, *[h for h in SCENARIO_CORPUS if h.name in DEEP], largest]:
            answer, cpu, peak, wall = cli_row(workdir, hostile)
            print(
                f"  {hostile.name:34} {answer:>8} CPU {cpu:6.2f} s  peak RSS {peak / 1e6:6.1f} MB  wall {wall:6.2f} s"
            )


if __name__ == "__main__":
    main()
