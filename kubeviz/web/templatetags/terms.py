"""``{% term "activeq" %}``: a word of the scheduler with its glossary tooltip and link.

One tag for every tooltip on the pages, so the words come from one place
(kubeviz/web/services/glossary.py) and an unknown slug fails loudly when the page renders.
"""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from ..services.glossary import term as glossary_term

register = template.Library()


@register.simple_tag
def term(slug: str, label: str = "") -> SafeString:
    """``<a class="term" data-term=slug title=definition href=/glossary/#slug>label</a>``
    (``label`` defaults to the term's own name)."""
    entry = glossary_term(slug)
    return format_html(
        '<a class="term" data-term="{}" href="{}#{}" title="{}">{}</a>',
        entry.slug,
        reverse("glossary"),
        entry.slug,
        entry.text,
        label or entry.name,
    )


@register.simple_tag
def term_title(slug: str) -> str:
    """Just the definition, for a ``title`` attribute on an element that cannot hold a link."""
    return glossary_term(slug).text
