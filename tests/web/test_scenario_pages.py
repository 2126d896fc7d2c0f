"""A scenario page's tables in pages of PAGE_SIZE rows: links with and without htmx, bad page numbers, the cache."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from kubeviz.web.models import Scenario
from kubeviz.web.services import scenarios as service
from kubeviz.web.services.scenarios import PAGE_SIZE, ScenarioDetail, detail_tables, page_url, requested_pages

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def empty_cache(settings: Any) -> None:
    """An empty in-memory cache of this file's own, whatever the settings configure."""
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "test-scenario-pages"}
    }
    cache.clear()


def big_document(nodes: int, pods: int = 0, timeline: str = "") -> str:
    """``nodes`` nodes n-000… from a node group and ``pods`` pods p-000… in spec.objects."""
    lines = [
        "apiVersion: kubeviz.dev/v1",
        "kind: Scenario",
        "metadata: {name: big}",
        "spec:",
        "  nodeGroups:",
        f"    - {{count: {nodes}, namePrefix: n-, template: {{allocatable: {{cpu: '8', memory: 32Gi}}}}}}",
        "  objects:" if pods else "  objects: []",
    ]
    lines += [
        f"    - {{apiVersion: v1, kind: Pod, metadata: {{name: p-{i:03d}}}, "
        "spec: {containers: [{name: c, image: 'web:1', resources: {requests: {cpu: 100m}}}]}}"
        for i in range(pods)
    ]
    return "\n".join(lines) + "\n" + timeline


def stored(document: str, slug: str = "big") -> Scenario:
    return Scenario.objects.create(slug=slug, name=slug, document=document, source_name=f"{slug}.yaml")


@pytest.fixture
def big() -> Scenario:
    """501 nodes (n-000 … n-500, eleven pages) and 120 pods (p-000 … p-119, three pages)."""
    return stored(big_document(501, 120))


def node_names(html: str) -> list[str]:
    return re.findall(r"<td><code>(n-\d+)</code>", html)


def pod_names(html: str) -> list[str]:
    return re.findall(r"<td><code>(p-\d+)</code>", html)


def page_links(html: str, table: str) -> list[str]:
    """The numbers of a table's page links, with "…" for gaps and [n] for the current page."""
    nav = re.search(rf'<nav class="pager" aria-label="Pages of {table}".*?</nav>', html, re.S)
    assert nav, f"no page links for {table}"
    items = re.findall(r'<a href="[^"]*" hx-get="[^"]*">(\d+)</a>|aria-current="page">(\d+)<|(…)', nav.group())
    return [link or (f"[{current}]" if current else gap) for link, current, gap in items]


# Pages without JavaScript


def test_first_page_shows_the_first_fifty_nodes_and_the_totals(client: Client, big: Scenario) -> None:
    """Page 1 lists n-000 … n-049, says which rows of how many, and links to page 2."""
    html = client.get(big.get_absolute_url()).content.decode()
    assert node_names(html) == [f"n-{i:03d}" for i in range(50)]
    assert "n-050" not in html
    assert "nodes 1–50 of 501" in html
    assert '<h2>Nodes <span class="muted count">501</span></h2>' in html
    assert '<a href="/scenarios/big/?nodes=2" hx-get="/scenarios/big/?nodes=2">2</a>' in html
    assert page_links(html, "nodes") == ["[1]", "2", "3", "…", "11"]
    assert pod_names(html) == [f"p-{i:03d}" for i in range(PAGE_SIZE)]
    assert "pods 1–50 of 120" in html


def test_second_page_shows_the_next_fifty_nodes(client: Client, big: Scenario) -> None:
    """?nodes=2 lists n-050 … n-099 and leaves the other tables on their first page."""
    html = client.get(big.get_absolute_url(), {"nodes": "2"}).content.decode()
    assert node_names(html) == [f"n-{i:03d}" for i in range(50, 100)]
    assert "nodes 51–100 of 501" in html
    assert page_links(html, "nodes") == ["1", "[2]", "3", "4", "…", "11"]
    assert pod_names(html)[0] == "p-000"


