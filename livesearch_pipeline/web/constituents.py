"""A portal's constituents board of a well-known index: every member with its figures of the
latest session, as market portals print them for the indices people follow.

A screen over an index ("which of its constituents fell the most", "had the highest turnover
rate", "how many closed up") is then one or two reads for a visible index (web/sites.py
`depth_of(visibility) == "digest"`), while an obscure index's screen stays in the exchanges' daily
bulletins, one page per forty instruments (web/bulletins.py): a read of most of a session's pages.

The board lists the members as of the index's most recent rebalance (`index_weight`, with their
weights) and its current membership list (`index_member`, with the day each joined), then two
tables of the latest session: each member's daily quote (`daily`) and its daily indicators
(`daily_basic`: turnover rate, valuation, market value), every field the exchange prints of them.
Its `records` are exactly the records it prints: the rebalance's weights, each membership record,
and each member's quote and indicator records of the session (a member that did not trade has a
row of dashes and no record).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Callable, Mapping

from livesearch_pipeline.core.catalog import ToolMeta
from livesearch_pipeline.dataservice.market.universe import Entity
from livesearch_pipeline.web.corpus import Page, record_key
from livesearch_pipeline.web.formatting import Look, display_name, history_table, tool_title
from livesearch_pipeline.web.reader import Fetched
from livesearch_pipeline.web.render import Block, Heading, Links, Paragraph, Table
from livesearch_pipeline.web.sites import Site

# The members' data sets a board prints, in order.
CONSTITUENT_TOOLS = ("daily", "daily_basic")


def constituents_path(site: Site, code: str) -> str:
    return f"/{site.key}/constituents/{code}.html"


def members_of(weights: Fetched | None, members: Fetched | None) -> tuple[dict[str, float], dict[str, str]]:
    """(weight of each member at the latest rebalance, join date of each listed member)."""
    weighted: dict[str, float] = {}
    if weights is not None and weights.groups:
        for record in weights.groups[0]:
            weighted[str(record["con_code"])] = record.get("weight")
    joined: dict[str, str] = {}
    if members is not None:
        for group in members.groups:
            for record in group:
                joined[str(record["con_code"])] = str(record.get("in_date") or "")
    return weighted, joined


def constituents_page(*, entity: Entity, site: Site, weights: Fetched | None, members: Fetched | None,
                      sections: Mapping[str, Mapping[str, dict[str, Any]]], metas: Mapping[str, ToolMeta],
                      day: dt.date, make_page: Callable[..., Page], name_of: Callable[[str], str],
                      seed: int = 0) -> Page | None:
    """The board of `entity` on `site` for the session `day`, from its latest rebalance's weights,
    its membership list and each member's record of `sections[tool]` (code -> record); None when
    the index lists no member."""
    if site.rounding is not None or site.disagree or site.restates:
        raise ValueError(f"{site.key}: a constituents board prints the exchange's figures as they are")
    weighted, joined = members_of(weights, members)
    codes = sorted(set(weighted) | set(joined), key=lambda c: (-(weighted.get(c) or 0.0), c))
    if not codes:
        return None
    lang = site.lang
    look = Look(site, None)
    name = display_name(entity, lang)
    stamp = day.strftime("%Y%m%d")
    iso = day.isoformat()
    records: list[str] = []
    if weighted and weights is not None:
        rebalance = str(weights.groups[0][0].get(weights.meta.time_key))
        records.append(record_key(weights.meta.name, entity.code, rebalance))
    else:
        rebalance = None
    if members is not None:
        records += [record_key(members.meta.name, entity.code, group[0].get(members.meta.time_key))
                    for group in members.groups]
    if lang == "zh":
        title = f"{name}（{entity.code}）成分股行情"
        lead = (f"{name}（{entity.code}）全部{len(codes)}只成分股{iso}的行情与每日指标"
                + (f"；成分股及权重为{rebalance}调整后的名单" if rebalance else "") + "。")
        member_header = ("代码", "名称", "权重（%）", "纳入日期")
    else:
        title = f"{name} ({entity.code}) constituents"
        lead = (f"All {len(codes)} constituents of {name} ({entity.code}) on the session of {iso}: quotes and daily "
                "indicators" + (f"; members and weights as of the rebalance of {rebalance}" if rebalance else "") + ".")
        member_header = ("Code", "Name", "Weight (%)", "In since")
    dash = "--" if lang == "zh" else "—"
    blocks: list[Block] = [Paragraph(lead)]
    for tool in CONSTITUENT_TOOLS:
        section, meta = sections.get(tool), metas.get(tool)
        if section is None or meta is None:
            continue
        traded = [c for c in codes if c in section]
        table = history_table(meta, [[section[c]] for c in traded], look, seed, f"constituents:{entity.code}:{tool}")
        by_code = dict(zip(traded, table.rows))
        blank = tuple(dash for _ in table.header[1:])
        rows = []
        for code in codes:
            figures = by_code[code][1:] if code in by_code else blank
            weight = weighted.get(code)
            rows.append((code, name_of(code), dash if weight is None else str(weight), joined.get(code, dash),
                         *figures))
        blocks.append(Heading(f"{tool_title(meta, lang)} {iso}"))
        blocks.append(Table((*member_header, *table.header[1:]), tuple(rows)))
        records += [record_key(tool, code, stamp) for code in traded]
    blocks.append(Links(((f"/exchange/company/{entity.code}.html", name),
                         *((f"/exchange/{t.meta.name}/{entity.code}.html", tool_title(t.meta, lang))
                           for t in (weights, members) if t is not None and t.groups))))
    return make_page(site=site, kind="constituents", path=constituents_path(site, entity.code), lang=lang,
                     title=title, published=day, entity=entity.code, snippet=lead[:220], blocks=blocks,
                     records=tuple(dict.fromkeys(records)))
