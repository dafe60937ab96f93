"""The navigator's investigations: which one a question asks (`read_investigation`: a drawdown and
the days of its peak and trough, the change on the highest-volume session, the best of the last 12
or 24 months, a screen across an index's constituents or members, the largest gain or fall among
three indices), the series and cross-sections each needs read from the web (`_Investigator`: an
entity's exchange pages, history tables, monthly pages and daily bulletins, within the question's
budget) and the answer computed from them (`investigate`). The navigator (agents/navigator.py)
hands a question here when `read_investigation` recognises it; agents/chains.py reads its hops
through `_Investigator` too.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence
from urllib.parse import urlsplit

from livesearch_pipeline.core.calendars import session_on_or_before, sessions_back
from livesearch_pipeline.core.models import ServedQuestion
from livesearch_pipeline.core.program import window_rows
from livesearch_pipeline.evaluation.agents.page_reading import (
    _ARCHIVE_ITEM, _CALENDARS, _INCOME, RESULTS_PER_QUERY, _class_of, _column, _publication_lags, _Question,
    _statement_field, archive_index, history_rows, report_figure, report_periods,
)
from livesearch_pipeline.evaluation.agents.reading import (
    UNIT_SUFFIX, Candidate, ParsedPage, Reading, cell_number, choose,
)

# The navigator (evaluation/agents/navigator.py `NavigatorAgent`) imports this module and hands each
# investigation itself: typed loosely here so that the two modules do not import each other.
NavigatorAgent = Any

# --------------------------------------------------------------------------- investigations

# The exchange data sets an analyst reads for each investigation, by asset class (the quote bars,
# the adjustment factors a path of adjusted closes joins, the monthly bars).
_BARS = {"cn_equity": "daily", "hk_equity": "hk_daily", "us_equity": "us_daily", "index": "index_daily",
         "fund": "fund_daily"}
_FACTORS = {"cn_equity": "adj_factor", "hk_equity": "hk_adjfactor", "us_equity": "us_adjfactor", "fund": "fund_adj"}
_MONTHS = {"cn_equity": "monthly", "index": "index_monthly"}
_SCREEN_FIELDS = {"had the lowest percentage change": ("daily", "pct_chg", "argmin"),
                  "had the highest turnover value": ("daily", "amount", "argmax"),
                  "had the highest turnover rate": ("daily_basic", "turnover_rate", "argmax")}
_CODE = re.compile(r"\(([0-9A-Z.]+)\)")
_INVESTIGATIONS = (
    ("drawdown", re.compile(r"^What was the maximum drawdown of (?P<subj>.+?) over the last (?P<n>\d+) trading days")),
    ("drawdown_day", re.compile(r"^On which trading day did (?P<subj>.+?) reach the (?P<which>peak|trough) of its "
                                r"maximum drawdown over the last (?P<n>\d+) trading days")),
    ("volume_day", re.compile(r"^What was the percentage change of (?P<subj>.+?) on the session with the highest "
                              r"trading volume among the last (?P<n>\d+) trading days")),
    ("best_month", re.compile(r"^Among the last (?P<n>\d+) completed calendar months, take the month in which "
                              r"(?P<subj>.+?) had its highest (?:unadjusted )?monthly percentage change\. What was its (?P<noun>.+?) "
                              r"in that month")),
    ("screen", re.compile(r"^On the most recent trading day, (?:how many|which) of (?:the constituents of "
                          r"(?P<subj>.+?) at its most recent rebalance|the member stocks of (?P<subj2>.+?)) "
                          r"(?P<ask>closed higher than their previous close|had the lowest percentage change|"
                          r"had the highest turnover value|had the highest turnover rate)")),
    ("compare", re.compile(r"^What was the return of (?P<subj>.+?) minus the return of (?P<other>.+?) from the close "
                           r"(?P<n>\d+) trading days before the most recent one to the most recent close")),
    ("adj_return", re.compile(r"^What was the return of (?P<subj>.+?) (?:on its (?P<noun>.+?) from the trading day "
                              r"(?P<n>\d+) sessions before the most recent one to the most recent trading day|from the "
                              r"close (?P<n2>\d+) trading days before the most recent one to the most recent close), "
                              r"adjusted for")),
    ("premium", re.compile(r"^What was the premium of the closing price of (?P<subj>.+?) over its NAV per unit on the "
                           r"most recent trading day whose NAV has been published")),
    ("margin", re.compile(r"^For (?P<subj>.+?), what was the (?P<noun>.+?) in its most recently reported period \(year "
                          r"to date\), that is its (?P<num>.+?) divided by its (?P<den>.+?), in percent")),
    ("growth_period", re.compile(r"^For (?P<subj>.+?), what was the year-on-year growth of the year-to-date "
                                 r"(?P<noun>.+?) of its most recently reported period over the same period a year "
                                 r"earlier")),
    ("growth_year", re.compile(r"^For (?P<subj>.+?), what was the growth of the (?P<noun>.+?) in its most recent annual "
                               r"report over the fiscal year before")),
    ("three_indices", re.compile(r"^Of the indices (?P<a>\S+), (?P<b>\S+) and (?P<c>\S+), which had the "
                                 r"(?P<move>highest|lowest) percentage change from the close (?P<n>\d+) trading days "
                                 r"before")),
)


def read_investigation(question: ServedQuestion) -> tuple[str, dict[str, str]] | None:
    """Which investigation the question asks (drawdown, the day of its peak or trough, the change
    on the highest-volume session, the best month, a screen, three indices; issue 39's compound
    growth, A/H premium and cross-currency valuation, agents/reconciled.py) and its parts."""
    from livesearch_pipeline.evaluation.agents.reconciled import RECONCILED

    # Issue 39's first: "… a year earlier as first reported" is not `growth_period`'s restated comparative.
    for name, pattern in (*RECONCILED, *_INVESTIGATIONS):
        found = pattern.match(question.question)
        if found:
            parts = {k: v for k, v in found.groupdict().items() if v is not None}
            if "n2" in parts:  # the window's length, as the other wording of the shape names it
                parts["n"] = parts.pop("n2")
            return name, parts
    return None


def _drawdown(closes: Sequence[float]) -> tuple[float, int, int]:
    """(largest fall from a running peak as a percentage of it, peak index, trough index), oldest first."""
    falls, peak = [], closes[0]
    for close in closes:
        peak = max(peak, close)
        falls.append((peak - close) / peak * 100)
    trough = falls.index(max(falls))
    before = list(closes[: trough + 1])
    return max(falls), before.index(max(before)), trough


def _as_date(day: str) -> str:
    return f"{day[:4]}-{day[4:6]}-{day[6:]}" if re.fullmatch(r"\d{8}", day) else day


class _Investigator:
    """An investigation's reads: series of an entity's records from its exchange pages, history
    tables, monthly pages and daily bulletins, and the cross-section of a session."""

    def __init__(self, agent: NavigatorAgent, state: _Question) -> None:
        self.agent, self.state = agent, state

    async def page(self, path: str) -> ParsedPage:
        return await self.agent._read(self.state, self.agent._url(path))

    async def report(self, cover: str, wanted: Callable[[ParsedPage], Any]) -> Any:
        """What `wanted` finds in the report at `cover`, walked page by page when it is long."""
        return await self.agent._read_report(self.state, self.agent._url(cover), wanted)

    async def series(self, code: str, tool: str, fields: Sequence[str], n: int,
                     since: str | None = None) -> list[dict[str, Any]] | None:
        """The last `n` records of `tool` for `code`, newest first ({"date", field: value}): from the
        exchange's page of the data set (its history table, then its monthly pages), else from
        the daily bulletins its page links, then the monthly pages before them. With `since`
        (YYYYMMDD, the first of the market's last `n` sessions): the records of those sessions,
        fewer when the entity was suspended on some."""
        page = await self.page(f"/exchange/{tool}/{code}.html")
        rows = history_rows(page, tool, fields)
        months = sorted({href for href, _ in page.links if f"/exchange/{tool}/{code}/history/" in href}, reverse=True)
        if len(rows) < n:
            archive = next((href for href, _ in page.links if "/exchange/bulletin/" in href), None)
            # The latest session only, or a few sessions and no monthly pages (a middle-visibility
            # entity's daily series): the bulletins.
            if archive is not None and (len(rows) <= 1 or not months):
                rows = await self._bulletin_rows(archive, code, tool, fields, n, since is not None)
                if since is not None:  # every session of the window was read: what it lists is all
                    return [r for r in rows if r["date"] >= since] or None
        for month in months:
            if len(rows) >= n:
                break
            oldest = rows[-1]["date"] if rows else "99999999"
            if month.rsplit("/", 1)[1][:7].replace("-", "") > oldest[:6]:
                continue
            older = [r for r in history_rows(await self.page(month), tool, fields) if r["date"] < oldest]
            rows.extend(older)
        if since is not None:
            # The window's records, once the rows reach back to its first session.
            return [r for r in rows if r["date"] >= since] if rows and rows[-1]["date"] <= since else None
        return rows[:n] if len(rows) >= n else None

    def _latest_session(self) -> str:
        return session_on_or_before("XSHG", self.agent.as_of).strftime("%Y%m%d")

    async def bars(self, code: str, tool: str, fields: Sequence[str],
                   limit: int | None = None) -> tuple[list[dict[str, Any]], dict[str, str]]:
        """Every weekly (monthly) bar of `tool` for `code` the web shows, newest first ({"date",
        field: value}), with each field's unit: the bars of its exchange page (one item table per
        bar), else, when the page shows the latest bar only (an obscure entity), one per weekly
        (monthly) bulletin its page links: the archive, then each period's page holding the code
        (the newest `limit` periods; a period whose page does not list it: it did not trade)."""
        page = await self.page(f"/exchange/{tool}/{code}.html")
        bars: list[dict[str, Any]] = []
        units: dict[str, str] = {}
        for rows in page.tables:
            if not rows or len(rows[0]) != 3:
                continue
            labels = [row[0] for row in rows[1:] if row]
            day = next((r[1] for r in rows[1:] if len(r) > 1 and re.fullmatch(r"\d{8}", r[1])), None)
            columns = [_column(labels, tool, f) for f in fields]
            if day is None or any(c is None for c in columns):
                continue
            values = [cell_number(rows[1 + c][1]) for c in columns if c is not None]
            if all(v is not None for v in values):
                bars.append({"date": day, **dict(zip(fields, values))})
                units = {f: rows[1 + c][2] for f, c in zip(fields, columns) if c is not None and len(rows[1 + c]) > 2}
        archive = next((href for href, _ in page.links if "/exchange/bulletin/" in href), None)
        if len(bars) > 1 or archive is None:
            return bars, units
        listed, page_of = archive_index(await self.page(archive), code)
        periods = [(day.replace("-", ""), page_of[day]) for day in listed if day in page_of]
        bars = []
        for day, href in periods[:limit]:
            bulletin = await self.page(href)
            row = self._bulletin_row(bulletin, code, tool, fields)
            if row is None:
                continue
            bars.append({"date": day, **row})
            for rows in bulletin.tables:
                if rows and len(rows[0]) > 2:
                    for f in fields:
                        c = _column(rows[0], tool, f)
                        suffix = UNIT_SUFFIX.search(rows[0][c]) if c is not None else None
                        if suffix:
                            units[f] = suffix.group(1)
        return sorted(bars, key=lambda b: b["date"], reverse=True), units


    async def _bulletin_rows(self, archive_href: str, code: str, tool: str, fields: Sequence[str],
                             n: int, skip_unlisted: bool = False) -> list[dict[str, Any]]:
        sessions, page_of = archive_index(await self.page(archive_href), code)
        rows = []
        for day in sessions[:n]:
            if day not in page_of:
                break
            found = self._bulletin_row(await self.page(page_of[day]), code, tool, fields)
            if found is None and skip_unlisted:
                continue  # not listed that session: suspended
            if found is None:
                break
            rows.append({"date": day.replace("-", ""), **found})
        return rows

    @staticmethod
    def _bulletin_row(page: ParsedPage, code: str, tool: str, fields: Sequence[str]) -> dict[str, float] | None:
        for rows in page.tables:
            if not rows or len(rows[0]) < 3:
                continue
            columns = [_column(rows[0], tool, f) for f in fields]
            row = next((r for r in rows[1:] if r and r[0] == code), None)
            if row is None or any(c is None for c in columns):
                continue
            values = [cell_number(row[c]) if c is not None and c < len(row) else None for c in columns]
            if all(v is not None for v in values):
                return dict(zip(fields, values))  # type: ignore[arg-type]
        return None

    async def board(self) -> ParsedPage | None:
        """A portal's constituents board of the question's index (every member's figures of the
        latest session), when the search engine finds one: one read instead of the bulletins."""
        code = self.state.question.entity
        if not code:
            return None
        for query in (f"{code} constituents quotes", f"{code} 成分股行情"):
            # A results page further down than a question's usual reading (the board's title is
            # one of many pages naming the index's code).
            for item in await self.agent._search(self.state, query, limit=2 * RESULTS_PER_QUERY):
                if urlsplit(item["url"]).path.endswith(f"/constituents/{code}.html"):
                    return await self.page(urlsplit(item["url"]).path)
        return None

    async def cross_section(self, codes: Sequence[str], tool: str, field_name: str) -> dict[str, float] | None:
        """Each code's `field_name` on the latest session: from the index's constituents board when
        a portal publishes one listing every code (and it is of the latest session), else from its
        exchange's bulletins."""
        board = await self.board()
        if board is not None and (not board.as_of or board.as_of.replace("-", "") >= self._latest_session()):
            listed = self._listed(board, tool, field_name)
            if listed and all(c in listed for c in codes):
                # A member with dashes for figures did not trade that session.
                return {c: v for c in codes if (v := listed[c]) is not None}
        by_exchange: dict[str, list[str]] = {}
        for code in codes:
            exchange = {"SH": "SSE", "SZ": "SZSE"}.get(code.rsplit(".", 1)[-1])
            if exchange is None:
                return None
            by_exchange.setdefault(exchange, []).append(code)
        values: dict[str, float] = {}
        covered: set[str] = set()  # codes whose page was read: one it does not list did not trade
        for exchange, members in sorted(by_exchange.items()):
            archive = await self.page(f"/exchange/bulletin/{exchange}/{tool}/index.html")
            latest: str | None = None
            pages: list[str] = []
            for href, text in archive.links:
                found = _ARCHIVE_ITEM.match(text)
                if not found:
                    continue
                latest = latest or found.group(1)
                if found.group(1) == latest and any(found.group(2) <= c <= found.group(3) for c in members):
                    pages.append(href)
                    covered.update(c for c in members if found.group(2) <= c <= found.group(3))
            for href in pages:
                page = await self.page(href)
                for code in members:
                    row = self._bulletin_row(page, code, tool, [field_name])
                    if row is not None:
                        values[code] = row[field_name]
        return values if values and all(c in covered for c in codes) else None

    @staticmethod
    def _listed(page: ParsedPage, tool: str, field_name: str) -> dict[str, float | None]:
        """Every code a table of `page` lists with a column of `field_name` of `tool`: its value,
        None where the row prints no figure (the instrument did not trade)."""
        listed: dict[str, float | None] = {}
        for rows in page.tables:
            if not rows or len(rows[0]) < 3:
                continue
            column = _column(rows[0], tool, field_name)
            if column is None:
                continue
            for row in rows[1:]:
                if row and re.fullmatch(r"\d{6}\.(?:SH|SZ)", row[0]):
                    listed[row[0]] = cell_number(row[column]) if column < len(row) else None
        return listed


