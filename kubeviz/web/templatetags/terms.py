"""``{% term "activeq" %}``: a word of the scheduler with its glossary tooltip and link.

One tag for every tooltip on the pages, so the words come from one place
(kubeviz/web/services/glossary.py) and an unknown slug fails loudly when the page renders.
The fragments carry only the slug (``data-term``): the definitions come once per page
(``{% glossary_json %}``) and static/kubeviz/terms.js shows them as tooltips. Sending them in
every fragment made each live update a third bigger.
"""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import format_html, json_script
from django.utils.safestring import SafeString

from ..services.glossary import TERMS
from ..services.glossary import term as glossary_term

register = template.Library()


@register.simple_tag
def term(slug: str, label: str = "") -> SafeString:
    """``<a class="term" data-term=slug href=/glossary/#slug>label</a>`` (``label`` defaults to
    the term's own name)."""
    entry = glossary_term(slug)
    return format_html(
        '<a class="term" data-term="{}" href="{}#{}">{}</a>',
        entry.slug,
        reverse("glossary"),
        entry.slug,
        label or entry.name,
    )


@register.simple_tag
def term_attr(slug: str) -> SafeString:
    """``data-term="slug"`` for an element that cannot hold a link (a badge, a table head)."""
    return format_html('data-term="{}"', glossary_term(slug).slug)


@register.simple_tag
def glossary_json() -> SafeString:
    """Every definition once, for terms.js's tooltips: ``{slug: text}``."""
    return json_script({t.slug: t.text for t in TERMS}, "glossary-terms")
