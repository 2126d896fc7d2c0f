"""The glossary (services/glossary.py, /glossary/, docs/glossary.md), the run page's term
tooltips and legend, and the data attributes the lesson player finds things by."""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from kubeviz.web.models import Policy, Run, Scenario, TraceEvent
from kubeviz.web.services import glossary
from kubeviz.web.services.runner import step_loop

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
TERM_LINK = re.compile(r'<a class="term" data-term="([^"]+)" href="([^"]+)">')
TERM_ATTR = re.compile(r'data-term="([^"]+)"')
GLOSSARY_JSON = re.compile(r'<script id="glossary-terms" type="application/json">(.*?)</script>', re.S)

# The words the issue asks the glossary to explain, by slug.
REQUIRED = (
    "activeq", "backoffq", "unschedulable-pods", "backoff", "flush", "leftover", "cluster-event", "queueinghint",
    "scheduling-cycle", "binding-cycle", "extension-point", "prefilter", "filter", "postfilter", "prescore",
    "score", "normalizescore", "reserve", "permit", "prebind", "bind-point", "plugin", "feasible-node",
    "numfeasiblenodestofind", "percentageofnodestoscore", "raw-score", "normalized-score", "weighted-score",
    "selecthost", "assume", "bind", "forget", "nominated-pod", "nominatednodename", "preemption", "victim",
    "reprieve", "pdb", "priority", "priorityclass", "preemptionpolicy", "taint-toleration", "node-affinity",
    "pod-affinity", "topology-spread", "reservation", "held", "reserved", "cordon", "drain", "eviction", "fork",
    "terminating", "requested",
)  # fmt: skip


def first_seq(run: Run, kind: str) -> int:
    return TraceEvent.objects.filter(run=run, type=kind).order_by("seq").values_list("seq", flat=True)[0]


def page(client: Client, run: Run, seq: int | None = None) -> str:
    response = client.get(reverse("run-detail", args=[run.id]), {} if seq is None else {"seq": seq})
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def scored_run(builtins: None) -> Run:
    """mixed-small: its cycles score several feasible nodes (preemption-basics never scores)."""
    run = Run.objects.create(
        scenario=Scenario.objects.get(slug="mixed-small"), policy=Policy.objects.get(slug="default"), seed=0
    )
    step_loop(run.id, publish=lambda group, message: None)
    return run


def moments(client: Client, preempting: Run, scored: Run) -> dict[str, str]:
    """The run page at the moments that show the most words."""
    return {
        "start": page(client, preempting, 0),
        "preemption": page(client, preempting, first_seq(preempting, "preemption") + 2),
        "nominated": page(client, preempting, first_seq(preempting, "nomination_set")),
        "end": page(client, preempting, preempting.last_seq),
        "score": page(client, scored, first_seq(scored, "score") + 1),  # the decision after the scores
    }


# The glossary itself


def test_the_glossary_has_every_required_term_in_one_to_three_sentences() -> None:
    slugs = [t.slug for t in glossary.TERMS]
    assert len(slugs) == len(set(slugs)), "slugs are anchors: one each"
    assert sorted(set(REQUIRED) - set(slugs)) == []
    sections = {s.key for s in glossary.SECTIONS}
    for t in glossary.TERMS:
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", t.text) if s]
        assert 1 <= len(sentences) <= 3, (t.slug, sentences)
        assert t.section in sections, t.slug
        assert not t.upstream or t.upstream.startswith(("pkg/", "staging/")), t.slug


def test_an_unknown_term_fails_loudly() -> None:
    with pytest.raises(KeyError, match="glossary has no term 'activeQ'"):
        glossary.term("activeQ")


def test_the_glossary_page_has_an_anchor_per_term_and_the_footer_links_it(client: Client) -> None:
    response = client.get(reverse("glossary"))
    assert response.status_code == 200
    body = response.content.decode()
    for t in glossary.TERMS:
        assert f'id="{t.slug}"' in body, t.slug
        assert html_lib.escape(t.text) in body, t.slug
        if t.upstream:
            assert t.upstream_url in body
    assert f'<a href="{reverse("glossary")}">Glossary</a>' in body  # the footer, on every page


def test_docs_glossary_md_is_generated_from_the_same_terms() -> None:
    assert (ROOT / "docs" / "glossary.md").read_text() == glossary.markdown(), (
        "regenerate: python -m kubeviz.web.services.glossary > docs/glossary.md"
    )


# Tooltips on the run page


def test_every_term_tooltip_on_the_run_page_is_in_the_glossary(
    client: Client, finished_run: Run, scored_run: Run
) -> None:
    """Scan the rendered page at several moments: each term link names a glossary slug and links
    to its anchor; every data-term (links and badges) has its definition in the page's one
    glossary JSON, which terms.js shows as the tooltip."""
    seen: set[str] = set()
    for moment, body in moments(client, finished_run, scored_run).items():
        links = TERM_LINK.findall(body)
        assert links, moment
        for slug, href in links:
            assert href == f"{reverse('glossary')}#{slug}", (moment, slug)
        definitions = json.loads(html_lib.unescape(GLOSSARY_JSON.search(body).group(1)))
        for slug in TERM_ATTR.findall(body):
            assert definitions[slug] == glossary.term(slug).text, (moment, slug)
            seen.add(slug)
    expected = {
        # lane headings, the cycle's extension points, the score table's column words, the node bars
        "activeq", "backoffq", "unschedulable-pods", "scheduling-cycle", "filter", "postfilter", "preemption",
        "raw-score", "normalized-score", "weighted-score", "feasible-node", "selecthost", "nominated-pod",
        "victim", "terminating", "priority", "requested", "held", "reserved", "chosen", "cordon", "rejected",
    }  # fmt: skip
    assert sorted(expected - seen) == []


