"""The web's floors: ``services/`` below, ``playback/`` above it, and nothing pointing back.

``kubeviz/web/services/`` computes and stores runs and answers the pages' questions;
``kubeviz/web/playback/`` watches what is stored (recordings, frames and their rendering, the
node view and grid, playheads, the hub, the websocket consumers). Playback imports services;
no module of services imports playback, directly or through another module of the web
(docs/architecture.md, "Where each job lives").

Before playback was one package, the two halves of it imported each other across ``services/``:
``services/recording.py`` imported ``run_frames.py`` (to render a frame), which imported
``services/playhead.py``, and ``services/compare_recording.py`` imported ``hub.py``, which
imported ``services/playhead.py``. The checks below see that layout for what it was: a module
outside ``services/`` that ``services/`` imports and that imports ``services/`` back.

Every ``.py`` file under ``kubeviz/web`` is parsed with :mod:`ast` (the graph of
``tests/core/test_import_cycles.py``: every import counts, inside functions and under
``if TYPE_CHECKING:`` too).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from pathlib import Path

from tests.core.test_import_cycles import ROOT, cycles, import_graph

WEB = "kubeviz.web"
SERVICES = f"{WEB}.services"
PLAYBACK = f"{WEB}.playback"

# Web modules outside services/ that services import and that import services back. They sit
# beside services, not above it; the list only shrinks.
BOTH_WAYS = {
    f"{WEB}.models": "the models' name fields validate with services/names.py",
    f"{WEB}.tasks": "the Celery task runs services/runner.py, and services/dispatch.py queues it",
}


def web_modules(root: Path) -> dict[str, Path]:
    """Every module under ``root/kubeviz/web`` (migrations left out), by dotted name."""
    modules: dict[str, Path] = {}
    for path in sorted((root / "kubeviz" / "web").rglob("*.py")):
        if "migrations" in path.parts:
            continue
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def web_graph(root: Path = ROOT) -> dict[str, set[str]]:
    return import_graph(web_modules(root))


def inside(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def services_reach_playback(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """For each playback module some services module reaches, one shortest import path to it."""
    came_from: dict[str, str | None] = {m: None for m in graph if inside(m, SERVICES)}
    queue = deque(sorted(came_from))
    found: list[list[str]] = []
    while queue:
        module = queue.popleft()
        if inside(module, PLAYBACK):
            path = [module]
            while (before := came_from[path[-1]]) is not None:
                path.append(before)
            found.append(path[::-1])
            continue
        for target in sorted(graph.get(module, ())):
            if target not in came_from:
                came_from[target] = module
                queue.append(target)
    return sorted(found)


def imported_both_ways(graph: Mapping[str, set[str]]) -> dict[str, list[str]]:
    """Web modules outside services/ that services import and that import services back: each
    with the services modules importing it."""
    found: dict[str, list[str]] = {}
    for module, targets in graph.items():
        if not inside(module, SERVICES):
            continue
        for target in targets:
            if inside(target, SERVICES) or not any(inside(back, SERVICES) for back in graph.get(target, ())):
                continue
            found.setdefault(target, []).append(module)
    return {target: sorted(importers) for target, importers in sorted(found.items())}


def floors(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """The graph with services/ one node and playback/ one node, every other module as itself."""

    def node(module: str) -> str:
        for package in (SERVICES, PLAYBACK):
            if inside(module, package):
                return package
        return module

    collapsed: dict[str, set[str]] = {}
    for module, targets in graph.items():
        edges = collapsed.setdefault(node(module), set())
        edges.update(node(t) for t in targets if node(t) != node(module))
    return collapsed


def playback_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The import cycles of :func:`floors` that playback is part of."""
    return [cycle for cycle in cycles(floors(graph)) if PLAYBACK in cycle]


def _tree(root: Path, files: Mapping[str, str]) -> Path:
    for name, source in files.items():
        path = root / "kubeviz" / "web" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return root


def test_the_checks_see_the_layout_playback_had_before(tmp_path: Path) -> None:
    """services/recording.py importing run_frames.py, which imports services/playhead.py."""
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "models.py": "",
            "run_frames.py": "from .services.playhead import Timeline\nfrom .models import Run\n",
            "services/__init__.py": "",
            "services/playhead.py": "",
            "services/recording.py": "from ..run_frames import render_frame\nfrom ..models import Run\n",
        },
    )
    assert imported_both_ways(web_graph(root)) == {f"{WEB}.run_frames": [f"{SERVICES}.recording"]}


def test_the_checks_see_services_importing_playback(tmp_path: Path) -> None:
    """Directly, or through a module of the web outside both (and then playback is in a cycle)."""
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "helpers.py": "def f():\n    from .playback import frames\n",
            "playback/__init__.py": "",
            "playback/frames.py": "from ..services import lessons\n",
            "playback/playhead.py": "",
            "services/__init__.py": "",
            "services/lessons.py": "from ..helpers import f\n",
            "services/recording.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from ..playback.playhead import Timeline\n",
        },
    )
    graph = web_graph(root)
    assert services_reach_playback(graph) == [
        [f"{SERVICES}.lessons", f"{WEB}.helpers", f"{PLAYBACK}.frames"],
        [f"{SERVICES}.recording", f"{PLAYBACK}.playhead"],
    ]
    assert playback_cycles(graph) == [sorted([f"{WEB}.helpers", PLAYBACK, SERVICES])]


def test_nothing_under_services_imports_playback() -> None:
    found = services_reach_playback(web_graph())
    assert not found, "services/ reaches playback/:\n" + "\n".join(" -> ".join(path) for path in found)


def test_services_import_no_web_module_that_imports_them_back() -> None:
    found = imported_both_ways(web_graph())
    unlisted = {target: importers for target, importers in found.items() if target not in BOTH_WAYS}
    assert not unlisted, f"imported by services/ and importing services/ back: {unlisted}"
    gone = sorted(set(BOTH_WAYS) - set(found))
    assert not gone, f"no longer imported both ways, take them off BOTH_WAYS: {gone}"


def test_playback_is_one_package_in_no_import_cycle() -> None:
    graph = web_graph()
    assert PLAYBACK in graph, "kubeviz/web/playback/ is the web's playback"
    found = playback_cycles(graph)
    assert not found, "playback/ is in an import cycle: " + "; ".join(" <-> ".join(c) for c in found)
