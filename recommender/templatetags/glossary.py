"""``{% term "naive" %}``: a term of the glossary with its definition as hover text."""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from recommender.glossary import TERMS, definition

register = template.Library()


@register.simple_tag
def term(key: str, label: str = "") -> SafeString:
    """``<abbr title=definition>label</abbr>``, linked to its entry on the help page."""
    entry = definition(key)
    return format_html(
        '<a class="term" href="{}#term-{}"><abbr data-term="{}" title="{}">{}</abbr></a>',
        reverse("help"),
        entry.key,
        entry.key,
        entry.text,
        label or entry.label,
    )


@register.simple_tag
def term_text(key: str) -> str:
    """The definition of ``key`` for a title attribute ("" for a word it does not define)."""
    entry = TERMS.get(key)
    return entry.text if entry else ""
