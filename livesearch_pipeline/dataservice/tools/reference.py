"""Reference and calendar tools (service "reference").

Lists of instruments show only what exists on the service clock: an instrument appears from its
listing date, a name change from its effective date, a manager from the announcement of the
appointment. Trading calendars are the real exchange calendars (exchange-calendars: XSHG for
SSE/SZSE, XHKG for HKEX, XNYS for NYSE/NASDAQ) and stop at the clock like every other record.
All people, companies and web addresses are fictional (addresses use the reserved .example domain).
"""

from __future__ import annotations

import bisect
import datetime as dt
from typing import Any

from livesearch_pipeline.core.calendars import CALENDAR_START, get_calendar, session_dates
from livesearch_pipeline.dataservice.market.reporting import FiscalCalendar, announcement_day, earliest_session_on_or_after
from livesearch_pipeline.dataservice.market.rng import generator, stable_hash
from livesearch_pipeline.dataservice.spec import ParamSpec, ToolContext, ToolInputError, ToolSpec
from livesearch_pipeline.dataservice.tools.statements import (
    YMD,
    date_param,
    entity_of,
    fld,
    make_tool,
    optional_date,
    ts_code_param,
    ymd,
)

EXCHANGE_CALENDARS = {"SSE": "XSHG", "SZSE": "XSHG", "HKEX": "XHKG", "NYSE": "XNYS", "NASDAQ": "XNYS"}
CAL_FIRST_DAY = dt.date(2015, 1, 1)

_PROVINCES = (
    ("浙江", "杭州"), ("江苏", "南京"), ("广东", "深圳"), ("上海", "上海"), ("北京", "北京"), ("山东", "济南"),
    ("四川", "成都"), ("湖北", "武汉"), ("福建", "福州"), ("安徽", "合肥"), ("河南", "郑州"), ("湖南", "长沙"),
)
_SURNAMES = "岑邝蔺缪阙庹郦扈仉濮殳蒯宓逯晏暨"
_GIVEN = ("立言", "书远", "舒桐", "嘉禾", "文博", "雨晴", "子航", "静姝", "明哲", "思源", "若谷", "景行", "清扬", "致远")
_EDU = ("本科", "硕士", "博士", "MBA", "EMBA")
_TITLES = (("董事长", 0), ("总经理", 1), ("财务总监", 1), ("董事会秘书", 1), ("董事", 0), ("独立董事", 0), ("监事会主席", 2))
_MAIN_BUSINESS = {
    "银行": "吸收公众存款、发放贷款及结算业务", "证券": "证券经纪、投资银行与资产管理", "保险": "人身保险与财产保险业务",
}


def _person(seed: int, *key: object) -> tuple[str, str]:
    """A fictional person's name and gender."""
    rng = generator(seed, "person", *key)
    name = _SURNAMES[int(rng.integers(len(_SURNAMES)))] + _GIVEN[int(rng.integers(len(_GIVEN)))]
    return name, ("M" if rng.uniform() < 0.75 else "F")


def _region(code: str) -> tuple[str, str]:
    return _PROVINCES[stable_hash("region", code) % len(_PROVINCES)]


def _listed(ctx: ToolContext, asset_class: str) -> list:
    return [e for e in ctx.market.universe.of_class(asset_class) if e.list_date <= ctx.clock]


def _web(entity) -> str:
    stem = "".join(c for c in entity.name_en.lower() if c.isalpha())[:16]
    return f"www.{stem}.example"


# ------------------------------------------------------------------ instrument lists


def _hs_members(ctx: ToolContext) -> dict[str, tuple[str, dt.date]]:
    """Stock Connect eligible A-shares: the larger, better-known half, admitted in waves."""
    members = {}
    for e in ctx.market.universe.of_class("cn_equity"):
        score = e.visibility + (stable_hash(ctx.seed, "hs", e.code) % 5)
        if score < 7:
            continue
        wave = dt.date(2014, 11, 17) if e.code.endswith(".SH") else dt.date(2016, 12, 5)
        admitted = earliest_session_on_or_after("XSHG", max(wave, e.list_date + dt.timedelta(days=180)))
        members[e.code] = ("SH" if e.code.endswith(".SH") else "SZ", admitted)
    return members