def test_the_last_page_holds_what_is_left(client: Client, big: Scenario) -> None:
    html = client.get(big.get_absolute_url(), {"nodes": "11", "objects": "3"}).content.decode()
    assert node_names(html) == ["n-500"]
    assert "nodes 501–501 of 501" in html
    assert pod_names(html) == [f"p-{i:03d}" for i in range(100, 120)]
    assert "pods 101–120 of 120" in html


def test_each_tables_links_keep_the_other_tables_page(client: Client, big: Scenario) -> None:
    """Without JavaScript every link carries every table's page, so paging one leaves the others be."""
    html = client.get(big.get_absolute_url(), {"nodes": "4", "objects": "2"}).content.decode()
    assert node_names(html)[0] == "n-150"
    assert pod_names(html)[0] == "p-050"
    assert 'href="/scenarios/big/?nodes=5&amp;objects=2" hx-get="/scenarios/big/?nodes=5"' in html
    assert 'href="/scenarios/big/?nodes=4" hx-get="/scenarios/big/?objects=1"' in html  # back to the first pods
    assert 'href="/scenarios/big/?objects=2" hx-get="/scenarios/big/?nodes=1"' in html


def test_summary_counts_and_the_run_form_stay_on_every_page(client: Client, big: Scenario) -> None:
    html = client.get(big.get_absolute_url(), {"nodes": "7"}).content.decode()
    assert '<span class="muted count">501</span>' in html
    assert '<span class="muted count">120</span>' in html
    assert 'name="scenario" value="big"' in html


def test_a_short_table_has_no_page_links(client: Client) -> None:
    scenario = stored(big_document(3, 2), slug="small")
    html = client.get(scenario.get_absolute_url()).content.decode()
    assert node_names(html) == ["n-0", "n-1", "n-2"]
    assert 'class="pager"' not in html
    assert "1–3 of 3" not in html


# Pages with htmx


def test_an_htmx_page_link_gets_only_that_tables_section(client: Client, big: Scenario) -> None:
    """The nodes section alone comes back, and the browser's address becomes the full page's."""
    response = client.get(big.get_absolute_url(), {"nodes": "2"}, headers={**HTMX, "HX-Target": "scenario-nodes"})
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<section class="panel table-panel" id="scenario-nodes">')
    assert html.rstrip().endswith("</section>")
    assert "<html" not in html
    assert "scenario-objects" not in html
    assert "run-form" not in html
    assert node_names(html) == [f"n-{i:03d}" for i in range(50, 100)]
    assert "nodes 51–100 of 501" in html
    assert 'hx-target="#scenario-nodes" hx-swap="outerHTML"' in html
    assert response["HX-Push-Url"] == "/scenarios/big/?nodes=2"
    assert "HX-Target" in response["Vary"]


def test_an_htmx_page_link_keeps_the_other_tables_page_from_the_address_bar(client: Client, big: Scenario) -> None:
    """The link names only its own page; the pods page the address bar shows stays in links and history."""
    headers = {**HTMX, "HX-Target": "scenario-nodes", "HX-Current-URL": "https://example.org/scenarios/big/?objects=3"}
    response = client.get(big.get_absolute_url(), {"nodes": "2"}, headers=headers)
    assert response["HX-Push-Url"] == "/scenarios/big/?nodes=2&objects=3"
    assert 'href="/scenarios/big/?nodes=3&amp;objects=3" hx-get="/scenarios/big/?nodes=3"' in response.content.decode()


def test_an_htmx_page_link_for_the_pods_gets_the_pods_section(client: Client, big: Scenario) -> None:
    response = client.get(big.get_absolute_url(), {"objects": "3"}, headers={**HTMX, "HX-Target": "scenario-objects"})
    html = response.content.decode()
    assert html.lstrip().startswith('<section class="panel table-panel" id="scenario-objects">')
    assert pod_names(html) == [f"p-{i:03d}" for i in range(100, 120)]
    assert not node_names(html)


@pytest.mark.parametrize(
    "headers",
    [
        {**HTMX, "HX-Target": "main"},
        {**HTMX},
        {**HTMX, "HX-Target": "scenario-nodes", "HX-History-Restore-Request": "true"},
    ],
    ids=[
        "an htmx request aimed at anything but a table gets the whole page",
        "an htmx request without a target gets the whole page",
        "restoring history after a page link gets the whole page",
    ],
)
def test_other_htmx_requests_get_the_whole_page(client: Client, big: Scenario, headers: dict[str, str]) -> None:
    html = client.get(big.get_absolute_url(), {"nodes": "2"}, headers=headers).content.decode()
    assert "<html" in html
    assert node_names(html)[0] == "n-050"


