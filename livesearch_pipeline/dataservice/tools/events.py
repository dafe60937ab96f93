"""Holder and corporate-event tools of A-share companies (service "corporate").

Everything is point-in-time on announcement dates: a holder list appears with its periodic
report, a holder trade when announced after it completes, an unlock when its notice is
published (the unlock itself may lie ahead), a repurchase stage when announced. Share amounts
are in shares (股) unless a field says 万股; prices in CNY.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from livesearch_pipeline.dataservice.spec import ParamSpec, ToolContext, ToolInputError, ToolSpec
from livesearch_pipeline.dataservice.tools.reference import manager_terms
from livesearch_pipeline.dataservice.tools.statements import (
    YMD,
    date_param,
    entity_of,
    fld,
    make_tool,
    optional_date,
    parse_period,
    ts_code_param,
    ymd,
)

CN = ("cn_equity",)


def _code(ctx: ToolContext, args: dict[str, Any], tool: str) -> str:
    code = args.get("ts_code")
    if code is None:
        raise ToolInputError(f"{tool} needs ts_code (e.g. 600519.SH); use the search tool to find a code by name")
    entity_of(ctx, code, CN)
    return code


def _window(ctx: ToolContext, args: dict[str, Any]) -> tuple[dt.date | None, dt.date]:
    start, end = optional_date(args, "start_date"), optional_date(args, "end_date")
    if start is not None and end is not None and start > end:
        raise ToolInputError(f"start_date {ymd(start)} is after end_date {ymd(end)}")
    return start, min(end, ctx.clock) if end is not None else ctx.clock


def _in_window(day: dt.date, start: dt.date | None, last: dt.date) -> bool:
    return day <= last and (start is None or day >= start)


# ------------------------------------------------------------------ holders


def _top10(float_only: bool):
    def handler(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
        code = _code(ctx, args, "top10_floatholders" if float_only else "top10_holders")
        events = ctx.market.events
        roster = {h.name: h for h in events.roster(code)}
        period = parse_period(args["period"]) if args.get("period") is not None else None
        exact_ann = optional_date(args, "ann_date")
        start, end = optional_date(args, "start_date"), optional_date(args, "end_date")
        periods = events.periods(code)
        records = []
        for i, p in enumerate(periods):
            if p.ann_date > ctx.clock or (period and p.end_date != period) or (exact_ann and p.ann_date != exact_ann):
                continue
            # start_date/end_date bound the report period, as in Tushare.
            if (start and p.end_date < start) or (end and p.end_date > end):
                continue
            float_factor = p.float_shares / p.total_shares
            previous = periods[i - 1] if i > 0 else None
            held = {
                name: (int(round(amount * float_factor)) if float_only else amount) for name, amount in p.amounts.items()
            }
            ranked = sorted(held.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
            for name, amount in ranked:
                prior = None
                if previous is not None:
                    prior_amount = previous.amounts[name]
                    prior = int(round(prior_amount * previous.float_shares / previous.total_shares)) if float_only else prior_amount
                records.append({
                    "ts_code": code, "ann_date": ymd(p.ann_date), "end_date": ymd(p.end_date), "holder_name": name,
                    "hold_amount": float(amount), "hold_ratio": round(amount / p.total_shares * 100, 4),
                    "hold_float_ratio": round(amount / p.float_shares * 100, 4) if p.float_shares else None,
                    "hold_change": float(amount - prior) if prior is not None else None,
                    "holder_type": roster[name].holder_type,
                })
        records.sort(key=lambda r: (r["end_date"], r["hold_amount"]), reverse=True)
        return records

    return handler


def _holdernumber(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    code = _code(ctx, args, "stk_holdernumber")
    start, last = _window(ctx, args)
    exact_ann = optional_date(args, "ann_date")
    exact_end = parse_period(args["enddate"], "enddate") if args.get("enddate") is not None else None
    rows = [
        {"ts_code": code, "ann_date": ymd(p.ann_date), "end_date": ymd(p.end_date), "holder_num": p.holder_num}
        for p in ctx.market.events.periods(code)
        if _in_window(p.ann_date, start, last) and (exact_ann is None or p.ann_date == exact_ann)
        and (exact_end is None or p.end_date == exact_end)
    ]
    rows.reverse()
    return rows


def _holdertrade(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    code = _code(ctx, args, "stk_holdertrade")
    start, last = _window(ctx, args)
    trade_type, holder_type = args.get("trade_type"), args.get("holder_type")
    kinds = {"个人": "P", "一般企业": "C"}
    rows = []
    for t in ctx.market.events.trades(code):
        if not _in_window(t.ann_date, start, last):
            continue
        kind = kinds.get(t.holder.holder_type, "C")
        if (trade_type and t.direction != trade_type) or (holder_type and kind != holder_type):
            continue
        rows.append({
            "ts_code": code, "ann_date": ymd(t.ann_date), "holder_name": t.holder.name, "holder_type": kind,
            "in_de": t.direction, "change_vol": float(t.change_vol), "change_ratio": round(t.change_vol / t.total_share * 100, 4),
            "after_share": float(t.after_share), "after_ratio": round(t.after_share / t.total_share * 100, 4),
            "avg_price": t.avg_price, "total_share": t.total_share,
            "begin_date": ymd(t.begin_date), "close_date": ymd(t.close_date),
        })
    rows.reverse()
    return rows


def _share_float(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    code = _code(ctx, args, "share_float")
    start, end = optional_date(args, "start_date"), optional_date(args, "end_date")
    exact_ann, float_date = optional_date(args, "ann_date"), optional_date(args, "float_date")
    rows = []
    for u in ctx.market.events.unlocks(code):
        if u["ann_date"] > ctx.clock or (exact_ann and u["ann_date"] != exact_ann) or (float_date and u["float_date"] != float_date):
            continue
        # start_date/end_date bound the unlock date, as in Tushare.
        if (start and u["float_date"] < start) or (end and u["float_date"] > end):
            continue
        rows.append({"ts_code": code, **u, "ann_date": ymd(u["ann_date"]), "float_date": ymd(u["float_date"])})
    rows.sort(key=lambda r: (r["ann_date"], r["float_date"], r["float_share"]), reverse=True)
    return rows


def _repurchase(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    code = _code(ctx, args, "repurchase")
    start, last = _window(ctx, args)
    exact_ann = optional_date(args, "ann_date")
    rows = []
    for s in ctx.market.events.repurchases(code):
        if not _in_window(s.ann_date, start, last) or (exact_ann and s.ann_date != exact_ann):
            continue
        rows.append({
            "ts_code": code, "ann_date": ymd(s.ann_date), "end_date": ymd(s.ann_date), "proc": s.proc,
            "exp_date": ymd(s.exp_date), "vol": s.vol, "amount": s.amount, "high_limit": s.high_limit, "low_limit": s.low_limit,
        })
    rows.reverse()
    return rows


def _pledge_stat(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    code = _code(ctx, args, "pledge_stat")
    exact = optional_date(args, "end_date")
    rows = [
        {"ts_code": code, **r, "end_date": ymd(r["end_date"])}
        for r in ctx.market.events.pledge_weeks(code)
        if r["end_date"] <= ctx.clock and (exact is None or r["end_date"] == exact)
    ]
    rows.reverse()
    return rows


def _rewards(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    from livesearch_pipeline.dataservice.market.rng import generator

    code = _code(ctx, args, "stk_rewards")
    entity = ctx.market.universe.get(code)
    period = parse_period(args["end_date"], "end_date") if args.get("end_date") is not None else None
    terms = manager_terms(ctx, entity)
    rows = []
    for report in ctx.market.fundamentals.reports(code):
        if report.quarter != 4 or report.ann_date > ctx.clock or (period and report.end_date != period):
            continue
        year_end = report.end_date
        for title, name, _, begin, finish, _ in terms:
            if begin > year_end or (finish is not None and finish <= year_end):
                continue
            rng = generator(ctx.seed, code, "reward", name, year_end.year)
            base = {"董事长": 150, "总经理": 130, "财务总监": 80, "董事会秘书": 70}.get(title, 20)
            reward = round(base * 1e4 * rng.uniform(0.7, 1.6) * (1 + entity.visibility / 10), -2)
            hold = float(round(rng.uniform(0, 2e6), -2)) if title in ("董事长", "总经理") else 0.0
            rows.append({"ts_code": code, "ann_date": ymd(report.ann_date), "end_date": ymd(year_end),
                         "name": name, "title": title, "reward": reward, "hold_vol": hold})
    rows.sort(key=lambda r: (r["end_date"], r["reward"]), reverse=True)
    return rows


# ------------------------------------------------------------------ catalog rows

_CODE = fld("ts_code", "code", None, "stock code", "股票代码")
_ANN = fld("ann_date", "date", None, "announcement date", "公告日期")
_END = fld("end_date", "date", None, "report period end", "报告期")
_WINDOW = [date_param("start_date", "first date YYYYMMDD"), date_param("end_date", "last date YYYYMMDD")]
_WINDOW_DATES = [("start_date", YMD, "start"), ("end_date", YMD, "end")]


def _holder_fields(float_only: bool) -> list:
    share_base = "float shares" if float_only else "shares"
    return [
        _CODE, _ANN, _END,
        fld("holder_name", "text", None, "holder name", "股东名称"),
        fld("hold_amount", "number", "shares", f"{share_base} held at the period end (股)", "持有数量(股)" if not float_only else "持有流通股数量(股)"),
        fld("hold_ratio", "number", "%", "holding as a percentage of total shares", "占总股本比例(%)"),
        fld("hold_float_ratio", "number", "%", "holding as a percentage of float shares", "占流通股本比例(%)"),
        fld("hold_change", "number", "shares", "change in the holding since the previous report period (股)", "持股变动(股)"),
        fld("holder_type", "text", None, "holder type (个人, 一般企业, 基金、理财产品, 国有机构, 境外机构, 保险, 社保)", "股东类型"),
    ]


def _build_tools() -> list[ToolSpec]:
    base = dict(service="corporate", asset_classes=["cn_equity"], entity_param="ts_code", calendar="XSHG")
    period_params = [ts_code_param(), ParamSpec("period", "date", "report period YYYYMMDD (quarter end)", fmt=YMD), date_param("ann_date", "announcement date YYYYMMDD"),
                     date_param("start_date", "first report period YYYYMMDD"), date_param("end_date", "last report period YYYYMMDD")]
    period_dates = [("period", YMD, "period"), ("ann_date", YMD, "point"), ("start_date", YMD, "start"), ("end_date", YMD, "end")]
    return [
        make_tool(name="top10_holders", series_keys=["holder_name"], description="Top 10 shareholders at each report period end, with holdings, ratios to total and float shares and changes",
                  fields=_holder_fields(False), params=period_params, handler=_top10(False), date_params=period_dates,
                  time_key="end_date", refresh_class="quarterly", **base),
        make_tool(name="top10_floatholders", series_keys=["holder_name"], description="Top 10 holders of tradable (float) shares at each report period end",
                  fields=_holder_fields(True), params=period_params, handler=_top10(True), date_params=period_dates,
                  time_key="end_date", refresh_class="quarterly", **base),
        make_tool(name="stk_holdernumber", description="Number of shareholders at each report period end",
                  fields=[_CODE, _ANN, _END, fld("holder_num", "integer", "holders", "number of shareholders (accounts)", "股东户数(户)")],
                  params=[ts_code_param(), date_param("ann_date", "announcement date YYYYMMDD"), ParamSpec("enddate", "date", "report period YYYYMMDD (quarter end)", fmt=YMD), *_WINDOW],
                  handler=_holdernumber, date_params=[("ann_date", YMD, "point"), ("enddate", YMD, "period"), *_WINDOW_DATES],
                  time_key="end_date", refresh_class="quarterly", **base),
        make_tool(name="stk_holdertrade", roles={"holder_type": "code"}, description="Shareholder and executive increases/decreases of holdings (增减持), announced after completion",
                  fields=[_CODE, _ANN, fld("holder_name", "text", None, "holder name", "股东名称"),
                          fld("holder_type", "text", None, "holder type: G executive, P individual, C company", "股东类型(G高管 P个人 C公司)"),
                          fld("in_de", "text", None, "IN increase, DE decrease", "类型(IN增持 DE减持)"),
                          fld("change_vol", "number", "shares", "shares bought or sold (股)", "变动数量(股)"),
                          fld("change_ratio", "number", "%", "change as a percentage of total shares", "占总股本比例(%)"),
                          fld("after_share", "number", "shares", "shares held after the change (股)", "变动后持股(股)"),
                          fld("after_ratio", "number", "%", "holding after the change as a percentage of total shares", "变动后占总股本比例(%)"),
                          fld("avg_price", "number", "CNY", "average trade price, CNY", "平均价格(元)"),
                          fld("total_share", "number", "shares", "total shares of the company on the last trade date (股)", "总股本(股)"),
                          fld("begin_date", "date", None, "first trade date", "增减持开始日期"),
                          fld("close_date", "date", None, "last trade date", "增减持结束日期")],
                  params=[ts_code_param(), *_WINDOW, ParamSpec("trade_type", "str", "IN or DE", enum=("IN", "DE")), ParamSpec("holder_type", "str", "C, P or G", enum=("C", "P", "G"))],
                  handler=_holdertrade, date_params=_WINDOW_DATES, time_key="ann_date", refresh_class="daily", **base),
        make_tool(name="share_float", series_keys=["holder_name"], description="Restricted share unlock schedule (限售股解禁): unlock date, shares released and holders; announced before the unlock",
                  fields=[_CODE, _ANN, fld("float_date", "date", None, "unlock date", "解禁日期"),
                          fld("float_share", "number", "shares", "shares released to trading (股)", "流通股份(股)"),
                          fld("float_ratio", "number", "%", "released shares as a percentage of total shares", "流通股份占总股本比率(%)"),
                          fld("holder_name", "text", None, "holder whose shares unlock", "股东名称"),
                          fld("share_type", "text", None, "type of restricted shares", "股份类型")],
                  params=[ts_code_param(), date_param("ann_date", "announcement date YYYYMMDD"), date_param("float_date", "unlock date YYYYMMDD"),
                          date_param("start_date", "first unlock date YYYYMMDD"), date_param("end_date", "last unlock date YYYYMMDD")],
                  handler=_share_float, date_params=[("ann_date", YMD, "point"), ("float_date", YMD, "point"), *_WINDOW_DATES],
                  time_key="ann_date", refresh_class="daily", **base),
        make_tool(name="repurchase", series_keys=["proc"], description="Share repurchase programs by stage (预案, 股东大会通过, 实施, 完成) with cumulative shares and amounts",
                  fields=[_CODE, _ANN, fld("end_date", "date", None, "stage date", "截止日期"),
                          fld("proc", "text", None, "stage: 预案 plan, 股东大会通过 approved, 实施 in progress, 完成 completed", "进度"),
                          fld("exp_date", "date", None, "program expiry date", "过期日期"),
                          fld("vol", "number", "shares", "cumulative shares repurchased (股)", "回购数量(股)"),
                          fld("amount", "number", "CNY", "cumulative amount paid, CNY", "回购金额(元)"),
                          fld("high_limit", "number", "CNY", "maximum repurchase price, CNY", "回购最高价(元)"),
                          fld("low_limit", "number", "CNY", "minimum repurchase price, CNY", "回购最低价(元)")],
                  params=[ts_code_param(), date_param("ann_date", "announcement date YYYYMMDD"), *_WINDOW],
                  handler=_repurchase, date_params=[("ann_date", YMD, "point"), *_WINDOW_DATES], time_key="ann_date", refresh_class="daily", **base),
        make_tool(name="pledge_stat", description="Weekly share pledge statistics: pledge count, pledged restricted/unrestricted shares and pledge ratio",
                  fields=[_CODE, fld("end_date", "date", None, "week-ending session", "截止日期"),
                          fld("pledge_count", "integer", "pledges", "number of outstanding pledges", "质押次数"),
                          fld("unrest_pledge", "number", "10k shares", "pledged unrestricted shares, 10 thousand shares (万股)", "无限售股质押数量(万股)"),
                          fld("rest_pledge", "number", "10k shares", "pledged restricted shares, 10 thousand shares (万股)", "限售股份质押数量(万股)"),
                          fld("total_share", "number", "10k shares", "total shares, 10 thousand shares (万股)", "总股本(万股)"),
                          fld("pledge_ratio", "number", "%", "pledged shares as a percentage of total shares", "质押比例(%)")],
                  params=[ts_code_param(), date_param("end_date", "week-ending date YYYYMMDD")],
                  handler=_pledge_stat, date_params=[("end_date", YMD, "point")], time_key="end_date", refresh_class="weekly", **base),
        make_tool(name="stk_rewards", roles={"name": "label"}, series_keys=["name", "title"], description="Annual pay and shareholdings of directors and executives, disclosed in the annual report",
                  fields=[_CODE, _ANN, _END, fld("name", "text", None, "name", "姓名"), fld("title", "text", None, "position", "职务"),
                          fld("reward", "number", "CNY", "annual pay before tax, CNY", "报酬(元)"),
                          fld("hold_vol", "number", "shares", "shares held (股)", "持股数(股)")],
                  params=[ts_code_param(), ParamSpec("end_date", "date", "report period YYYYMMDD (a year end, e.g. 20251231)", fmt=YMD)],
                  handler=_rewards, date_params=[("end_date", YMD, "period")], time_key="end_date", refresh_class="annual", **base),
    ]


TOOLS: list[ToolSpec] = _build_tools()
