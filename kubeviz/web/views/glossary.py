"""The glossary page: every word of the scheduler the pages use, from services/glossary.py."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ..services.glossary import SECTIONS, TERMS


@require_GET
def glossary(request: HttpRequest) -> HttpResponse:
    """One page, one section per part of the scheduler, one anchor per term (``#activeq``)."""
    sections = [{"section": s, "terms": [t for t in TERMS if t.section == s.key]} for s in SECTIONS]
    return render(request, "web/glossary.html", {"sections": sections})