# Bad page numbers


@pytest.mark.parametrize(
    ("query", "first_node"),
    [
        ({"nodes": "-1"}, "n-000"),
        ({"nodes": "0"}, "n-000"),
        ({"nodes": "12"}, "n-500"),
        ({"nodes": "99999999999999999999"}, "n-500"),
        ({"nodes": ""}, "n-000"),
        ({"nodes": " 3 "}, "n-100"),
        ({"nodes[]": "4", "q": "x"}, "n-000"),
    ],
    ids=[
        "a negative page is the first page",
        "page zero is the first page",
        "a page past the end is the last page",
        "a huge page number is the last page",
        "an empty page parameter is the first page",
        "spaces around the number are ignored",
        "parameters that are not a table's are ignored",
    ],
)
def test_out_of_range_pages_are_clamped(client: Client, big: Scenario, query: dict[str, str], first_node: str) -> None:
    response = client.get(big.get_absolute_url(), query)
    assert response.status_code == 200
    assert node_names(response.content.decode())[0] == first_node


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"nodes": "abc"}, "?nodes="),
        ({"nodes": "1.5"}, "?nodes="),
        ({"objects": "two"}, "?objects="),
        ({"timeline": "9" * 5000}, "?timeline="),
    ],
    ids=[
        "letters are not a page",
        "a fraction is not a page",
        "the pods table's parameter is checked too",
        "a number too long to read is refused, not a server error",
    ],
)
def test_a_page_that_is_not_a_number_is_a_400_naming_the_parameter(
    client: Client, big: Scenario, query: dict[str, str], named: str
) -> None:
    for headers in ({}, {**HTMX, "HX-Target": "scenario-nodes"}):
        response = client.get(big.get_absolute_url(), query, headers=headers)
        assert response.status_code == 400
        assert response["Content-Type"].startswith("text/plain")
        assert named in response.content.decode()
        assert "page number" in response.content.decode()


def test_a_bad_page_in_the_address_bar_does_not_break_an_htmx_page_link(client: Client, big: Scenario) -> None:
    headers = {**HTMX, "HX-Target": "scenario-nodes", "HX-Current-URL": "http://testserver/scenarios/big/?objects=x"}
    response = client.get(big.get_absolute_url(), {"nodes": "2"}, headers=headers)
    assert response.status_code == 200
    assert response["HX-Push-Url"] == "/scenarios/big/?nodes=2"


# Big scenarios


def test_a_5000_node_scenario_renders_one_page_of_fifty_node_rows(client: Client) -> None:
    scenario = stored(big_document(5000), slug="huge")
    response = client.get(scenario.get_absolute_url(), {"nodes": "37"})
    html = response.content.decode()
    assert response.status_code == 200
    assert node_names(html) == [f"n-{i:04d}" for i in range(1800, 1850)]
    assert html.count("<tr>") == 50 + 1  # the rows and the header
    assert "nodes 1801–1850 of 5000" in html
    assert page_links(html, "nodes") == ["1", "…", "35", "36", "[37]", "38", "39", "…", "100"]