def test_the_run_page_links_the_glossary_and_the_legend(client: Client, finished_run: Run) -> None:
    body = page(client, finished_run)
    assert f'href="{reverse("glossary")}"' in body
    assert 'href="#run-legend"' in body
    assert 'id="run-legend"' in body


# The legend


def css_colour_classes() -> dict[str, set[str]]:
    """The classes of run.css that colour or shade something on the run page, by family."""
    css = (ROOT / "static" / "kubeviz" / "run.css").read_text()
    return {
        "cell levels": set(re.findall(r"\.cell\.(a\d+)\b", css)),
        "cell flags": set(re.findall(r"\.cell\.(f[a-z])\b", css)),
        "lanes": set(re.findall(r"^\.(lane-(?:active|backoff|unschedulable))\b", css, re.M)),
        "badges": set(re.findall(r"\.(badge-[a-z]+)\b", css)),
        "chip states": set(re.findall(r"^\.chip\.([a-z]+)\b", css, re.M)),
        "bar parts": set(re.findall(r"^\.bar \.([a-z]+)\b", css, re.M)),
        "node card states": set(re.findall(r"^\.node-card\.([a-z]+)\b", css, re.M)),
        "table rows": set(re.findall(r"^\.phase tr\.([a-z]+)\b", css, re.M)),
    }


def legend_of(body: str) -> str:
    start = body.index('<details id="run-legend"')
    return body[start : body.index("</details>", start)]


def has_sample(legend: str, *classes: str) -> bool:
    return any(set(classes) <= set(found.split()) for found in re.findall(r'class="([^"]*)"', legend))


def test_every_colour_class_of_the_run_css_has_a_legend_sample(client: Client, finished_run: Run) -> None:
    legend = legend_of(page(client, finished_run))
    families = css_colour_classes()
    assert len(families["cell levels"]) == 11, families
    assert len(families["cell flags"]) == 6, families
    missing = []
    for level in families["cell levels"]:
        missing += [] if has_sample(legend, "cell", level) else [level]
    for flag in families["cell flags"]:
        missing += [] if has_sample(legend, "cell", flag) else [flag]
    for lane in families["lanes"]:
        missing += [] if has_sample(legend, "sample-lane", lane) else [lane]
    for badge in families["badges"]:
        missing += [] if has_sample(legend, "badge", badge) else [badge]
    for state in families["chip states"] - {"mark"}:
        missing += [] if has_sample(legend, "sample-chip", state) else [state]
    for part in families["bar parts"]:
        missing += [] if has_sample(legend, part) else [part]
    for state in families["node card states"]:
        missing += [] if has_sample(legend, "node-card", state) else [state]
    for row in families["table rows"]:
        missing += [] if re.search(rf'<tr class="{row}">', legend) else [row]
    assert missing == []


def test_the_chip_row_under_the_lanes_is_a_legend_not_pods(client: Client, finished_run: Run) -> None:
    body = page(client, finished_run, finished_run.last_seq)
    start = body.index('<p class="chip-legend')
    row = body[start : body.index("</p>", start)]
    assert "Pod chips:" in row
    assert "data-pod=" not in row, "samples must not act as pods"
    assert not re.search(r'class="chip[ "]', row), "samples must not look like pods"
    assert len(re.findall(r'class="swatch[ "]', row)) >= 2  # this run has several priorities


# The data attributes the lesson player relies on


def test_the_run_page_carries_the_lesson_players_data_attributes(
    client: Client, finished_run: Run, scored_run: Run
) -> None:
    pages = moments(client, finished_run, scored_run)
    start = pages["start"]
    for lane in ("active", "backoff", "unschedulable"):
        assert f'data-lane="{lane}"' in start
    for panel in ("queue", "nodes", "cycle", "narration", "controls"):
        assert f'data-panel="{panel}"' in start, panel
    end = pages["end"]
    for node in ("node-a", "node-b", "node-c"):
        assert f'data-node="{node}"' in end
    assert re.search(r'<button type="button" class="chip [^"]*"[^>]* data-pod="default/db-0"', end)

    victims = set(re.findall(r'data-victim="([^"]+)"', pages["preemption"]))
    assert victims == {"default/scratch-b0", "default/scratch-b1"}
    scored = pages["score"]
    plugins = re.findall(r'<th class="num" data-plugin="([^"]+)"', scored)
    assert "NodeResourcesFit" in plugins
    assert "TaintToleration" in plugins
    for plugin in plugins:  # the whole column carries it, so a lesson can light up a plugin's scores
        assert scored.count(f'data-plugin="{plugin}"') > 1, plugin


def test_a_pod_chip_opens_its_story(client: Client, finished_run: Run) -> None:
    """The page knows where stories come from, and loads the script that opens them."""
    body = page(client, finished_run)
    assert f'data-pod-url="{reverse("run-pod", args=[finished_run.id])}"' in body
    assert "kubeviz/pod_story.js" in body
    assert '<aside id="pod-story"' in body


@pytest.mark.parametrize(
    "slug",
    [
        "pop-from-backoffq",
        "async-preemption",
        "error-backoff",
        "expected-placement",
        "heap-order-tie-break",
        "kubernetes-version",
    ],
)
def test_the_v1_36_words_are_in_the_glossary_page_and_the_doc(client: Client, slug: str) -> None:
    """The words a v1.31 vs v1.36 run needs, in one place: TERMS, the page and docs/glossary.md."""
    found = glossary.term(slug)
    page = client.get(reverse("glossary")).content.decode()
    assert f'id="{slug}"' in page
    assert found.name in (Path(__file__).parents[2] / "docs" / "glossary.md").read_text(encoding="utf-8")
