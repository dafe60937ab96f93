"""What an exchange's pages say of a company besides its figures (issues 39 and 40): the names it
used before ("formerly …", as `namechange` records them), its other listing (an A+H company), its
fiscal year and reporting currency where they are not the market's usual ones, its share capital
changes (bonus issues and splits with their adjustment factors) — the company page's facts — and
how a data set heads each version of a period a later report restated.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Sequence

from livesearch_pipeline.core.catalog import ToolMeta
from livesearch_pipeline.core.extract import RESTATED, REVISION_FIELD
from livesearch_pipeline.dataservice.market.universe import Entity
from livesearch_pipeline.web.bulletins import day_of
from livesearch_pipeline.web.formatting import plain
from livesearch_pipeline.web.render import Block, Heading, Paragraph, Table

SHARE_CHANGES_SHOWN = 8  # the company page lists the latest share capital changes
FISCAL_HEADER = {"en": ("Fiscal year end", "Reporting currency", "Trading currency"),
                 "zh": ("财政年度截止日", "报告货币", "交易货币")}


def is_restated(group: Sequence[dict[str, Any]]) -> bool:
    return bool(group) and group[0].get(REVISION_FIELD) == RESTATED


def version_heading(meta: ToolMeta, group: Sequence[dict[str, Any]], lang: str) -> str:
    """A data set's heading of one period: the period, and for a statement the version (issue 39:
    as first reported, or restated by a later report) with its announcement date."""
    period = str(group[0].get(meta.time_key))
    flag = group[0].get(REVISION_FIELD)
    if flag is None:
        return period
    announced = day_of(group[0].get("ann_date"))
    stamp = announced.isoformat() if announced is not None else ""
    if lang == "zh":
        return f"{period}（{'追溯调整后，' if flag == RESTATED else '首次披露，'}{stamp}公告）"
    return f"{period} ({'restated' if flag == RESTATED else 'as first reported'}, announced {stamp})"


def company_facts(market: Any, entity: Entity, lang: str, clock: dt.date) -> list[Block]:
    """What an exchange's company page says besides names and links (issue 39): the names the
    company used before ("formerly …", as `namechange` records them), its other listing (an
    A+H company), its fiscal year and reporting currency where they are not the market's
    usual ones, and its share capital changes (bonus issues and splits: the ex-date, the
    ratio and the adjustment factor before and after)."""
    blocks: list[Block] = []
    former = market.names.former(entity.code, clock)
    if former:
        spell = former[0]
        current = market.names.spell_on(entity.code, clock)
        if lang == "zh":
            blocks.append(Paragraph(f"公司原名{spell.name}，自{current.start.isoformat()}起更名为{current.name}。"))
        else:
            blocks.append(Paragraph(f"Formerly {plain(spell.name_en)} ({spell.name}); renamed {plain(current.name_en)} "
                                    f"on {current.start.isoformat()}."))
    other = market.universe.h_share_of(entity.code) or market.universe.a_share_of(entity.code)
    if other is not None:
        kind = "H" if entity.asset_class == "cn_equity" else "A"
        blocks.append(Paragraph(f"公司同时发行{kind}股，代码{other}。" if lang == "zh"
                                else f"The company's {kind} shares are listed as {other}."))
    if entity.asset_class in ("hk_equity", "us_equity"):
        fiscal = market.fundamentals.fiscal(entity.code)
        currency = market.fundamentals.reporting_currency(entity.code)
        end = fiscal.year_end(2000)
        if lang == "zh":
            blocks.append(Paragraph(f"财政年度截至每年{end.month}月{end.day}日；财务报表以{currency}列示，股份以{entity.currency}买卖。"))
        else:
            blocks.append(Paragraph(f"Fiscal year ends on {end.day} {end.strftime('%B')}; financial statements "
                                    f"in {currency}, shares traded in {entity.currency}."))
        # The same facts as a table a reader can look up (the fiscal year end as MMDD, as `fy_end`).
        blocks.append(Table(FISCAL_HEADER[lang], ((f"{end.month:02d}{end.day:02d}", currency, entity.currency),)))
    if not entity.asset_class.endswith("_equity"):
        return blocks
    rows = []
    bars = market.prices.daily(entity.code)
    for action in market.corporate.actions(entity.code):
        ratio = action.share_multiplier
        k = bars.at(action.ex_date) if action.ex_date <= clock else None
        if ratio == 1.0 or k is None or k == 0:
            continue
        kind = ("送转股" if lang == "zh" else "Bonus issue") if action.kind == "dividend" else ("拆股" if lang == "zh" else "Split")
        rows.append((action.ex_date.isoformat(), kind, f"{ratio:g}", f"{float(bars.adj_factor[k - 1]):.6f}",
                     f"{float(bars.adj_factor[k]):.6f}"))
    if rows:
        header = (("除权日", "类型", "每股变为（股）", "除权前复权因子", "除权后复权因子") if lang == "zh"
                  else ("Ex-date", "Action", "Shares per old share", "Adjustment factor before", "Adjustment factor after"))
        blocks.append(Heading("股本变动" if lang == "zh" else "Share capital changes"))
        blocks.append(Table(header, tuple(reversed(rows[-SHARE_CHANGES_SHOWN:]))))
    return blocks
