"""Markdown from strings others chose: the one escape for a table cell or a list item.

Agent and model names, run folders and reasons come from run metadata a submitter writes. Put in
a Markdown table unescaped, a model string `x | 100.0% | …` adds cells (a 0% run shown at 100%),
a line break starts a forged row, `[text](url)` a link and `<img …>` HTML in a viewer that renders
it (Dagster's UI renders the leaderboard's metadata). `md_text` keeps one line (every run of white
space, line breaks included, becomes one space) and escapes every character Markdown gives a
meaning inline, so the text reads back as typed and shapes nothing.
"""

from __future__ import annotations

import re

_SPACE = re.compile(r"\s+")
_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~&])")


def md_text(text: object) -> str:
    """`text` as inert Markdown on one line (module doc); '-' for an empty value."""
    flat = _SPACE.sub(" ", str(text)).strip()
    return _SPECIAL.sub(r"\\\1", flat) if flat else "-"
