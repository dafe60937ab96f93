"""HTML and indexed text of one generated page, and the number formats real sites use.

A page is built from blocks (headings, paragraphs, tables, link lists); `render_page` turns
them into an HTML document and, in the same pass, into the plain text the index stores, so
that the text an agent reads (through any HTML-to-text reader) and the text the engine
matches are the same words.
"""

from __future__ import annotations

import datetime as dt
import html
import math
from dataclasses import dataclass
from typing import Sequence, Union

# Big amounts that a site may restate in a larger unit: (field unit, factor to the base unit).
_AMOUNT_UNITS = {"CNY": ("CNY", 1.0), "thousand CNY": ("CNY", 1e3), "10k CNY": ("CNY", 1e4),
                 "HKD": ("HKD", 1.0), "USD": ("USD", 1.0), "thousand HKD": ("HKD", 1e3),
                 "thousand USD": ("USD", 1e3)}
# How Chinese and English portals restate big amounts: (unit label, factor from the base unit).
_RESTATED = {
    ("zh", "CNY"): ("亿元", 1e8), ("zh", "HKD"): ("亿港元", 1e8), ("zh", "USD"): ("亿美元", 1e8),
    ("en", "CNY"): ("million CNY", 1e6), ("en", "HKD"): ("million HKD", 1e6), ("en", "USD"): ("million USD", 1e6),
}
_RESTATE_ABOVE = 1e7  # only amounts of at least this many base units are restated (a real site's habit)


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str | None = None


@dataclass(frozen=True)
class Links:
    items: tuple[tuple[str, str], ...]  # (href, text)


Block = Union[Heading, Paragraph, Table, Links]


def format_number(value: float | int, decimals: int | None) -> str:
    """Plain decimal notation (no exponent), `decimals` places when given."""
    if isinstance(value, bool):
        raise TypeError("a flag is not a figure")
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        raise ValueError(f"non-finite figure {value!r}")
    if decimals is None:
        text = f"{value:.6f}".rstrip("0").rstrip(".")
        return text if text not in ("", "-0") else "0"
    return f"{value:.{decimals}f}"


def restate_amount(value: float, unit: str | None, lang: str) -> tuple[float, str] | None:
    """(value, unit) of a big amount restated the way a `lang` portal prints it, or None."""
    if unit not in _AMOUNT_UNITS:
        return None
    base, factor = _AMOUNT_UNITS[unit]
    in_base = value * factor
    if abs(in_base) < _RESTATE_ABOVE:
        return None
    label, scale = _RESTATED[(lang, base)]
    return in_base / scale, label


def _escape(text: str) -> str:
    # Most of a page's strings (figures, dates, codes) have nothing to escape: checked first,
    # which is several times faster than html.escape's five replacements.
    if "&" in text or "<" in text or ">" in text or '"' in text or "'" in text:
        return html.escape(text, quote=True)
    return text


def render_page(*, lang: str, site_name: str, title: str, published: dt.date, description: str,
                blocks: Sequence[Block], url_path: str, marker: str | None = None) -> tuple[str, str]:
    """(HTML document, indexed text) of a page. `marker` (an opaque corpus digest) goes into the
    head as machine-readable provenance; no visible text says where the page came from."""
    out: list[str] = [
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><title>{_escape(title)}</title>'
        f'<meta name="description" content="{_escape(description)}">'
        f'<meta name="date" content="{published.isoformat()}">'
        + (f'<meta name="corpus" content="{_escape(marker)}">' if marker else "") +
        f'<link rel="canonical" href="{_escape(url_path)}"></head><body>'
        f'<header><nav><a href="/">{_escape(site_name)}</a></nav></header><main><article>'
        f"<h1>{_escape(title)}</h1>"
        f'<p class="byline">{_escape(site_name)} · <time datetime="{published.isoformat()}">'
        f"{published.isoformat()}</time></p>"
    ]
    text: list[str] = [title, f"{site_name} {published.isoformat()}"]
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"<h{block.level}>{_escape(block.text)}</h{block.level}>")
            text.append(block.text)
        elif isinstance(block, Paragraph):
            out.append(f"<p>{_escape(block.text)}</p>")
            text.append(block.text)
        elif isinstance(block, Table):
            out.append("<table>")
            if block.caption:
                out.append(f"<caption>{_escape(block.caption)}</caption>")
                text.append(block.caption)
            out.append("<thead><tr>" + "".join([f"<th>{_escape(h)}</th>" for h in block.header]) + "</tr></thead><tbody>")
            text.append(" | ".join(block.header))
            for row in block.rows:
                out.append("<tr><td>" + "</td><td>".join([_escape(c) for c in row]) + "</td></tr>" if row else "<tr></tr>")
                text.append(" | ".join(row))
            out.append("</tbody></table>")
        else:
            out.append("<ul>" + "".join(f'<li><a href="{_escape(h)}">{_escape(t)}</a></li>' for h, t in block.items)
                       + "</ul>")
            text.extend(t for _, t in block.items)
    out.append(f"</article></main><footer><p>© {published.year} {_escape(site_name)}</p></footer></body></html>")
    return "".join(out), "\n".join(text)
