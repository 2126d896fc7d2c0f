"""Private stays private: runs and comparisons that use a private policy or scenario, or descend
from a run that does, are seen by their owner only — on every page, list, export and websocket.

Alice keeps a policy and a scenario private and uses them in runs, forks and comparisons; Bob,
a staff member and an anonymous visitor get 404 from every URL of those (the websocket refuses
them), and the private policy's name is in nothing they can fetch. Alice gets every one of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse

from kubeviz.web import access
from kubeviz.web.models import Comparison, Policy, Run, Scenario, TraceEvent, Visibility
from kubeviz.web.playback.consumers.base import CLOSE_FORBIDDEN
from kubeviz.web.routing import websocket_urlpatterns
from kubeviz.web.services import comparisons, dispatch
from kubeviz.web.services.builtins import load_builtins
from kubeviz.web.services.forks import ForkError, create_fork
from kubeviz.web.services.runner import step_loop
from kubeviz.web.services.shared_runs import scenario_seed

SECRET_POLICY = "Alices Secret Policy"
SECRET_POLICY_SLUG = "alice-secret-policy"
SECRET_SCENARIO = "Alices Hidden Scenario"
PASSWORD = "correct-horse-battery-9"


@dataclass
class World:
    """Alice's private things and everything made with them; ``public`` is what Bob may see."""

    alice: Any
    bob: Any
    staff: Any
    private_runs: dict[str, Run] = field(default_factory=dict)
    private_comparisons: dict[str, Comparison] = field(default_factory=dict)
    public_run: Run | None = None
    public_comparison: Comparison | None = None


def record(run: Run) -> Run:
    step_loop(run.id, lambda group, message: None)
    run.refresh_from_db()
    assert run.status == "finished", run.error
    return run


def compare(scenario: Scenario, policies: list[str], owner: Any) -> Comparison:
    chosen = [Policy.objects.get(slug=slug) for slug in policies]
    made = comparisons.create_comparison(scenario, chosen, [scenario_seed(scenario)], owner)
    for run in Run.objects.filter(comparison_entries__comparison=made):
        record(run)
    return made


def build_world() -> World:
    """Everything recorded synchronously (runs started by the services are not started)."""
    load_builtins()
    users = get_user_model().objects
    world = World(
        alice=users.create_user(username="alice", password=PASSWORD),
        bob=users.create_user(username="bob", password=PASSWORD),
        staff=users.create_user(username="root", password=PASSWORD, is_staff=True),
    )
    builtin = Scenario.objects.get(slug="preemption-basics")
    default = Policy.objects.get(slug="default")
    secret = Policy.objects.create(
        slug=SECRET_POLICY_SLUG,
        name=SECRET_POLICY,
        document=Policy.objects.get(slug="bin-packing").document,
        owner=world.alice,
        visibility=Visibility.PRIVATE,
    )
    hidden = Scenario.objects.create(
        slug="alice-hidden",
        name=SECRET_SCENARIO,
        document=builtin.document,
        source_name=builtin.source_name,
        owner=world.alice,
        visibility=Visibility.PRIVATE,
    )
    original = dispatch.start_run
    dispatch.start_run = lambda run: None  # type: ignore[assignment]
    try:
        runs = world.private_runs
        runs["private policy"] = record(Run.objects.create(scenario=builtin, policy=secret, seed=3, owner=world.alice))
        runs["private scenario"] = record(
            Run.objects.create(scenario=hidden, policy=default, seed=3, owner=world.alice)
        )
        world.public_run = record(Run.objects.create(scenario=builtin, policy=default, seed=3, owner=world.alice))
        switched = create_fork(world.public_run, world.alice, 20, {"action": "switchPolicy", "policy": secret.slug})
        runs["fork switching to the private policy"] = record(switched.run)
        back = create_fork(runs["private policy"], world.alice, 20, {"action": "switchPolicy", "policy": "spread"})
        runs["fork of a private-policy run onto a public policy"] = record(back.run)
        grandchild = create_fork(back.run, world.alice, 25, {"action": "cordon", "target": first_node(back.run)})
        runs["fork of that fork"] = record(grandchild.run)
        comps = world.private_comparisons
        comps["comparison with the private policy"] = compare(builtin, ["default", secret.slug], world.alice)
        comps["comparison of the private scenario"] = compare(hidden, ["default", "spread"], world.alice)
        comps["fork comparison with the private policy"] = switched.comparison
        comps["fork comparison of a private-policy parent"] = back.comparison
        world.public_comparison = compare(builtin, ["default", "spread"], world.alice)
    finally:
        dispatch.start_run = original  # type: ignore[assignment]
    return world