def test_the_document_is_parsed_once_for_every_page_of_it(
    client: Client, big: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Paging (with or without htmx) reads the parsed rows from the cache."""
    parses: list[str] = []
    parse_stored = service.parse_stored

    def counting(scenario: Scenario, cluster: Any = None) -> Any:
        parses.append(scenario.slug)
        return parse_stored(scenario, cluster)

    monkeypatch.setattr(service, "parse_stored", counting)
    client.get(big.get_absolute_url())
    client.get(big.get_absolute_url(), {"nodes": "2"})
    client.get(big.get_absolute_url(), {"objects": "3"}, headers={**HTMX, "HX-Target": "scenario-objects"})
    assert parses == ["big"]


def test_a_changed_document_is_parsed_again(client: Client, big: Scenario) -> None:
    client.get(big.get_absolute_url())
    big.document = big_document(2)
    big.save()
    html = client.get(big.get_absolute_url()).content.decode()
    assert node_names(html) == ["n-0", "n-1"]


def test_a_timeline_action_creating_many_pods_names_ten(client: Client) -> None:
    create = "  timeline:\n    - at: 10s\n      action: create\n      objects:\n" + "".join(
        f"        - {{apiVersion: v1, kind: Pod, metadata: {{name: late-{i:02d}}}, "
        "spec: {containers: [{name: c, image: 'x:1'}]}}\n"
        for i in range(25)
    )
    scenario = stored(big_document(1, timeline=create), slug="late")
    html = client.get(scenario.get_absolute_url()).content.decode()
    assert "Pod late-09" in html
    assert "Pod late-10" not in html
    assert "… and 15 more" in html


# The service alone


@pytest.mark.parametrize(
    ("number", "total_rows", "links"),
    [
        (1, 50, []),
        (1, 51, ["[1]", "2"]),
        (3, 350, ["1", "2", "[3]", "4", "5", "6", "7"]),
        (1, 5000, ["[1]", "2", "3", "…", "100"]),
        (5, 5000, ["1", "2", "3", "4", "[5]", "6", "7", "…", "100"]),
        (50, 5000, ["1", "…", "48", "49", "[50]", "51", "52", "…", "100"]),
        (100, 5000, ["1", "…", "98", "99", "[100]"]),
    ],
    ids=[
        "one page has no links",
        "a 51st row makes a second page",
        "seven pages are all linked",
        "the first page links its neighbours and the last",
        "a gap of one page shows the page instead of an ellipsis",
        "a middle page links the first, its neighbours and the last",
        "the last page links the first and its neighbours",
    ],
)
def test_page_links(number: int, total_rows: int, links: list[str]) -> None:
    detail = ScenarioDetail(rows={"nodes": [{}] * total_rows})
    page = detail_tables(detail, {"nodes": number}, "/s/").nodes
    shown = [] if page.num_pages == 1 else page.links
    assert [("…" if link is None else f"[{link.number}]" if link.current else str(link.number)) for link in shown] == (
        links
    )


def test_page_urls_leave_first_pages_out_and_keep_table_order() -> None:
    assert page_url("/s/", {}) == "/s/"
    assert page_url("/s/", {"nodes": 1, "timeline": 1}) == "/s/"
    assert page_url("/s/", {"timeline": 2, "objects": 3, "nodes": 4}) == "/s/?nodes=4&objects=3&timeline=2"


def test_requested_pages_reads_whole_numbers_only() -> None:
    assert requested_pages({"nodes": "2", "objects": "-4", "other": "x"}) == {"nodes": 2, "objects": -4}
    with pytest.raises(service.BadPage, match=r"\?workloads= takes a page number"):
        requested_pages({"workloads": "2a"})
    assert requested_pages({"workloads": "2a", "nodes": "3"}, strict=False) == {"nodes": 3}


def test_the_page_shows_the_loaders_warnings(client: Client) -> None:
    """A scenario that loads but cannot run as meant says why, with the line (Scenario.warnings)."""
    pinned = stored(
        "kind: Node\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: p}\n"
        "spec: {nodeName: b, containers: [{name: c}]}\n",
        slug="pinned",
    )
    html = client.get(pinned.get_absolute_url()).content.decode()
    assert "1 warning" in html
    assert "pinned.yaml:6 spec.nodeName: node &quot;b&quot; is not in the scenario; the pod will never run" in html


def test_a_scenario_without_warnings_shows_none(client: Client, big: Scenario) -> None:
    assert "load-warnings" not in client.get(big.get_absolute_url()).content.decode()


def test_a_scenario_page_reads_under_the_cpu_budget(client: Client, settings: Any) -> None:
    """A stored document that has become too expensive to read shows the problem instead of holding the page."""
    settings.KUBEVIZ_READ_CPU_SECONDS = 1e-9
    slow = stored(big_document(10, pods=300), slug="slow")
    html = client.get(slow.get_absolute_url()).content.decode()
    assert "This scenario no longer loads" in html
    assert "gave up after 1e-09 s of CPU time" in html
    settings.KUBEVIZ_READ_CPU_SECONDS = 5
    html = client.get(slow.get_absolute_url()).content.decode()  # the refusal was not cached
    assert "This scenario no longer loads" not in html
    assert "<code>p-000</code>" in html