def _stock_basic(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    status = args.get("list_status") or "L"
    if status != "L":
        return []  # the synthetic market has no delisted or paused names
    hs = _hs_members(ctx)
    rows = []
    for e in _listed(ctx, "cn_equity"):
        if args.get("ts_code") and e.code != args["ts_code"]:
            continue
        if args.get("exchange") and e.exchange != args["exchange"]:
            continue
        if args.get("market") and e.market != args["market"]:
            continue
        named = ctx.market.names.on(e.code, ctx.clock)
        name = named.name
        if args.get("name") and args["name"] not in name:
            continue
        member = hs.get(e.code)
        is_hs = {"SH": "H", "SZ": "S"}[member[0]] if member and member[1] <= ctx.clock else "N"
        if args.get("is_hs") and is_hs != args["is_hs"]:
            continue
        province, _ = _region(e.code)
        rows.append({
            "ts_code": e.code, "symbol": e.code.split(".")[0], "name": name, "area": province,
            "industry": e.industry, "fullname": f"{name}股份有限公司", "enname": f"{named.name_en} Co., Ltd.",
            "market": e.market, "exchange": e.exchange, "curr_type": e.currency, "list_status": "L",
            "list_date": ymd(e.list_date), "delist_date": None, "is_hs": is_hs,
            "h_code": ctx.market.universe.h_share_of(e.code),
        })
    return sorted(rows, key=lambda r: r["ts_code"])


def _hk_basic(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    if (args.get("list_status") or "L") != "L":
        return []
    rows = []
    for e in _listed(ctx, "hk_equity"):
        if args.get("ts_code") and e.code != args["ts_code"]:
            continue
        named = ctx.market.names.on(e.code, ctx.clock)
        a_code = ctx.market.universe.a_share_of(e.code)
        rows.append({
            "ts_code": e.code, "name": named.name,
            "fullname": f"{named.name}股份有限公司" if a_code else f"{named.name}有限公司",
            "enname": f"{named.name_en} Co., Ltd." if a_code else f"{named.name_en} Limited",
            "market": e.market, "list_status": "L", "list_date": ymd(e.list_date), "delist_date": None,
            "trade_unit": float([100, 200, 500, 1000, 2000][stable_hash(ctx.seed, "lot", e.code) % 5]),
            "isin": f"HK{stable_hash(ctx.seed, 'isin', e.code) % 10**10:010d}", "curr_type": e.currency,
            "fy_end": FiscalCalendar(e.fy_end_month).mmdd, "report_curr": e.reporting_currency, "a_code": a_code,
        })
    return sorted(rows, key=lambda r: r["ts_code"])


def _us_basic(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    if (args.get("list_status") or "L") != "L":
        return []
    rows = []
    for e in _listed(ctx, "us_equity"):
        classify = "ADR" if stable_hash(ctx.seed, "adr", e.code) % 10 == 0 else "EQ"
        if args.get("ts_code") and e.code != args["ts_code"]:
            continue
        if args.get("classify") and classify != args["classify"]:
            continue
        rows.append({
            "ts_code": e.code, "name": e.name_zh, "enname": e.name_en, "classify": classify, "list_status": "L",
            "list_date": ymd(e.list_date), "delist_date": None, "exchange": e.exchange,
            "fy_end": FiscalCalendar(e.fy_end_month).mmdd, "report_curr": e.reporting_currency,
        })
    return sorted(rows, key=lambda r: r["ts_code"])


def _index_basic(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    specs = ctx.market.universe.index_specs
    rows = []
    for e in ctx.market.universe.of_class("index"):
        spec = specs[e.code]
        if e.list_date > ctx.clock:
            continue
        if args.get("ts_code") and e.code != args["ts_code"]:
            continue
        if args.get("market") and e.market != args["market"]:
            continue
        if args.get("publisher") and spec.publisher != args["publisher"]:
            continue
        if args.get("category") and spec.category != args["category"]:
            continue
        if args.get("name") and args["name"] not in e.name:
            continue
        rows.append({
            "ts_code": e.code, "name": e.name, "fullname": e.name_en, "market": e.market, "publisher": spec.publisher,
            "index_type": spec.category, "category": spec.category, "base_date": ymd(spec.base_date),
            "base_point": spec.base_point, "list_date": ymd(e.list_date),
            "weight_rule": "自由流通市值加权" if spec.weight_rule == "float_mv" else "总市值加权",
            "desc": f"{e.name}由{spec.publisher}编制,成分股{len(spec.members)}只" if spec.members else f"{e.name_en}由{spec.publisher}编制",
            "exp_date": None,
        })
    return sorted(rows, key=lambda r: r["ts_code"])


def _fund_basic(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    specs = ctx.market.universe.fund_specs
    market = args.get("market")
    if market is not None and market not in ("E", "O"):
        raise ToolInputError(f"market must be E (exchange-traded) or O (over the counter); got {market!r}")
    rows = []
    for e in ctx.market.universe.of_class("fund"):
        spec = specs[e.code]
        if spec.found_date > ctx.clock:
            continue
        if args.get("ts_code") and e.code != args["ts_code"]:
            continue
        if market and e.market != market:
            continue
        listed = e.list_date <= ctx.clock
        status = "L" if listed else "I"
        if args.get("status") and status != args["status"]:
            continue
        issue_amount = round(2 + stable_hash(ctx.seed, "issue", e.code) % 800 / 10, 2)
        rows.append({
            "ts_code": e.code, "name": e.name, "management": spec.management, "custodian": spec.custodian,
            "fund_type": spec.fund_type, "found_date": ymd(spec.found_date), "due_date": None,
            "list_date": ymd(e.list_date) if (listed and e.market == "E") else None,
            "issue_date": ymd(spec.found_date - dt.timedelta(days=21)), "delist_date": None,
            "issue_amount": issue_amount, "m_fee": spec.m_fee, "c_fee": spec.c_fee, "p_value": 1.0,
            "min_amount": 0.1 if e.market == "O" else None,
            "benchmark": f"{spec.benchmark_index}收益率" if spec.benchmark_index else "沪深300指数收益率*60%+中债综合指数收益率*40%",
            "status": status, "invest_type": spec.invest_type, "type": "契约型开放式", "market": e.market,
        })
    return sorted(rows, key=lambda r: r["ts_code"])


def _fund_companies(ctx: ToolContext) -> dict[str, dt.date]:
    """Fund management companies and their founding dates (before their first fund)."""
    firsts: dict[str, dt.date] = {}
    for code, spec in ctx.market.universe.fund_specs.items():
        firsts[spec.management] = min(firsts.get(spec.management, spec.found_date), spec.found_date)
    return {name: first - dt.timedelta(days=365 + stable_hash(ctx.seed, "fundco", name) % 1500) for name, first in firsts.items()}


def _fund_company(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for name, setup in sorted(_fund_companies(ctx).items()):
        if setup > ctx.clock:
            continue
        province, city = _region(name)
        chairman, _ = _person(ctx.seed, "fundco", name, "chair")
        manager, _ = _person(ctx.seed, "fundco", name, "gm")
        rows.append({
            "name": f"{name}管理有限公司", "shortname": name, "province": province, "city": city,
            "address": f"{city}市金融街{stable_hash('addr', name) % 300 + 1}号", "phone": f"400-{stable_hash('tel', name) % 900 + 100}-{stable_hash('tel2', name) % 9000 + 1000}",
            "website": f"www.fund{stable_hash('web', name) % 10**6:06d}.example", "chairman": chairman, "manager": manager,
            "reg_capital": float(10000 * (1 + stable_hash(ctx.seed, "cap", name) % 30)), "setup_date": ymd(setup),
            "end_date": None, "employees": float(100 + stable_hash(ctx.seed, "emp", name) % 900),
            "main_business": "基金募集、基金销售、资产管理",
        })
    return rows


def _stock_company(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    code = args.get("ts_code")
    exchange = args.get("exchange")
    entities = [entity_of(ctx, code, ("cn_equity",))] if code else _listed(ctx, "cn_equity")
    rows = []
    for e in entities:
        if exchange and e.exchange != exchange:
            continue
        if e.list_date > ctx.clock:
            continue
        province, city = _region(e.code)
        rng = generator(ctx.seed, "company", e.code)
        setup = e.list_date - dt.timedelta(days=int(rng.integers(900, 7000)))
        managers = {title: name for title, name, *_ in _current_managers(ctx, e)}
        total = ctx.market.corporate.total_shares(e.code, min(ctx.clock, e.list_date + dt.timedelta(days=1)))
        rows.append({
            "ts_code": e.code, "com_name": f"{name_on(ctx, e, ctx.clock)}股份有限公司", "com_id": f"91{stable_hash(ctx.seed, 'credit', e.code) % 10**16:016d}",
            "exchange": e.exchange, "chairman": managers.get("董事长"), "manager": managers.get("总经理"),
            "secretary": managers.get("董事会秘书"), "reg_capital": round(total / 1e4, 4), "setup_date": ymd(setup),
            "province": province, "city": city, "introduction": f"{name_on(ctx, e, ctx.clock)}是一家{e.industry}行业公司(合成市场虚构实体)",
            "website": _web(e), "email": f"ir@{_web(e).removeprefix('www.')}",
            "office": f"{province}省{city}市高新区{int(rng.integers(1, 999))}号" if province not in ("上海", "北京") else f"{city}市浦东新区{int(rng.integers(1, 999))}号",
            "employees": int(rng.integers(300, 60000) * (1 + e.visibility / 5)),
            "main_business": _MAIN_BUSINESS.get(e.industry, f"{e.industry}相关产品的研发、生产与销售"),
        })
    return rows


# ------------------------------------------------------------------ managers and name changes


def manager_terms(ctx: ToolContext, entity) -> list[tuple[str, str, str, dt.date, dt.date | None, dt.date]]:
    """(title, name, gender, begin, end, ann_date) per tenure, oldest first. A tenure spans one
    to three three-year board terms; the seat then passes to someone else.

    Each seat draws from its own generator, so the number of terms the calendar reaches for one
    seat never shifts another seat's draws; a term's end beyond the calendar is not known yet."""
    first = max(entity.list_date - dt.timedelta(days=400), dt.date(2008, 1, 1))
    horizon = session_dates("XSHG")[-1]
    terms = []
    for slot, (title, _) in enumerate(_TITLES):
        rng = generator(ctx.seed, "managers", entity.code, slot)
        begin, holder = first, 0
        while begin <= horizon:
            name, gender = _person(ctx.seed, entity.code, slot, holder)
            end = begin + dt.timedelta(days=3 * 365 * int(rng.integers(1, 4)))
            ann = announcement_day("XSHG", begin - dt.timedelta(days=int(rng.integers(0, 5))))
            terms.append((title, name, gender, begin, end if end <= horizon else None, ann))
            begin, holder = end, holder + 1
    return terms


def _current_managers(ctx: ToolContext, entity) -> list[tuple[str, str]]:
    out = []
    for title, name, _, begin, end, ann in manager_terms(ctx, entity):
        if ann <= ctx.clock and begin <= ctx.clock and (end is None or end > ctx.clock):
            out.append((title, name))
    return out


def _stk_managers(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    code = args.get("ts_code")
    if code is None:
        raise ToolInputError("stk_managers needs ts_code (e.g. 600519.SH)")
    entity = entity_of(ctx, code, ("cn_equity",))
    start, end = optional_date(args, "start_date"), optional_date(args, "end_date")
    last = min(ctx.clock, end) if end else ctx.clock
    rows = []
    for slot_title, name, gender, begin, finish, ann in manager_terms(ctx, entity):
        if ann > last or (start is not None and ann < start):
            continue
        rng = generator(ctx.seed, "manager-bio", code, name)
        born = dt.date(int(rng.integers(1958, 1985)), int(rng.integers(1, 13)), 1)
        lev = dict(_TITLES)[slot_title]
        rows.append({
            "ts_code": code, "ann_date": ymd(ann), "name": name, "gender": gender,
            "lev": ("董事会成员", "高管", "监事")[lev], "title": slot_title,
            "edu": _EDU[int(rng.integers(len(_EDU)))], "national": "中国", "birthday": born.strftime("%Y"),
            "begin_date": ymd(begin), "end_date": ymd(finish) if finish is not None and finish <= ctx.clock else None,
            "resume": f"{name},{born.year}年出生,现任公司{slot_title}。",
        })
    rows.sort(key=lambda r: (r["ann_date"], r["title"]), reverse=True)
    return rows


def name_on(ctx: ToolContext, entity, day: dt.date) -> str:
    """The short name in effect on `day` (market/names.py: the listing name before any rename)."""
    return ctx.market.names.spell_on(entity.code, day).name


def _namechange(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    code = args.get("ts_code")
    if code is None:
        raise ToolInputError("namechange needs ts_code (e.g. 600519.SH)")
    entity_of(ctx, code, ("cn_equity",))
    start, end = optional_date(args, "start_date"), optional_date(args, "end_date")
    last = min(ctx.clock, end) if end else ctx.clock
    history = [h for h in ctx.market.names.history(code) if h.start <= last]
    rows = []
    for i, spell in enumerate(history):
        if start is not None and spell.start < start:
            continue
        until = history[i + 1].start - dt.timedelta(days=1) if i + 1 < len(history) else None
        rows.append({
            "ts_code": code, "name": spell.name, "start_date": ymd(spell.start), "end_date": ymd(until),
            "ann_date": ymd(spell.ann_date), "change_reason": spell.reason,
        })
    rows.reverse()
    return rows


# ------------------------------------------------------------------ IPOs, Stock Connect, classification


def _new_share(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    start, end = optional_date(args, "start_date"), optional_date(args, "end_date")
    if start and end and start > end:
        raise ToolInputError(f"start_date {ymd(start)} is after end_date {ymd(end)}")
    last = min(ctx.clock, end) if end else ctx.clock
    sessions = session_dates("XSHG")
    rows = []
    for e in ctx.market.universe.of_class("cn_equity"):
        if e.list_date < CAL_FIRST_DAY:
            continue
        i = bisect.bisect_left(sessions, e.list_date)
        ipo_date, issue_date = sessions[max(0, i - 10)], sessions[max(0, i - 3)]
        if ipo_date > last or (start is not None and ipo_date < start):
            continue
        bars = ctx.market.prices.daily(e.code)
        rng = generator(ctx.seed, "ipo", e.code)
        price = round(float(bars.open[0]) / rng.uniform(1.2, 1.44), 2) if bars.dates else None
        total = ctx.market.corporate.total_shares(e.code, e.list_date)
        amount = round(total * 0.25 / 1e4, 2)
        rows.append({
            "ts_code": e.code, "sub_code": ("732" if e.code.endswith(".SH") else "3") + e.code[3:6], "name": name_on(ctx, e, ipo_date),
            "ipo_date": ymd(ipo_date), "issue_date": ymd(issue_date) if issue_date <= ctx.clock else None,
            "amount": amount, "market_amount": round(amount * 0.3, 2), "price": price,
            "pe": round(float(rng.uniform(18, 23)), 2), "limit_amount": round(amount * 0.001, 2),
            "funds": round(price * amount / 1e4, 4) if price else None, "ballot": round(float(rng.uniform(0.02, 0.08)), 4),
        })
    rows.sort(key=lambda r: (r["ipo_date"], r["ts_code"]), reverse=True)
    return rows


def _hs_const(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    hs_type = args.get("hs_type")
    if hs_type not in ("SH", "SZ"):
        raise ToolInputError(f"hs_type is required: SH (沪股通) or SZ (深股通); got {hs_type!r}")
    rows = [
        {"ts_code": code, "hs_type": kind, "in_date": ymd(admitted), "out_date": None, "is_new": "1"}
        for code, (kind, admitted) in _hs_members(ctx).items()
        if kind == hs_type and admitted <= ctx.clock
    ]
    if args.get("is_new") == "0":
        return []
    rows.sort(key=lambda r: (r["in_date"], r["ts_code"]), reverse=True)
    return rows


def _index_classify(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    level = args.get("level") or "L1"
    if level not in ("L1", "L2", "L3"):
        raise ToolInputError(f"level must be L1, L2 or L3; got {level!r}")
    if level != "L1":
        return []  # the synthetic market classifies industries at the first level only
    rows = []
    for e in ctx.market.universe.of_class("index"):
        if not e.code.endswith(".SI"):
            continue
        industry = e.name.removesuffix("行业指数")
        rows.append({"index_code": e.code, "industry_name": industry, "level": "L1",
                     "industry_code": e.code.split(".")[0], "is_pub": "1", "parent_code": "0", "src": "SW2021"})
    return rows


# ------------------------------------------------------------------ trading calendars


def _calendar_rows(ctx: ToolContext, args: dict[str, Any], exchange: str, with_exchange: bool) -> list[dict[str, Any]]:
    calendar = EXCHANGE_CALENDARS[exchange]
    cal = get_calendar(calendar)
    start = optional_date(args, "start_date") or CAL_FIRST_DAY
    end = optional_date(args, "end_date") or ctx.clock
    end = min(end, ctx.clock, cal.last_session.date())
    if start < CALENDAR_START:
        raise ToolInputError(f"start_date must be on or after {ymd(CALENDAR_START)} (calendar start); got {ymd(start)}")
    if start > end:
        return []
    sessions = session_dates(calendar)
    is_open_filter = args.get("is_open")
    if is_open_filter is not None and str(is_open_filter) not in ("0", "1"):
        raise ToolInputError(f"is_open must be 0 or 1; got {is_open_filter!r}")
    session_set = set(sessions)
    rows = []
    day = end
    while day >= start:
        open_ = 1 if day in session_set else 0
        if is_open_filter is None or str(open_) == str(is_open_filter):
            i = bisect.bisect_left(sessions, day) - 1
            row = {"cal_date": ymd(day), "is_open": open_, "pretrade_date": ymd(sessions[i]) if i >= 0 else None}
            if with_exchange:
                row = {"exchange": exchange, **row}
            rows.append(row)
        day -= dt.timedelta(days=1)
    return rows


def _trade_cal(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    exchange = args.get("exchange") or "SSE"
    if exchange not in EXCHANGE_CALENDARS:
        raise ToolInputError(f"exchange must be one of {', '.join(EXCHANGE_CALENDARS)}; got {exchange!r}")
    return _calendar_rows(ctx, args, exchange, with_exchange=True)


def _hk_tradecal(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    return _calendar_rows(ctx, args, "HKEX", with_exchange=False)


def _us_tradecal(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    return _calendar_rows(ctx, args, "NYSE", with_exchange=False)


# ------------------------------------------------------------------ catalog rows

_CAL_FIELDS = [
    fld("cal_date", "date", None, "calendar date (YYYYMMDD)", "日历日期"),
    fld("is_open", "integer", None, "1 if the exchange trades that day, else 0", "是否交易(0休市 1交易)"),
    fld("pretrade_date", "date", None, "previous trading day before this date", "上一个交易日"),
]
_CAL_PARAMS = [date_param("start_date", "first date YYYYMMDD"), date_param("end_date", "last date YYYYMMDD"),
               ParamSpec("is_open", "str", "1 trading days only, 0 closed days only", enum=("0", "1"))]
_CAL_DATES = [("start_date", YMD, "start"), ("end_date", YMD, "end")]
_CODE = fld("ts_code", "code", None, "instrument code", "代码")
_NAME = fld("name", "text", None, "short name", "简称")


def _build_tools() -> list[ToolSpec]:
    ref = dict(service="reference", refresh_class="static")
    return [
        make_tool(
            name="stock_basic", roles={"market": "label"}, description="A-share list: code, name, industry, area, board, listing date, Stock Connect flag", asset_classes=["cn_equity"],
            entity_param="ts_code", time_key=None, calendar="XSHG",
            fields=[_CODE, fld("symbol", "text", None, "six-digit symbol", "股票代码"), _NAME,
                    fld("area", "text", None, "province of registration", "地域"), fld("industry", "text", None, "industry", "所属行业"),
                    fld("fullname", "text", None, "full legal name", "股票全称"), fld("enname", "text", None, "English name", "英文全称"),
                    fld("market", "text", None, "board (主板/创业板/科创板)", "市场类型"), fld("exchange", "text", None, "exchange (SSE/SZSE)", "交易所代码"),
                    fld("curr_type", "text", None, "trading currency", "交易货币"), fld("list_status", "text", None, "listing status (L listed)", "上市状态"),
                    fld("list_date", "date", None, "listing date", "上市日期"), fld("delist_date", "date", None, "delisting date", "退市日期"),
                    fld("is_hs", "text", None, "Stock Connect eligibility: N no, H Shanghai Connect, S Shenzhen Connect", "是否沪深港通标的(N否 H沪股通 S深股通)"),
                    fld("h_code", "code", None, "the Hong Kong H-share code of the same company (A+H dual listing); empty otherwise", "对应H股代码(A+H)")],
            params=[ts_code_param(False), ParamSpec("name", "str", "name substring"), ParamSpec("exchange", "str", "SSE or SZSE", enum=("SSE", "SZSE")),
                    ParamSpec("market", "str", "board: 主板, 创业板, 科创板"), ParamSpec("list_status", "str", "L listed, D delisted, P paused", enum=("L", "D", "P")),
                    ParamSpec("is_hs", "str", "Stock Connect flag N, H or S", enum=("N", "H", "S"))],
            handler=_stock_basic, **ref,
        ),
        make_tool(
            name="trade_cal", role="utility", series_keys=["exchange"], description="Exchange trading calendar (real holidays): open days and previous trading day; SSE/SZSE, HKEX, NYSE/NASDAQ",
            asset_classes=["market"], time_key="cal_date", date_params=_CAL_DATES, calendar="XSHG", refresh_class="daily", service="reference",
            fields=[fld("exchange", "text", None, "exchange code", "交易所"), *_CAL_FIELDS],
            params=[ParamSpec("exchange", "str", "SSE (default), SZSE, HKEX, NYSE or NASDAQ", enum=tuple(EXCHANGE_CALENDARS)), *_CAL_PARAMS],
            handler=_trade_cal,
        ),
        make_tool(
            name="hk_tradecal", role="utility", description="Hong Kong exchange trading calendar (real holidays)", asset_classes=["market"],
            time_key="cal_date", date_params=_CAL_DATES, calendar="XHKG", refresh_class="daily", service="reference",
            fields=_CAL_FIELDS, params=_CAL_PARAMS, handler=_hk_tradecal,
        ),
        make_tool(
            name="us_tradecal", role="utility", description="US (NYSE/NASDAQ) trading calendar (real holidays)", asset_classes=["market"],
            time_key="cal_date", date_params=_CAL_DATES, calendar="XNYS", refresh_class="daily", service="reference",
            fields=_CAL_FIELDS, params=_CAL_PARAMS, handler=_us_tradecal,
        ),
        make_tool(
            name="stock_company", description="A-share company profiles: chairman, general manager, board secretary, registered capital, location, employees",
            asset_classes=["cn_equity"], entity_param="ts_code", time_key=None, calendar="XSHG",
            fields=[_CODE, fld("com_name", "text", None, "company name", "公司全称"), fld("com_id", "text", None, "unified social credit code", "统一社会信用代码"),
                    fld("exchange", "text", None, "exchange", "交易所代码"), fld("chairman", "text", None, "chairman", "法人代表/董事长"),
                    fld("manager", "text", None, "general manager", "总经理"), fld("secretary", "text", None, "board secretary", "董秘"),
                    fld("reg_capital", "number", "10k CNY", "registered capital, 10 thousand CNY (万元)", "注册资本(万元)"),
                    fld("setup_date", "date", None, "founding date", "注册日期"), fld("province", "text", None, "province", "所在省份"),
                    fld("city", "text", None, "city", "所在城市"), fld("introduction", "text", None, "company introduction", "公司介绍"),
                    fld("website", "text", None, "website", "公司主页"), fld("email", "text", None, "investor relations e-mail", "电子邮件"),
                    fld("office", "text", None, "office address", "办公室"), fld("employees", "integer", "persons", "number of employees", "员工人数"),
                    fld("main_business", "text", None, "main business", "主要业务及产品")],
            params=[ts_code_param(False), ParamSpec("exchange", "str", "SSE or SZSE", enum=("SSE", "SZSE"))],
            handler=_stock_company, **ref,
        ),
        make_tool(
            name="namechange", roles={"name": "label"}, description="A-share name history: each short name with its effective period and reason", asset_classes=["cn_equity"],
            entity_param="ts_code", time_key="start_date", date_params=[("start_date", YMD, "start"), ("end_date", YMD, "end")], calendar="XSHG",
            fields=[_CODE, _NAME, fld("start_date", "date", None, "first day the name was used", "开始日期"),
                    fld("end_date", "date", None, "last day the name was used (empty: current)", "结束日期"),
                    fld("ann_date", "date", None, "announcement date", "公告日期"), fld("change_reason", "text", None, "reason for the change", "变更原因")],
            params=[ts_code_param(), date_param("start_date", "first effective date YYYYMMDD"), date_param("end_date", "last effective date YYYYMMDD")],
            handler=_namechange, **ref,
        ),
        make_tool(
            name="new_share", series_keys=["ts_code"], description="A-share IPOs since 2015: subscription date, listing, issue price, shares offered, funds raised",
            asset_classes=["cn_equity"], entity_param=None, time_key="ipo_date", date_params=[("start_date", YMD, "start"), ("end_date", YMD, "end")],
            calendar="XSHG", service="reference", refresh_class="daily",
            fields=[_CODE, fld("sub_code", "text", None, "subscription code", "申购代码"), _NAME,
                    fld("ipo_date", "date", None, "subscription date", "上网发行日期"), fld("issue_date", "date", None, "listing announcement date", "上市日期"),
                    fld("amount", "number", "10k shares", "total shares offered, 10 thousand shares (万股)", "发行总量(万股)"),
                    fld("market_amount", "number", "10k shares", "shares offered online, 10 thousand shares (万股)", "上网发行总量(万股)"),
                    fld("price", "number", "CNY", "issue price, CNY", "发行价格(元)"), fld("pe", "number", None, "issue price-to-earnings ratio", "市盈率"),
                    fld("limit_amount", "number", "10k shares", "subscription limit per account, 10 thousand shares (万股)", "个人申购上限(万股)"),
                    fld("funds", "number", "100M CNY", "funds raised, 100 million CNY (亿元)", "募集资金(亿元)"),
                    fld("ballot", "number", "%", "online lottery winning rate, percent", "中签率(%)")],
            params=[date_param("start_date", "first subscription date YYYYMMDD"), date_param("end_date", "last subscription date YYYYMMDD")],
            handler=_new_share,
        ),
        make_tool(
            name="hk_basic", roles={"fy_end": "code", "report_curr": "code"},
            description="Hong Kong listed companies: code, names, board, listing date, board lot, ISIN, fiscal year end, reporting currency, the A-share of an A+H company", asset_classes=["hk_equity"],
            entity_param="ts_code", time_key=None, calendar="XHKG",
            fields=[_CODE, _NAME, fld("fullname", "text", None, "full name", "全称"), fld("enname", "text", None, "English name", "英文名称"),
                    fld("market", "text", None, "board (Main/GEM)", "市场类别"), fld("list_status", "text", None, "listing status", "上市状态"),
                    fld("list_date", "date", None, "listing date", "上市日期"), fld("delist_date", "date", None, "delisting date", "退市日期"),
                    fld("trade_unit", "number", "shares", "board lot, shares", "交易单位(股)"), fld("isin", "text", None, "ISIN code", "ISIN代码"),
                    fld("curr_type", "text", None, "trading currency", "货币代码"),
                    fld("fy_end", "text", None, "fiscal year end, MMDD (0331: the year ended 31 March; 1231: December)", "财政年度截止日(MMDD)"),
                    fld("report_curr", "text", None, "currency of the financial statements (CNY, HKD or USD; may differ from the trading currency)", "财务报告币种"),
                    fld("a_code", "code", None, "the A-share code of the same company for an H-share (A+H dual listing); empty otherwise", "对应A股代码(A+H)")],
            params=[ts_code_param(False, "00700.HK"), ParamSpec("list_status", "str", "L listed", enum=("L", "D", "P"))],
            handler=_hk_basic, **ref,
        ),
        make_tool(
            name="us_basic", roles={"fy_end": "code", "report_curr": "code"},
            description="US listed companies: ticker, names, class (EQ/ADR), listing date, exchange, fiscal year end", asset_classes=["us_equity"],
            entity_param="ts_code", time_key=None, calendar="XNYS",
            fields=[_CODE, fld("name", "text", None, "Chinese name (empty for most US names)", "中文名称"), fld("enname", "text", None, "English name", "英文名称"),
                    fld("classify", "text", None, "security class: EQ common stock, ADR depositary receipt", "分类"),
                    fld("list_status", "text", None, "listing status", "上市状态"), fld("list_date", "date", None, "listing date", "上市日期"),
                    fld("delist_date", "date", None, "delisting date", "退市日期"), fld("exchange", "text", None, "exchange (NYSE/NASDAQ)", "交易所"),
                    fld("fy_end", "text", None, "fiscal year end, MMDD (0630: the year ended 30 June, named by the calendar year it ends in)", "财政年度截止日(MMDD)"),
                    fld("report_curr", "text", None, "currency of the financial statements", "财务报告币种")],
            params=[ts_code_param(False, "AAPL"), ParamSpec("classify", "str", "EQ or ADR", enum=("EQ", "ADR")), ParamSpec("list_status", "str", "L listed", enum=("L", "D", "P"))],
            handler=_us_basic, **ref,
        ),
        make_tool(
            name="index_basic", description="Index reference data: publisher, category, base date and point, weighting rule", asset_classes=["index"],
            entity_param="ts_code", time_key=None, calendar="XSHG",
            fields=[_CODE, _NAME, fld("fullname", "text", None, "full (English) name", "指数全称"), fld("market", "text", None, "market / publisher code", "市场"),
                    fld("publisher", "text", None, "publisher", "发布方"), fld("index_type", "text", None, "index style", "指数风格"),
                    fld("category", "text", None, "category (规模/主题/行业/海外)", "指数类别"), fld("base_date", "date", None, "base date", "基期"),
                    fld("base_point", "number", "points", "base level", "基点"), fld("list_date", "date", None, "launch date", "发布日期"),
                    fld("weight_rule", "text", None, "weighting rule", "加权方式"), fld("desc", "text", None, "description", "描述"),
                    fld("exp_date", "date", None, "end date", "终止日期")],
            params=[ts_code_param(False, "000300.SH"), _NAME_PARAM, ParamSpec("market", "str", "market code, e.g. CSI, SZSE, SW, GLOBAL"),
                    ParamSpec("publisher", "str", "publisher"), ParamSpec("category", "str", "category")],
            handler=_index_basic, **ref,
        ),
        make_tool(
            name="fund_basic", description="Fund reference data: manager, custodian, type, founding and listing dates, fees, benchmark", asset_classes=["fund"],
            entity_param="ts_code", time_key=None, calendar="XSHG",
            fields=[_CODE, _NAME, fld("management", "text", None, "fund management company", "管理人"), fld("custodian", "text", None, "custodian bank", "托管人"),
                    fld("fund_type", "text", None, "fund type", "投资类型"), fld("found_date", "date", None, "inception date", "成立日期"),
                    fld("due_date", "date", None, "maturity date", "到期日期"), fld("list_date", "date", None, "exchange listing date", "上市时间"),
                    fld("issue_date", "date", None, "issue date", "发行日期"), fld("delist_date", "date", None, "delisting date", "退市日期"),
                    fld("issue_amount", "number", "100M units", "units issued, 100 million (亿份)", "发行份额(亿份)"),
                    fld("m_fee", "number", "%", "management fee, percent per year", "管理费(%)"), fld("c_fee", "number", "%", "custodian fee, percent per year", "托管费(%)"),
                    fld("p_value", "number", "CNY", "par value per unit", "面值"), fld("min_amount", "number", "10k CNY", "minimum subscription, 10 thousand CNY", "起点金额(万元)"),
                    fld("benchmark", "text", None, "performance benchmark", "业绩比较基准"), fld("status", "text", None, "status: L listed/active, I issuing", "存续状态"),
                    fld("invest_type", "text", None, "investment style", "投资风格"), fld("type", "text", None, "fund structure", "基金类型"),
                    fld("market", "text", None, "E exchange-traded, O over the counter", "场内E/场外O")],
            params=[ts_code_param(False, "510300.SH"), ParamSpec("market", "str", "E exchange-traded or O over the counter", enum=("E", "O")),
                    ParamSpec("status", "str", "L active, I issuing", enum=("L", "I", "D"))],
            handler=_fund_basic, **ref,
        ),
        make_tool(
            name="fund_company", series_keys=["name"], description="Fund management companies: location, chairman, general manager, registered capital, founding date",
            asset_classes=["fund"], entity_param=None, time_key=None,
            fields=[fld("name", "text", None, "company name", "名称"), fld("shortname", "text", None, "short name", "简称"),
                    fld("province", "text", None, "province", "省份"), fld("city", "text", None, "city", "城市"), fld("address", "text", None, "address", "注册地址"),
                    fld("phone", "text", None, "phone", "电话"), fld("website", "text", None, "website", "网址"), fld("chairman", "text", None, "chairman", "法人代表"),
                    fld("manager", "text", None, "general manager", "总经理"), fld("reg_capital", "number", "10k CNY", "registered capital, 10 thousand CNY", "注册资本(万元)"),
                    fld("setup_date", "date", None, "founding date", "成立日期"), fld("end_date", "date", None, "dissolution date", "公司终止日期"),
                    fld("employees", "number", "persons", "employees", "员工总数"), fld("main_business", "text", None, "business scope", "主要产品及业务")],
            params=[], handler=_fund_company, **ref,
        ),
        make_tool(
            name="stk_managers", roles={"name": "label"}, series_keys=["name", "title"], description="A-share directors, supervisors and executives with their terms", asset_classes=["cn_equity"],
            entity_param="ts_code", time_key="ann_date", date_params=[("start_date", YMD, "start"), ("end_date", YMD, "end")], calendar="XSHG",
            service="reference", refresh_class="quarterly",
            fields=[_CODE, fld("ann_date", "date", None, "announcement date", "公告日期"), fld("name", "text", None, "name", "姓名"),
                    fld("gender", "text", None, "gender M/F", "性别"), fld("lev", "text", None, "category (board/executive/supervisor)", "岗位类别"),
                    fld("title", "text", None, "position", "岗位"), fld("edu", "text", None, "education", "学历"), fld("national", "text", None, "nationality", "国籍"),
                    fld("birthday", "text", None, "year of birth", "出生年月"), fld("begin_date", "date", None, "term start", "上任日期"),
                    fld("end_date", "date", None, "term end (empty: in office)", "离任日期"), fld("resume", "text", None, "short resume", "个人简历")],
            params=[ts_code_param(), date_param("start_date", "first announcement date YYYYMMDD"), date_param("end_date", "last announcement date YYYYMMDD")],
            handler=_stk_managers,
        ),
        make_tool(
            name="hs_const", series_keys=["ts_code"], description="Shanghai/Shenzhen-Hong Kong Stock Connect constituents with inclusion dates", asset_classes=["cn_equity"],
            entity_param=None, time_key="in_date", calendar="XSHG", service="reference", refresh_class="daily",
            fields=[_CODE, fld("hs_type", "text", None, "SH Shanghai Connect, SZ Shenzhen Connect", "沪深港通类型"),
                    fld("in_date", "date", None, "inclusion date", "纳入日期"), fld("out_date", "date", None, "removal date", "剔除日期"),
                    fld("is_new", "text", None, "1 current constituent", "是否最新")],
            params=[ParamSpec("hs_type", "str", "SH or SZ", required=True, enum=("SH", "SZ")), ParamSpec("is_new", "str", "1 current, 0 historical", enum=("0", "1"))],
            handler=_hs_const,
        ),
        make_tool(
            name="index_classify", series_keys=["index_code"], description="Industry classification (synthetic SW-style level-1 industries) with their index codes", asset_classes=["index"],
            entity_param=None, time_key=None,
            fields=[fld("index_code", "code", None, "industry index code", "指数代码"), fld("industry_name", "text", None, "industry name", "行业名称"),
                    fld("level", "text", None, "level", "行业级别"), fld("industry_code", "text", None, "industry code", "行业代码"),
                    fld("is_pub", "text", None, "1 if an index is published", "是否发布指数"), fld("parent_code", "text", None, "parent code", "父级代码"),
                    fld("src", "text", None, "classification version", "行业分类来源")],
            params=[ParamSpec("level", "str", "L1, L2 or L3", enum=("L1", "L2", "L3"))],
            handler=_index_classify, **ref,
        ),
    ]


_NAME_PARAM = ParamSpec("name", "str", "name substring")

TOOLS: list[ToolSpec] = _build_tools()