def first_node(run: Run) -> str:
    row = TraceEvent.objects.filter(run=run, type="node_added").order_by("seq").first()
    assert row is not None
    return str(row.data["node"])


def run_urls(run: Run) -> list[tuple[str, str]]:
    """(method, url) of every endpoint that takes a run id."""
    detail = reverse("run-detail", args=[run.id])
    events = reverse("run-events", args=[run.id])
    return [
        ("get", detail),
        ("get", f"{detail}?seq=5"),
        ("get", reverse("run-node", args=[run.id]) + f"?name={first_node(run)}&seq=5"),
        ("get", events),
        ("get", f"{events}?after=0&limit=10"),
        ("post", reverse("run-fork", args=[run.id])),
    ]


def comparison_urls(comparison: Comparison) -> list[tuple[str, str]]:
    detail = reverse("compare-detail", args=[comparison.id])
    return [
        ("get", detail),
        ("get", f"{detail}?t_ms=1000"),
        ("get", reverse("compare-csv", args=[comparison.id])),
        ("get", reverse("compare-json", args=[comparison.id])),
    ]


def private_urls(world: World) -> list[tuple[str, str, str]]:
    urls = [(name, *u) for name, run in world.private_runs.items() for u in run_urls(run)]
    return urls + [(name, *u) for name, c in world.private_comparisons.items() for u in comparison_urls(c)]


def fetch(client: Client, method: str, url: str) -> Any:
    if method == "post":
        return client.post(url, {"seq": "20", "action": "cordon", "target": "nothing"})
    return client.get(url)


def body(response: Any) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


PUBLIC_PAGES = [
    ("run list", "run-list", []),
    ("comparison list", "compare-list", []),
    ("compare form", "compare-new", []),
    ("scenario library", "home", []),
    ("policy list", "policy-list", []),
    ("the built-in scenario's page", "scenario-detail", ["preemption-basics"]),
]


@pytest.fixture
def world(db: None, settings: Any) -> World:
    settings.KUBEVIZ_RUN_MODE = "thread"
    return build_world()


@pytest.fixture(params=["bob", "staff", "anonymous"])
def stranger(request: pytest.FixtureRequest, world: World, client: Client) -> Client:
    """A client that is not Alice: another user, a staff member, a visitor without an account."""
    if request.param != "anonymous":
        client.force_login(getattr(world, request.param))
    return client


def test_strangers_get_404_from_every_url_of_a_private_run_or_comparison(world: World, stranger: Client) -> None:
    for name, method, url in private_urls(world):
        assert fetch(stranger, method, url).status_code == 404, f"{name}: {method} {url}"


def test_the_owner_gets_every_one_of_them(world: World, client: Client) -> None:
    """The same URLs answer Alice, so the 404s above come from the rule, not from broken URLs."""
    client.force_login(world.alice)
    for name, method, url in private_urls(world):
        if method == "get":
            assert client.get(url).status_code == 200, f"{name}: {url}"
    html = client.get(reverse("run-list")).content.decode()
    for name, run in world.private_runs.items():
        assert run.get_absolute_url() in html, f"Alice's own run list shows the {name}"
    assert SECRET_POLICY in html


