"""Portals' key statistics of a well-known entity's quote: the figures a window question asks,
already computed.

A real portal prints, for a visible stock, its change and percentage change over the last 5, 20
and 60 sessions, the highest high and lowest low, the average close and volume and the total
turnover of those sessions. `digest_table` computes them from the quote's records (newest first,
from the portal's lag: a stale portal's digest is as of an earlier session) and names each figure
it prints as a *digest key* (`digest_key`): the tool, the entity, the field, the aggregate, how
many records it spans and the last of them. The evidence map (web/evidence.py) accepts a page
holding a window's digest key as holding that window, so a digested figure is one read.

Changes span N + 1 closes (the close N sessions before the latest, then the latest: what "the
5-day change" means on a quote page); highs, lows, averages and totals the last N sessions.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from livesearch_pipeline.core.catalog import ToolMeta
from livesearch_pipeline.web.formatting import Look, unit_text
from livesearch_pipeline.web.render import Table, format_number

DIGEST_SESSIONS = (5, 20, 60)
# (aggregate, field, records spanned beyond N, English label, Chinese label, decimals; None: the field's)
STATISTICS = (
    ("change", "close", 1, "Change", "涨跌额", 2),
    ("pct_change", "close", 1, "Change (%)", "涨跌幅（%）", 2),
    ("max", "high", 0, "Highest high", "最高价", None),
    ("min", "low", 0, "Lowest low", "最低价", None),
    ("mean", "close", 0, "Average close", "平均收盘价", 2),
    ("mean", "vol", 0, "Average daily volume", "日均成交量", 2),
    ("sum", "amount", 0, "Total turnover", "累计成交额", 2),
    ("change", "unit_nav", 1, "NAV change", "净值变化", 4),
    ("pct_change", "unit_nav", 1, "NAV change (%)", "净值涨跌幅（%）", 2),
    ("mean", "unit_nav", 0, "Average NAV", "平均单位净值", 4),
)


def digest_key(tool: str, subject: str | None, field: str, aggregate: str, records: int, last: Any) -> str:
    """The identity of one digested figure: `digest|tool|subject|field|aggregate|records|last key`."""
    return f"digest|{tool}|{subject or ''}|{field}|{aggregate}|{records}|{last}"


def _value(aggregate: str, values: Sequence[float]) -> float | None:
    if aggregate == "change":
        return values[-1] - values[0]
    if aggregate == "pct_change":
        return None if values[0] == 0 else (values[-1] - values[0]) / abs(values[0]) * 100
    if aggregate == "max":
        return max(values)
    if aggregate == "min":
        return min(values)
    if aggregate == "mean":
        return math.fsum(values) / len(values)
    return math.fsum(values)  # sum


def digest_table(meta: ToolMeta, code: str, groups: Sequence[list[dict[str, Any]]],
                 look: Look) -> tuple[Table, tuple[str, ...]] | None:
    """The key-statistics table of one quote series (`groups` newest first, one record each) and
    the digest keys it prints; None when the series is too short for the shortest span."""
    if meta.time_key is None or any(len(g) != 1 for g in groups) or len(groups) < DIGEST_SESSIONS[0] + 1:
        return None
    lang = look.site.lang
    spans = [n for n in DIGEST_SESSIONS if len(groups) >= n + 1]
    fields = {f.name: f for f in meta.fields}
    rows: list[tuple[str, ...]] = []
    keys: list[str] = []
    for aggregate, field, extra, label_en, label_zh, decimals in STATISTICS:
        if field not in fields:
            continue
        unit = unit_text(fields[field].unit, lang) if aggregate != "pct_change" else ""
        label = label_en if lang == "en" else label_zh
        if unit:
            label += f" ({unit})" if lang == "en" else f"（{unit}）"
        cells = [label]
        for n in spans:
            window = list(reversed(groups[: n + extra]))  # oldest first
            values = [r[0].get(field) for r in window]
            if any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in values):
                cells.append("—" if lang == "en" else "--")
                continue
            value = _value(aggregate, [float(v) for v in values])
            if value is None or not math.isfinite(value):
                cells.append("—" if lang == "en" else "--")
                continue
            shown = decimals
            if shown is None:  # a high or a low: one of the records' own figures, as printed there
                text = repr(value)
                shown = len(text.split(".")[1]) if "." in text and "e" not in text else 0
            if look.site.rounding is not None:
                shown = min(shown, look.site.rounding)
            cells.append(format_number(value, shown))
            if look.disagree_seed is None:
                keys.append(digest_key(meta.name, code, field, aggregate, n + extra,
                                       window[-1][0].get(meta.time_key)))
        rows.append(tuple(cells))
    if not rows:
        return None
    header = (("Statistic", *(f"{n} sessions" for n in spans)) if lang == "en"
              else ("指标", *(f"{n}日" for n in spans)))
    return Table(header, tuple(rows)), tuple(keys)