async def investigate(agent: NavigatorAgent, state: _Question, name: str, parts: dict[str, str]) -> str | None:
    """The answer of one investigation, computed from what the web shows."""
    from livesearch_pipeline.evaluation.agents.reading import _precision

    question = state.question
    work = _Investigator(agent, state)
    answer_kind, _, decimals = _precision(question.question)
    places = 2 if decimals is None else decimals
    cls = question.asset_class
    if name in ("drawdown", "drawdown_day"):
        n = int(parts["n"])
        bars, factor = _BARS.get(cls), _FACTORS.get(cls)
        if bars is None:
            return None
        rows = await work.series(question.entity, bars, ["close"], n)
        if rows is None:
            return None
        closes = [r["close"] for r in reversed(rows)]
        if factor is not None:
            factors = await work.series(question.entity, factor, ["adj_factor"], n)
            if factors is None or [f["date"] for f in factors] != [r["date"] for r in rows]:
                return None
            closes = [c * f["adj_factor"] for c, f in zip(closes, reversed(factors))]
        if any(c <= 0 for c in closes):
            return None
        fall, peak, trough = _drawdown(closes)
        dates = [r["date"] for r in reversed(rows)]
        if name == "drawdown":
            return f"{fall:.{places}f}%"
        return _as_date(dates[peak if parts["which"] == "peak" else trough])
    if name == "volume_day":
        bars, calendar = _BARS.get(cls), _CALENDARS.get(cls)
        n = int(parts["n"])
        # The sessions of the window on the market's calendar: a suspended stock has fewer records.
        since = (sessions_back(calendar, session_on_or_before(calendar, agent.as_of), n - 1).strftime("%Y%m%d")
                 if calendar else None)
        rows = await work.series(question.entity, bars, ["vol", "pct_chg"], n, since) if bars else None
        if rows is None:
            return None
        ordered = list(reversed(rows))
        best = max(ordered, key=lambda r: r["vol"])
        return f"{best['pct_chg']:.{places}f}%"
    if name == "best_month":
        tool = _MONTHS.get(cls)
        if tool is None:
            return None
        target = "amount" if "turnover" in parts["noun"] or "amount" in parts["noun"] else "close"
        bars, units = await work.bars(question.entity, tool, ["pct_chg", target], limit=int(parts["n"]) + 1)
        months = [(bar["date"], bar["pct_chg"], bar[target]) for bar in bars]
        clock = agent.as_of.strftime("%Y%m")
        completed = sorted((m for m in months if m[0][:6] < clock), reverse=True)[: int(parts["n"])]
        if len(completed) < int(parts["n"]):
            return None
        best = max(completed, key=lambda m: m[1])
        reading = Reading(kind="latest", name="", quantity_en="", quantity_zh=None, answer=answer_kind,
                          unit=_precision(question.question)[1], decimals=decimals)
        unit = units.get(target)
        chosen = choose([Candidate(best[2], unit or None, best[0], "", 0, target)], reading)
        return chosen[0] if chosen else None
    if name == "screen":
        subject = parts.get("subj") or parts.get("subj2") or ""
        code = _CODE.findall(subject)
        if not code:
            return None
        members_tool = "index_weight" if parts.get("subj") else "index_member"
        page = await work.page(f"/exchange/{members_tool}/{code[-1]}.html")
        codes: list[str] = []
        for rows in page.tables:
            found = [cell for row in rows[1:] for cell in row if re.fullmatch(r"\d{6}\.(?:SH|SZ)", cell)]
            if found:
                codes = list(dict.fromkeys(codes + found))  # a membership list: one table per join date
                if members_tool == "index_weight":
                    break  # the latest rebalance's table comes first; the members' tables add up
        if not codes:
            return None
        ask = parts["ask"]
        if ask.startswith("closed higher"):
            values = await work.cross_section(codes, "daily", "pct_chg")
            return None if values is None else str(sum(1 for v in values.values() if v > 0))
        tool, field_name, op = _SCREEN_FIELDS[ask]
        values = await work.cross_section(codes, tool, field_name)
        if not values:
            return None
        pick = (min if op == "argmin" else max)(values.items(), key=lambda item: item[1])
        return pick[0]
    if name in ("compare", "adj_return"):
        n = window_rows("pct_change", int(parts["n"]))
        codes = [_CODE.findall(parts["subj"])[-1:], _CODE.findall(parts.get("other", ""))[-1:]]
        returns = []
        for found in codes[: 2 if name == "compare" else 1]:
            if not found:
                return None
            other_cls = cls if found[0] == question.entity else _class_of(found[0], cls)
            bars, calendar = _BARS.get(other_cls), _CALENDARS.get(other_cls)
            # From the close of the session n - 1 back on the market's calendar: the first record on
            # or after it (a stock suspended that day has none).
            since = (sessions_back(calendar, session_on_or_before(calendar, agent.as_of), n - 1).strftime("%Y%m%d")
                     if calendar else None)
            rows = await work.series(found[0], bars, ["close"], n, since) if bars else None
            if not rows:
                return None
            closes = [r["close"] for r in rows]  # newest first
            if name == "adj_return":
                factor = _FACTORS.get(cls)
                factors = await work.series(found[0], factor, ["adj_factor"], n, since) if factor else None
                by_day = {f["date"]: f["adj_factor"] for f in factors or []}
                if any(r["date"] not in by_day for r in rows):
                    return None
                closes = [c * by_day[r["date"]] for c, r in zip(closes, rows)]
            if closes[-1] <= 0:
                return None
            returns.append((closes[0] - closes[-1]) / abs(closes[-1]) * 100)
        value = returns[0] - returns[1] if name == "compare" else returns[0]
        suffix = "" if answer_kind != "percent" else "%"
        return f"{value:.{places}f}{suffix}"
    if name == "premium":
        # The latest published NAV (a session late), then the fund's close on that NAV's day.
        navs = await work.series(question.entity, "fund_nav", ["unit_nav"], 1)
        if not navs or not navs[0]["unit_nav"]:
            return None
        closes = await work.series(question.entity, "fund_daily", ["close"], 1 + max(_publication_lags().values()))
        close = next((r["close"] for r in closes or [] if r["date"] == navs[0]["date"]), None)
        if close is None:
            return None
        return f"{(close / navs[0]['unit_nav'] - 1) * 100:.{places}f}%"
    if name in ("margin", "growth_period", "growth_year"):
        tool = _INCOME.get(cls)
        if tool is None:
            return None
        if name == "margin":
            fields = [_statement_field(tool, parts["num"]), _statement_field(tool, parts["den"])]
        else:
            fields = [_statement_field(tool, parts["noun"])]
        if any(f is None for f in fields):
            return None
        hub = await work.page(f"/exchange/company/{question.entity}.html")
        periods = report_periods(hub, question.entity)
        if name == "growth_year":
            periods = [p for p in periods if p.endswith("1231")]
        if not periods:
            return None
        latest = periods[0]

        def statement(page: ParsedPage) -> list[float | None] | None:
            found = [report_figure(page, tool, f) for f in fields]  # type: ignore[arg-type]
            return found if any(v is not None for v in found) else None

        figures = await work.report(f"/exchange/reports/{question.entity}/{latest}.html", statement) or [None] * len(fields)
        if name == "margin":
            if figures[0] is None or not figures[1]:
                return None
            return f"{figures[0] / figures[1] * 100:.{places}f}%"
        before = f"{int(latest[:4]) - 1}{latest[4:]}"
        if before not in periods:
            return None  # the same period a year earlier is not on the web
        # The comparative the company compares against (issue 39): as the latest report restated it,
        # where it did (the whole report is read to know), else as the earlier report published it.
        from livesearch_pipeline.evaluation.agents.reconciled import period_figures

        earlier = await work.report(f"/exchange/reports/{question.entity}/{latest}.html",
                                    lambda page: period_figures(page, tool, fields[0]).get(before))  # type: ignore[arg-type]
        if earlier is None:
            earlier = (await work.report(f"/exchange/reports/{question.entity}/{before}.html", statement) or [None])[0]
        if figures[0] is None or not earlier:
            return None
        return f"{(figures[0] - earlier) / abs(earlier) * 100:.{places}f}%"
    if name in ("cagr", "ah_premium", "cross_currency", "peer_best", "growth_first", "fiscal_growth"):
        from livesearch_pipeline.evaluation.agents.reconciled import reconcile

        return await reconcile(work, name, parts, cls, question.entity, places)
    if name == "three_indices":
        n = int(parts["n"])
        changes: dict[str, float] = {}
        for code in (parts["a"], parts["b"], parts["c"]):
            rows = await work.series(code, "index_daily", ["close"], window_rows("pct_change", n))
            if rows is None or rows[-1]["close"] == 0:
                return None
            changes[code] = (rows[0]["close"] - rows[-1]["close"]) / abs(rows[-1]["close"]) * 100
        pick = (max if parts["move"] == "highest" else min)(changes.items(), key=lambda item: item[1])
        return pick[0]
    return None