def test_the_private_policy_is_in_nothing_a_stranger_can_fetch(world: World, stranger: Client) -> None:
    """Lists, pages and exports: neither the name nor the slug, nor any private run's id."""
    fetched = []
    for _name, route, args in PUBLIC_PAGES:
        response = stranger.get(reverse(route, args=args))
        assert response.status_code == 200, route
        fetched.append((route, body(response)))
    assert world.public_run is not None
    assert world.public_comparison is not None
    for method, url in run_urls(world.public_run)[:-1] + comparison_urls(world.public_comparison):
        response = fetch(stranger, method, url)
        assert response.status_code == 200, url
        fetched.append((url, body(response)))
    for where, text in fetched:
        assert SECRET_POLICY not in text, where
        assert SECRET_POLICY_SLUG not in text, where
        assert SECRET_SCENARIO not in text, where
        for run in world.private_runs.values():
            assert str(run.id) not in text, f"{where} names a private run"
        for comparison in world.private_comparisons.values():
            assert str(comparison.id) not in text, f"{where} names a private comparison"


def test_public_runs_of_signed_in_users_stay_listed(world: World, client: Client) -> None:
    """The rule hides what is private, not everything Alice made."""
    assert world.public_run is not None
    assert world.public_comparison is not None
    client.force_login(world.bob)
    assert world.public_run.get_absolute_url() in client.get(reverse("run-list")).content.decode()
    assert world.public_comparison.get_absolute_url() in client.get(reverse("compare-list")).content.decode()


def test_the_rule_in_sql_agrees_with_each_object_check(world: World) -> None:
    """visible_runs filters in the database; can_see_run asks it about one run: same answers."""
    everyone = [world.alice, world.bob, world.staff, AnonymousUser(), None]
    for user in everyone:
        visible = set(access.visible_runs(user).values_list("id", flat=True))
        for run in Run.objects.all():
            assert access.can_see_run(run, user) == (run.id in visible)
        shown = set(access.visible_comparisons(user).values_list("id", flat=True))
        for comparison in Comparison.objects.all():
            assert access.can_see_comparison(comparison, user) == (comparison.id in shown)
    hidden = {r.id for r in world.private_runs.values()}
    assert hidden.isdisjoint(access.visible_runs(world.bob).values_list("id", flat=True))
    assert hidden <= set(access.visible_runs(world.alice).values_list("id", flat=True))


def test_a_policy_made_private_later_hides_the_runs_that_used_it(world: World) -> None:
    """Visibility is read when asked, not copied into the run: the rule follows the policy."""
    assert world.public_run is not None
    spread = Policy.objects.get(slug="spread")
    Policy.objects.filter(id=spread.id).update(builtin=False, owner=world.alice, visibility=Visibility.PRIVATE)
    comparison = world.public_comparison
    assert comparison is not None
    assert not access.can_see_comparison(comparison, world.bob)
    assert access.can_see_comparison(comparison, world.alice)


def test_forks_deeper_than_the_rule_follows_are_refused(world: World) -> None:
    run = world.private_runs["fork of that fork"]
    depth = access.fork_depth(run)
    assert depth == 2
    original = dispatch.start_run
    dispatch.start_run = lambda run: None  # type: ignore[assignment]
    try:
        for _ in range(access.MAX_FORK_DEPTH - depth):
            run = record(create_fork(run, world.alice, 20, {"action": "cordon", "target": first_node(run)}).run)
        assert access.fork_depth(run) == access.MAX_FORK_DEPTH
        assert access.can_see_run(run, world.alice)
        assert not access.can_see_run(run, world.bob)
        with pytest.raises(ForkError, match="forks deep, the most there can be"):
            create_fork(run, world.alice, 20, {"action": "cordon", "target": first_node(run)})
    finally:
        dispatch.start_run = original  # type: ignore[assignment]


# The websockets


async def _refused(path: str, user: Any) -> int:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    communicator.scope["user"] = user
    connected, code = await communicator.connect(timeout=10)
    if connected:
        await communicator.disconnect()
        return 0
    return int(code)


@pytest.mark.django_db(transaction=True)
async def test_the_websockets_refuse_strangers_and_admit_the_owner() -> None:
    world = await database_sync_to_async(build_world)()
    paths = [f"/ws/runs/{run.id}/" for run in world.private_runs.values()]
    paths += [f"/ws/compare/{c.id}/" for c in world.private_comparisons.values()]
    for path in paths:
        for user in (world.bob, world.staff, AnonymousUser()):
            assert await _refused(path, user) == CLOSE_FORBIDDEN, (path, user)
        assert await _refused(path, world.alice) == 0, path
