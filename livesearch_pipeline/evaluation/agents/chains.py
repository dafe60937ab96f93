"""The navigator's dependent chains whose later hops depend on a date or an entity the first hop
names (issue 29), worked as an analyst works them on the web:

- a fund's largest holding → that stock's industry (its profile page) → the industry index that
  lists it (found by searching the industry's name, checked on the index's members page) → the
  index's change over the window (its quote page, monthly pages or bulletins);
- the change, or the highest close, since the day the latest financial report was published: the
  company page names the latest report, the report prints its announcement date, then the closes
  from that day (or the first session after it) to the latest session;
- the change since the ex-dividend date of the latest implemented dividend (the dividend page);
- the payout ratio of the latest implemented cash dividend: its pre-tax cash dividend per share
  (the dividend page) over the basic EPS of the period it pays for (that period's report page);
- the figure on the session of the last N on which the stock closed highest: the closes of the
  window, then the figure on that session (from the same rows, or read as a snapshot that many
  sessions back from the page of the data set printing it);
- an ETF's premium of its close over its latest published NAV: the NAV page (dated by NAV date),
  then the close of that session;
- a figure of the latest Hong Kong or New York session converted into CNY: the figure exactly as
  the exchange's quote page prints it, then that session's closing bid rates (the FX release).

Every page opened counts against the question's read budget (`NavigatorAgent._read`); the
navigator dispatches here through `read_chain_shape` / `answer_chain_shape`.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Sequence

from livesearch_pipeline.core.models import Prediction, ServedQuestion
from livesearch_pipeline.evaluation.agents.loop import ToolFailure
from livesearch_pipeline.evaluation.agents.reading import (
    ParsedPage, Reading, UnreadableQuestion, _precision, cell_number, read_question,
)

from livesearch_pipeline.evaluation.agents.page_reading import (
    archive_index, BudgetExhausted, _column, _Question, fx_bid_closes, history_rows, report_periods,
    top_of_first_hop,
)

# The navigator (evaluation/agents/navigator.py `NavigatorAgent`) imports this module and hands each
# chain itself and its page reader (`_Investigator`): typed loosely here so that the two modules
# do not import each other.
NavigatorAgent = Any

# A figure of the latest Hong Kong or New York session converted into CNY.
_FX_CONVERT = re.compile(r"^What was the (?P<noun>.+?) of (?P<subj>.+? \([0-9A-Z.]+\)) on the most recent "
                         r"(?P<market>Hong Kong|New York) trading day, converted into CNY at that day's closing ")

_SUBJ = r"(?P<subj>.+?)"
CHAIN_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("fund_industry", re.compile(
        rf"^Take the largest stock holding of {_SUBJ} by market value in its most recently published portfolio\. "
        r"By what percentage did the industry index that stock belongs to change from the close (?P<n>\d+) trading "
        r"days before the most recent one to the most recent close")),
    ("report_change", re.compile(
        rf"^By what percentage has the closing price of {_SUBJ} changed from the close on the day its most recent "
        r"financial report was announced, or the first trading day after it, to the most recent trading day")),
    ("report_high", re.compile(
        rf"^What was the highest closing price of {_SUBJ} since the day its most recent financial report was "
        r"announced, counting that day")),
    ("ex_date_change", re.compile(
        rf"^For {_SUBJ}, by what percentage did the closing price change from the ex-dividend date of its most "
        r"recently implemented dividend to the most recent trading day")),
    ("payout_ratio", re.compile(
        rf"^For {_SUBJ}, what was the payout ratio of its most recently implemented cash dividend, that is the "
        r"pre-tax cash dividend per share divided by the basic EPS of the period it pays for")),
    ("nav_premium", re.compile(
        rf"^What was the premium of the closing price of {_SUBJ} over its NAV per unit on the most recent trading "
        r"day whose NAV has been published")),
    ("top_close_day", re.compile(
        rf"^On the trading day within the last (?P<n>\d+) sessions when {_SUBJ} closed highest, what was its "
        r"(?P<noun>.+?)(?P<tail>, (?:in|as|to) [^?]+\?.*)$")),
)

# The quote data set of each asset class (the closes a chain's last hop reads).
_BARS = {"cn_equity": "daily", "hk_equity": "hk_daily", "us_equity": "us_daily", "index": "index_daily",
         "fund": "fund_daily"}
_INCOME = {"cn_equity": "income", "hk_equity": "hk_income", "us_equity": "us_income"}
_IMPLEMENTED = frozenset({"实施", "implemented"})
_DAY = re.compile(r"\d{8}")


class ChainFailure(Exception):
    """A hop found nothing on the page it read (the reason is the trace's)."""


def read_chain_shape(question: ServedQuestion) -> tuple[str, dict[str, str]] | None:
    """Which of the chains above (or a figure converted into CNY, `_FX_CONVERT`) the question asks,
    and its parts (subject, window, noun, tail, market)."""
    for name, pattern in (*CHAIN_SHAPES, ("fx_convert", _FX_CONVERT)):
        found = pattern.match(question.question)
        if found:
            return name, {k: v for k, v in found.groupdict().items() if v is not None}
    return None


# --------------------------------------------------------------------------- page reading

@functools.lru_cache(maxsize=None)
def _field_labels(tool: str, field_name: str) -> frozenset[str]:
    """The labels the exchange prints a field under, in either language (lower case, no unit): the
    catalog's description for a field the lexicon has no noun of (dates, codes: `_column` reads the
    lexicon's nouns in any site's words)."""
    from livesearch_pipeline.dataservice.catalog import collect_tool_specs
    from livesearch_pipeline.web.formatting import _label

    out: set[str] = set()
    for spec in collect_tool_specs():
        if spec.meta.name != tool:
            continue
        for f in spec.meta.fields:
            if f.name == field_name:
                out.update(_label(spec.meta, f, lang).lower() for lang in ("en", "zh"))
    return frozenset(out)


@functools.lru_cache(maxsize=None)
def field_of_noun(noun: str, asset_class: str) -> tuple[tuple[str, str, str], ...]:
    """(data set, field, Chinese noun) of every entity field of `asset_class` whose English noun is
    `noun` (the lexicon's, as the question names it)."""
    from livesearch_pipeline.core.lexicon import load_lexicon
    from livesearch_pipeline.dataservice.catalog import collect_tool_specs
    from livesearch_pipeline.web.wording import canonical_label

    lexicon, wanted = load_lexicon(), canonical_label(noun, "en")
    out = []
    for spec in collect_tool_specs():
        meta = spec.meta
        if meta.role != "data" or meta.entity_param is None or asset_class not in meta.asset_classes:
            continue
        for f in meta.fields:
            entry = lexicon.entry(meta.name, f.name)
            if entry is not None and entry.en and canonical_label(entry.en, "en") == wanted:
                out.append((meta.name, f.name, entry.zh or ""))
    return tuple(out)


def _bare(label: str) -> str:
    from livesearch_pipeline.evaluation.agents.reading import UNIT_SUFFIX

    return UNIT_SUFFIX.sub("", label).strip().lower()


def item_records(page: ParsedPage) -> list[dict[str, str]]:
    """Each item table of a page (label / value / unit) as {bare label: value}."""
    out = []
    for rows in page.tables:
        if rows and len(rows[0]) == 3 and rows[0][0].lower() in ("item", "项目"):
            out.append({_bare(r[0]): r[1] for r in rows[1:] if len(r) >= 2})
    return out


def record_value(record: dict[str, str], tool: str, field_name: str) -> str | None:
    """The value an item record prints for `field_name` of `tool` (any of its labels)."""
    labels = list(record)
    position = _column(labels, tool, field_name)
    if position is None:
        wanted = _field_labels(tool, field_name)
        position = next((i for i, label in enumerate(labels) if label in wanted), None)
    return None if position is None else record[labels[position]]


def report_announcement(page: ParsedPage, tool: str) -> str | None:
    """The announcement date (YYYYMMDD) a report page prints for its statement `tool`: the first
    item table giving one (the income statement leads the report)."""
    for record in item_records(page):
        day = record_value(record, tool, "ann_date")
        if day and _DAY.fullmatch(day):
            return day
    return None


def latest_implemented(page: ParsedPage) -> dict[str, str] | None:
    """The dividend page's implemented record announced last (its plan's stage 实施): the record
    the question's "most recently implemented dividend" names, as {bare label: value}."""
    best: tuple[str, dict[str, str]] | None = None
    for record in item_records(page):
        stage = record_value(record, "dividend", "div_proc")
        announced = record_value(record, "dividend", "ann_date") or ""
        if (stage or "").lower() not in _IMPLEMENTED or not _DAY.fullmatch(announced):
            continue
        if best is None or announced > best[0]:
            best = (announced, record)
    return best[1] if best else None


def fina_eps(page: ParsedPage) -> float | None:
    """The basic EPS of a report page's financial indicators (the table that also prints the book
    value per share: the income statement's own EPS line is another table)."""
    for record in item_records(page):
        if record_value(record, "fina_indicator", "bps") is None:
            continue
        value = record_value(record, "fina_indicator", "eps")
        if value is not None:
            return cell_number(value)
    return None


def latest_nav(page: ParsedPage) -> tuple[str, float]:
    """(NAV date, NAV per unit) of a fund's latest published NAV: its NAV page's history table
    (dated by NAV date), else its latest record (which also prints the publication date)."""
    for record in item_records(page):
        day, value = record_value(record, "fund_nav", "nav_date"), record_value(record, "fund_nav", "unit_nav")
        nav = cell_number(value or "")
        if day and _DAY.fullmatch(day) and nav is not None:
            rows = [r for r in history_rows(page, "fund_nav", ["unit_nav"]) if r["date"] == day]
            return day, rows[0]["unit_nav"] if rows else nav
    raise ChainFailure("the NAV page prints no NAV date")


def stock_industry(page: ParsedPage) -> str | None:
    for record in item_records(page):
        value = record_value(record, "stock_basic", "industry")
        if value and value != "--":
            return value
    return None


def lists_member(page: ParsedPage, stock: str) -> bool:
    """Whether an index's members page lists `stock` as a current member (no removal date)."""
    for record in item_records(page):
        if stock in record.values():
            removed = record_value(record, "index_member", "out_date") or ""
            if not _DAY.fullmatch(removed):
                return True
    wanted = _field_labels("index_member", "out_date")
    for rows in page.tables:
        if len(rows) < 2 or rows[0][0].lower() in ("item", "项目"):
            continue
        out = next((i for i, label in enumerate(rows[0]) if _bare(label) in wanted), None)
        for row in rows[1:]:
            if stock in row and (out is None or out >= len(row) or not _DAY.fullmatch(row[out])):
                return True
    return False


def _format(value: float, answer: str, places: int) -> str:
    return f"{value:.{places}f}%" if answer == "percent" else f"{value:.{places}f}"


def _change(closes_oldest_first: Sequence[float]) -> float:
    first, last = closes_oldest_first[0], closes_oldest_first[-1]
    if first == 0:
        raise ChainFailure("a window starting at a close of zero has no percentage change")
    return (last - first) / abs(first) * 100


# --------------------------------------------------------------------------- the chains

class _Chain:
    """One chain's reads, through the navigator (budget, trace, page cache)."""

    def __init__(self, agent: NavigatorAgent, state: _Question, investigator: Callable[..., Any]) -> None:
        self.agent, self.state = agent, state
        self.work = investigator(agent, state)

    def note(self, **entry: Any) -> None:
        self.state.trace.append({"type": "chain", **entry})

    async def closes_since(self, code: str, tool: str, first_day: str) -> list[dict[str, Any]]:
        """The closes of `code` on every session it traded from `first_day` (or the first session
        after it) to its latest record, oldest first: the quote page's history table, else the
        bulletins its page links (a session whose bulletin lacks the stock: it did not trade),
        then its monthly history pages, until the sessions read reach back to `first_day`."""
        work = self.work
        page = await work.page(f"/exchange/{tool}/{code}.html")
        rows = history_rows(page, tool, ["close"])
        if not rows:
            raise ChainFailure(f"the quote page of {code} prints no close")
        found = {r["date"]: r["close"] for r in rows}
        covered = rows[-1]["date"]  # every session from here to the latest record is read
        archive = next((href for href, _ in page.links if "/exchange/bulletin/" in href), None)
        if covered > first_day and len(rows) == 1 and archive is not None:
            listed, page_of = archive_index(await work.page(archive), code)
            for day, href in ((d.replace("-", ""), page_of[d]) for d in listed if d in page_of):
                if day >= covered:
                    continue
                if day < first_day:
                    covered = first_day
                    break
                row = work._bulletin_row(await work.page(href), code, tool, ["close"])
                if row is not None:
                    found[day] = row["close"]
                covered = day  # a bulletin without the stock's row: it did not trade that day
        months = sorted({href for href, _ in page.links if f"/exchange/{tool}/{code}/history/" in href}, reverse=True)
        for month in months:
            if covered <= first_day:
                break
            ym = month.rsplit("/", 1)[1][:7].replace("-", "")
            if ym > covered[:6] or ym < first_day[:6]:
                continue
            for r in history_rows(await work.page(month), tool, ["close"]):
                found.setdefault(r["date"], r["close"])
            covered = ym + "01"
        if covered > first_day:
            raise ChainFailure(f"no page gave the closes of {code} back to {first_day}")
        kept = [{"date": d, "close": found[d]} for d in sorted(found) if d >= first_day]
        if not kept:
            raise ChainFailure(f"no close of {code} since {first_day}")
        return kept

    async def latest_report_day(self, code: str) -> str:
        """The announcement date of the latest periodic report the company page lists."""
        tool = _INCOME.get(self.state.question.asset_class)
        if tool is None:
            raise ChainFailure("no periodic reports for this asset class")
        hub = await self.work.page(f"/exchange/company/{code}.html")
        periods = report_periods(hub, code)
        if not periods:
            raise ChainFailure(f"the company page of {code} lists no periodic report")
        # An obscure company's report is a long document: read on from its cover to the income
        # statement, which prints the announcement date.
        day = await self.work.report(f"/exchange/reports/{code}/{periods[0]}.html",
                                     lambda page: report_announcement(page, tool))
        if day is None:
            raise ChainFailure(f"the report of {periods[0]} prints no announcement date")
        self.note(report=periods[0], announced=day)
        return day

    async def dividend(self, code: str) -> dict[str, str]:
        page = await self.work.page(f"/exchange/dividend/{code}.html")
        record = latest_implemented(page)
        if record is None:
            raise ChainFailure(f"the dividend page of {code} shows no implemented dividend")
        return record


async def _run(chain: _Chain, name: str, parts: dict[str, str]) -> str:
    question = chain.state.question
    answer, _, decimals = _precision(question.question)
    places = 2 if decimals is None else decimals
    code = question.entity
    bars = _BARS.get(question.asset_class)
    if name in ("report_change", "report_high"):
        if bars is None:
            raise ChainFailure("no quote data set for this asset class")
        day = await chain.latest_report_day(code)
        rows = await chain.closes_since(code, bars, day)
        closes = [r["close"] for r in rows]
        chain.note(first=rows[0]["date"], last=rows[-1]["date"], sessions=len(rows))
        value = _change(closes) if name == "report_change" else max(closes)
        return _format(value, "percent" if name == "report_change" else answer, places)
    if name == "ex_date_change":
        if bars is None:
            raise ChainFailure("no quote data set for this asset class")
        record = await chain.dividend(code)
        ex = record_value(record, "dividend", "ex_date") or ""
        if not _DAY.fullmatch(ex):
            raise ChainFailure("the implemented dividend prints no ex-dividend date")
        rows = await chain.closes_since(code, bars, ex)
        chain.note(ex_date=ex, first=rows[0]["date"], sessions=len(rows))
        return _format(_change([r["close"] for r in rows]), "percent", places)
    if name == "payout_ratio":
        record = await chain.dividend(code)
        cash = cell_number(record_value(record, "dividend", "cash_div_tax") or "")
        period = record_value(record, "dividend", "end_date") or ""
        if cash is None or not _DAY.fullmatch(period):
            raise ChainFailure("the implemented dividend prints no pre-tax cash dividend or period")
        eps = await chain.work.report(f"/exchange/reports/{code}/{period}.html", fina_eps)
        chain.note(cash_div_tax=cash, period=period, eps=eps)
        if not eps:
            raise ChainFailure(f"the report of {period} prints no basic EPS")
        return _format(cash / eps * 100, "percent", places)
    if name == "fund_industry":
        return await _fund_industry(chain, parts, places)
    if name == "nav_premium":
        nav_day, nav = latest_nav(await chain.work.page(f"/exchange/fund_nav/{code}.html"))
        rows = await chain.closes_since(code, "fund_daily", nav_day)
        if rows[0]["date"] != nav_day:
            raise ChainFailure(f"no close of {code} on its NAV date {nav_day}")
        chain.note(nav_date=nav_day, unit_nav=nav, close=rows[0]["close"])
        if not nav:
            raise ChainFailure("a NAV of zero")
        return _format((rows[0]["close"] - nav) / abs(nav) * 100, "percent", places)
    if name == "fx_convert":
        return await _fx_convert(chain, parts, places)
    raise ChainFailure(f"no reader for {name}")


async def _fund_industry(chain: _Chain, parts: dict[str, str], places: int) -> str:
    from livesearch_pipeline.core.program import window_rows
    holder = chain.state.question.entity
    try:
        stock = top_of_first_hop(await chain.work.page(f"/exchange/fund_portfolio/{holder}.html"), "fund_portfolio")
    except ToolFailure:
        # An obscure fund publishes its holdings only in its periodic reports: its newest one,
        # from its company page, read on to the holdings.
        stock = await chain.agent._from_reports(chain.state, holder,
                                                lambda page: top_of_first_hop(page, "fund_portfolio"))
    if stock is None:
        raise ChainFailure(f"no stock found on the portfolio page of {holder}")
    industry = stock_industry(await chain.work.page(f"/exchange/stock_basic/{stock}.html"))
    if industry is None:
        raise ChainFailure(f"the profile page of {stock} names no industry")
    chain.note(stock=stock, industry=industry)
    # The industry's index, by its name in the search results (a search is not a read), checked on
    # the index's members page.
    candidates: list[str] = []
    for query in (f"{industry} 行业指数", f"{industry} industry index"):
        for item in await chain.agent._search(chain.state, query):
            title = str(item.get("title", ""))
            found = re.search(r"\b(\d{6}\.SI)\b", title)
            if found and f"{industry}行业指数" in title.replace(" ", "") and found.group(1) not in candidates:
                candidates.append(found.group(1))
        if candidates:
            break
    index = None
    for code in candidates[:3]:
        try:
            members = await chain.work.page(f"/exchange/index_member/{code}.html")
        except ToolFailure:
            continue
        if lists_member(members, stock):
            index = code
            break
    if index is None:
        raise ChainFailure(f"no industry index found listing {stock} ({industry})")
    n = window_rows("pct_change", int(parts["n"]))
    rows = await chain.work.series(index, "index_daily", ["close"], n)
    if rows is None:
        raise ChainFailure(f"no page gave the last {n} closes of {index}")
    chain.note(index=index, first=rows[-1]["date"], last=rows[0]["date"])
    return _format(_change([r["close"] for r in reversed(rows)]), "percent", places)


def latest_item(page: ParsedPage, tool: str, field_name: str) -> tuple[str, float, str] | None:
    """(session, figure, unit) of `field_name` in a quote page's latest record (its item table)."""
    for rows in page.tables:
        if not rows or len(rows[0]) != 3 or rows[0][0].lower() not in ("item", "项目"):
            continue
        labels = [r[0] for r in rows[1:] if r]
        position = _column(labels, tool, field_name)
        day = next((r[1] for r in rows[1:] if len(r) > 1 and _DAY.fullmatch(r[1])), None)
        if position is None or day is None or len(rows[1 + position]) < 3:
            continue
        value = cell_number(rows[1 + position][1])
        if value is not None:
            return day, value, rows[1 + position][2]
    return None


async def _fx_convert(chain: _Chain, parts: dict[str, str], places: int) -> str:
    """A figure of the latest session converted into CNY: the figure as the exchange's quote page
    prints it (exact, in its own currency), then that session's closing bid rates from the FX
    release of the day (USD/CNH, and USD/HKD for a Hong Kong figure)."""
    from livesearch_pipeline.evaluation.agents.reading import convert

    question = chain.state.question
    hk = parts["market"] == "Hong Kong"
    currency = "HKD" if hk else "USD"
    code = question.entity
    found = None
    for tool, field_name, _ in field_of_noun(parts["noun"], question.asset_class):
        if tool.endswith("_mins"):
            continue  # minute bars are not the session's figure
        try:
            page = await chain.work.page(f"/exchange/{tool}/{code}.html")
        except ToolFailure:
            continue  # no exchange page of that data set (the read still counts)
        found = latest_item(page, tool, field_name)
        if found is not None:
            break
    if found is None:
        raise ChainFailure(f"no exchange page gave the {parts['noun']} of {code}")
    day, value, unit = found
    native = convert(value, unit or currency, currency)
    if native is None:
        raise ChainFailure(f"a figure in {unit} is not in {currency}")
    rates = fx_bid_closes(await chain.work.page(f"/stats/fx_daily/{day}.html"), day)
    usdcnh, usdhkd = rates.get("USDCNH"), rates.get("USDHKD")
    if not usdcnh or (hk and not usdhkd):
        raise ChainFailure(f"the FX release of {day} gives no closing bid rate of USD/CNH or USD/HKD")
    cny = native / (usdhkd if hk and usdhkd else 1.0) * usdcnh
    chain.note(session=day, figure=native, currency=currency, usdcnh=usdcnh, **({"usdhkd": usdhkd} if hk else {}))
    _, wanted, _ = _precision(question.question)
    stated = convert(cny, "CNY", wanted)
    if stated is None:
        raise ChainFailure(f"a figure in CNY cannot be stated in {wanted}")
    return f"{stated:.{places}f}"


async def _top_close_day(agent: NavigatorAgent, chain: _Chain, parts: dict[str, str]) -> Prediction | str:
    """The figure on the session of the window with the highest close: the window's closes, then
    the figure read as a snapshot that many sessions back (the close itself from the window)."""
    question = chain.state.question
    bars = _BARS.get(question.asset_class)
    if bars is None:
        raise ChainFailure("no quote data set for this asset class")
    n = int(parts["n"])
    fields = field_of_noun(parts["noun"], question.asset_class)
    own = next((name for tool, name, _ in fields if tool == bars and name != "close"), None)
    rows = await chain.work.series(question.entity, bars, ["close", own] if own else ["close"], n)
    if rows is None:
        raise ChainFailure(f"no page gave the last {n} closes")
    ordered = list(reversed(rows))  # oldest first
    top = max(r["close"] for r in ordered)
    if sum(1 for r in ordered if r["close"] == top) > 1:
        raise ChainFailure("two sessions share the highest close")
    best = next(r for r in ordered if r["close"] == top)
    back = len(ordered) - 1 - ordered.index(best)
    chain.note(top_day=best["date"], sessions_back=back)
    answer, _, decimals = _precision(question.question)
    if parts["noun"] == "closing price" or own:
        # The figure is on the quote rows already read.
        return _format(top if not own else best[own], answer, 2 if decimals is None else decimals)
    subj = parts["subj"]
    when = "on the most recent trading day" if back == 0 else f"on the trading day {back} sessions before the most recent one"
    # The exchange prints its labels in Chinese for the Chinese market: the noun's Chinese name.
    noun_zh = next((zh for _, _, zh in fields if zh), None)
    code = question.entity
    second = question.model_copy(update={
        "question": f"What was the {parts['noun']} of {subj} {when}{parts['tail']}",
        "question_zh": f"{code}（{code}）最近一个交易日之前第{back}个交易日的{noun_zh}是多少？" if noun_zh else None})
    try:
        reading = read_question(second)
    except UnreadableQuestion as exc:
        raise ChainFailure(str(exc)) from exc
    chain.state.question, chain.state.reading = second, reading
    chain.note(question=second.question)
    prediction = await agent._answer_state(chain.state)
    return prediction.model_copy(update={"qid": question.qid})


async def answer_chain_shape(agent: NavigatorAgent, question: ServedQuestion, name: str,
                             parts: dict[str, str], investigator: Callable[..., Any]) -> Prediction:
    """The answer of one chain above, within the navigator's read budget."""
    state = _Question(question, Reading(kind="chain", name="", quantity_en=name, quantity_zh=None),
                      agent.budget)
    state.trace.append({"type": "reading", "kind": "chain", "chain": name, "parts": parts,
                        "budget": agent.read_budget})
    chain = _Chain(agent, state, investigator)
    try:
        if name == "top_close_day":
            result = await _top_close_day(agent, chain, parts)
            if isinstance(result, Prediction):
                return result
            answer: str | None = result
        else:
            answer = await _run(chain, name, parts)
    except BudgetExhausted:
        return agent._spent(state)
    except (ChainFailure, ToolFailure) as exc:
        state.trace.append({"type": "final", "answer": None, "reason": str(exc), "reads": state.reads})
        return Prediction(qid=question.qid, answer=None, trace=state.trace)
    state.trace.append({"type": "final", "answer": answer, "reads": state.reads})
    return Prediction(qid=question.qid, answer=answer, trace=state.trace)
