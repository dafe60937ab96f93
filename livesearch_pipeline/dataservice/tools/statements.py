"""Financial statement tools (service "statements"; HK/US statements under "hk_us").

Point-in-time: a report is visible only once announced — `ann_date` on or before the service
clock and, when the caller gives an announcement window (`ann_date`, `start_date`/`end_date`
filter on the announcement date, as in Tushare), inside that window. `period` selects a report
period (a quarter end, YYYYMMDD). Records come newest period first. The record time key is
`end_date` (the report period); the handlers, not the time key, enforce announcement dates.

Restatements (issue 39): a period a later report restated has two records, as Tushare returns
them: `update_flag` "0" as first reported (with its own `ann_date`) and "1" as restated (the later
report's `ann_date`, visible only from then on); newest announcement first within a period. A
program reads one of them (`select.revision`, core/extract.py: the latest published by default).

Fiscal years: `end_type` is the fiscal period (1 first quarter, 2 half year, 3 nine months, 4 the
fiscal year), flows are cumulative from the start of the company's fiscal year (a Hong Kong
company's year may end on 31 March, a US one's on 30 June or 30 September; `hk_basic`/`us_basic`
`fy_end`). Amounts are in 元 (CNY) for A-shares; a Hong Kong or US company's are in its reporting
currency, named by each record's `currency` (a Hong Kong company may report in CNY or USD while
trading in HKD; an H-share's statements are its A-share company's, in CNY). Income and cash flow
lines are cumulative year-to-date, balance sheet lines are period-end balances.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Callable, Iterable

from livesearch_pipeline.core.catalog import DateParamMeta, FieldMeta, ToolMeta, with_roles
from livesearch_pipeline.core.extract import REVISION_FIELD
from livesearch_pipeline.dataservice.market.fundamentals import (
    NOT_REPORTED_BY_FINANCIALS,
    Report,
    derive_indicators,
    indicator_inputs,
    is_financial,
)
from livesearch_pipeline.dataservice.market.reporting import is_quarter_end
from livesearch_pipeline.dataservice.spec import ParamSpec, ToolContext, ToolInputError, ToolSpec

YMD = "%Y%m%d"


# ------------------------------------------------------------------ shared helpers (D2 tool files)


def fld(name: str, type_: str, unit: str | None, description: str, description_zh: str) -> FieldMeta:
    return FieldMeta(name=name, type=type_, unit=unit, description=description, description_zh=description_zh)


def ymd(day: dt.date | None) -> str | None:
    return day.strftime(YMD) if day is not None else None


def make_tool(
    *, name: str, service: str, description: str, asset_classes: list[str], fields: list[FieldMeta],
    params: Iterable[ParamSpec], handler: Callable[[ToolContext, dict[str, Any]], list[dict[str, Any]]],
    entity_param: str | None = None, date_params: Iterable[tuple[str, str, str]] = (),
    time_key: str | None = None, time_key_fmt: str | None = YMD, calendar: str | None = None,
    refresh_class: str = "quarterly", role: str = "data", roles: dict[str, str] | None = None,
    series_keys: Iterable[str] = (),
) -> ToolSpec:
    """`roles` overrides derived field roles; `series_keys` names the fields that tell apart
    several series on one time key (see core.catalog.ToolMeta); a tool whose records carry
    `update_flag` declares it as the field telling versions apart (`revision_field`)."""
    meta = ToolMeta(
        name=name, service=service, description=description, asset_classes=asset_classes, role=role,
        entity_param=entity_param,
        date_params=[DateParamMeta(name=n, fmt=f, role=r) for n, f, r in date_params],
        time_key=time_key, time_key_fmt=time_key_fmt if time_key else None, calendar=calendar,
        refresh_class=refresh_class, fields=with_roles(fields, roles), series_keys=list(series_keys),
        revision_field=REVISION_FIELD if any(f.name == REVISION_FIELD for f in fields) else None,
    )
    return ToolSpec(meta=meta, params=tuple(params), handler=handler)


def ts_code_param(required: bool = True, example: str = "600519.SH") -> ParamSpec:
    return ParamSpec("ts_code", "str", f"instrument code, e.g. {example}", required=required)


def date_param(name: str, description: str) -> ParamSpec:
    return ParamSpec(name, "date", description, fmt=YMD)


def entity_of(ctx: ToolContext, code: str, classes: tuple[str, ...]):
    """The entity for `code`, checked against the asset classes a tool serves."""
    try:
        entity = ctx.market.universe.get(code)
    except LookupError as exc:
        raise ToolInputError(str(exc)) from None
    if entity.asset_class not in classes:
        raise ToolInputError(
            f"ts_code {code!r} is a {entity.asset_class} instrument; this tool serves "
            f"{', '.join(classes)} codes only"
        )
    return entity


def parse_period(value: Any, name: str = "period") -> dt.date:
    """A report period YYYYMMDD that is a quarter end (0331/0630/0930/1231).

    A period after the clock never reaches a handler: the server answers it with no rows.
    """
    if isinstance(value, dt.date):
        day = value
    else:
        try:
            day = dt.datetime.strptime(str(value), YMD).date()
        except ValueError:
            raise ToolInputError(f"{name} must be a report period YYYYMMDD such as 20251231; got {value!r}") from None
    if not is_quarter_end(day):
        raise ToolInputError(f"{name} must be a quarter end (MMDD 0331, 0630, 0930 or 1231); got {day.strftime(YMD)}")
    return day


def optional_date(args: dict[str, Any], name: str) -> dt.date | None:
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, dt.date):
        raise ToolInputError(f"{name} must be a date YYYYMMDD; got {value!r}")
    return value


def announcement_window(ctx: ToolContext, args: dict[str, Any]) -> tuple[dt.date | None, dt.date]:
    """(first, last) announcement dates a caller may see: the clock always caps the window."""
    start, end, exact = optional_date(args, "start_date"), optional_date(args, "end_date"), optional_date(args, "ann_date")
    last = min(d for d in (ctx.clock, end, exact) if d is not None)
    first = exact if exact is not None else start
    if first is not None and first > last and first <= ctx.clock:
        raise ToolInputError(f"start_date {first.strftime(YMD)} is after end_date {last.strftime(YMD)}")
    return first, last


def visible_reports(ctx: ToolContext, args: dict[str, Any], code: str, *, versions: bool = True) -> list[Report]:
    """Report versions of `code` announced inside the caller's window (first-reported and
    restated; only the first-reported with `versions=False`), newest period first, the newest
    announcement first within a period."""
    first, last = announcement_window(ctx, args)
    period = parse_period(args["period"]) if args.get("period") is not None else None
    fundamentals = ctx.market.fundamentals
    reports = [
        r for r in (fundamentals.versions(code) if versions else fundamentals.reports(code))
        if r.ann_date <= last and (first is None or r.ann_date >= first)
        and (period is None or r.end_date == period)
    ]
    return sorted(reports, key=lambda r: (r.end_date, r.ann_date, r.update_flag), reverse=True)


def _comp_type(industry: str) -> str:
    return {"银行": "2", "保险": "3", "证券": "4"}.get(industry, "1")


# ------------------------------------------------------------------ A-share statement lines

_Y = "CNY"
INCOME_LINES: list[tuple[str, str, str]] = [
    ("total_revenue", "total operating revenue, year to date", "营业总收入(累计)"),
    ("revenue", "operating revenue, year to date", "营业收入(累计)"),
    ("total_cogs", "total operating costs (cost of sales, taxes, selling, admin, R&D, finance), year to date", "营业总成本(累计)"),
    ("oper_cost", "cost of sales, year to date", "营业成本(累计)"),
    ("biz_tax_surchg", "business taxes and surcharges, year to date", "税金及附加(累计)"),
    ("sell_exp", "selling expenses, year to date", "销售费用(累计)"),
    ("admin_exp", "administrative expenses, year to date", "管理费用(累计)"),
    ("rd_exp", "research and development expenses, year to date", "研发费用(累计)"),
    ("fin_exp", "finance expenses (net interest), year to date", "财务费用(累计)"),
    ("invest_income", "investment income, year to date", "投资净收益(累计)"),
    ("operate_profit", "operating profit, year to date", "营业利润(累计)"),
    ("non_oper_income", "non-operating income, year to date", "营业外收入(累计)"),
    ("non_oper_exp", "non-operating expenses, year to date", "营业外支出(累计)"),
    ("total_profit", "total profit before tax, year to date", "利润总额(累计)"),
    ("income_tax", "income tax expense, year to date", "所得税费用(累计)"),
    ("n_income", "net profit including minority interests, year to date", "净利润(含少数股东损益,累计)"),
    ("n_income_attr_p", "net profit attributable to shareholders of the parent, year to date", "归属于母公司所有者的净利润(累计)"),
    ("minority_gain", "minority interests' share of net profit, year to date", "少数股东损益(累计)"),
    ("ebit", "earnings before interest and tax (total profit + finance expenses), year to date", "息税前利润(累计)"),
]
BALANCE_LINES: list[tuple[str, str, str]] = [
    ("total_share", "share capital (period end; par value 1 per share)", "期末总股本(股本)"),
    ("cap_rese", "capital reserve", "资本公积金"),
    ("surplus_rese", "surplus reserve", "盈余公积金"),
    ("undistr_porfit", "undistributed profit (retained earnings)", "未分配利润"),
    ("money_cap", "cash and cash equivalents", "货币资金"),
    ("trad_asset", "trading financial assets", "交易性金融资产"),
    ("notes_receiv", "notes receivable", "应收票据"),
    ("accounts_receiv", "accounts receivable", "应收账款"),
    ("prepayment", "prepayments", "预付款项"),
    ("inventories", "inventories", "存货"),
    ("oth_cur_assets", "other current assets", "其他流动资产"),
    ("total_cur_assets", "total current assets", "流动资产合计"),
    ("lt_eqt_invest", "long-term equity investments", "长期股权投资"),
    ("fix_assets", "fixed assets", "固定资产"),
    ("cip", "construction in progress", "在建工程"),
    ("intan_assets", "intangible assets", "无形资产"),
    ("goodwill", "goodwill", "商誉"),
    ("defer_tax_assets", "deferred tax assets", "递延所得税资产"),
    ("oth_nca", "other non-current assets", "其他非流动资产"),
    ("total_nca", "total non-current assets", "非流动资产合计"),
    ("total_assets", "total assets", "资产总计"),
    ("st_borr", "short-term borrowings", "短期借款"),
    ("notes_payable", "notes payable", "应付票据"),
    ("acct_payable", "accounts payable", "应付账款"),
    ("contract_liab", "contract liabilities (advances from customers)", "合同负债"),
    ("payroll_payable", "payroll payable", "应付职工薪酬"),
    ("taxes_payable", "taxes payable", "应交税费"),
    ("oth_cur_liab", "other current liabilities", "其他流动负债"),
    ("total_cur_liab", "total current liabilities", "流动负债合计"),
    ("lt_borr", "long-term borrowings", "长期借款"),
    ("bond_payable", "bonds payable", "应付债券"),
    ("oth_ncl", "other non-current liabilities", "其他非流动负债"),
    ("total_ncl", "total non-current liabilities", "非流动负债合计"),
    ("total_liab", "total liabilities", "负债合计"),
    ("total_hldr_eqy_exc_min_int", "equity attributable to shareholders of the parent", "归属于母公司股东权益合计"),
    ("minority_int", "minority interests", "少数股东权益"),
    ("total_hldr_eqy_inc_min_int", "total equity including minority interests", "股东权益合计(含少数股东权益)"),
    ("total_liab_hldr_eqy", "total liabilities and equity", "负债及股东权益总计"),
]
CASHFLOW_LINES: list[tuple[str, str, str]] = [
    ("net_profit", "net profit including minority interests, year to date", "净利润(累计)"),
    ("c_fr_sale_sg", "cash received from sales of goods and services, year to date", "销售商品、提供劳务收到的现金(累计)"),
    ("c_paid_goods_s", "cash paid for goods and services, year to date", "购买商品、接受劳务支付的现金(累计)"),
    ("c_paid_to_for_empl", "cash paid to and for employees, year to date", "支付给职工以及为职工支付的现金(累计)"),
    ("c_paid_for_taxes", "taxes paid, year to date", "支付的各项税费(累计)"),
    ("n_cashflow_act", "net cash flow from operating activities, year to date", "经营活动产生的现金流量净额(累计)"),
    ("c_pay_acq_const_fiolta", "cash paid for fixed, intangible and other long-term assets (capex), year to date", "购建固定资产、无形资产和其他长期资产支付的现金(累计)"),
    ("n_cashflow_inv_act", "net cash flow from investing activities, year to date", "投资活动产生的现金流量净额(累计)"),
    ("c_pay_dist_dpcp_int_exp", "cash paid for dividends and interest, year to date", "分配股利、利润或偿付利息支付的现金(累计)"),
    ("n_cash_flows_fnc_act", "net cash flow from financing activities, year to date", "筹资活动产生的现金流量净额(累计)"),
    ("n_incr_cash_cash_equ", "net increase in cash and cash equivalents, year to date", "现金及现金等价物净增加额(累计)"),
    ("c_cash_equ_beg_period", "cash and cash equivalents at the beginning of the year", "期初现金及现金等价物余额"),
    ("c_cash_equ_end_period", "cash and cash equivalents at the end of the period", "期末现金及现金等价物余额"),
    ("free_cashflow", "free cash flow (operating cash flow minus capex), year to date", "企业自由现金流量(累计)"),
]


def _statement_values(v: dict[str, float]) -> dict[str, float]:
    """Statement lines as published, computed from the model's lines."""
    out = dict(v)
    out["total_revenue"] = v["revenue"]
    out["total_cogs"] = v["oper_cost"] + v["biz_tax_surchg"] + v["sell_exp"] + v["admin_exp"] + v["rd_exp"] + v["fin_exp"]
    out["ebit"] = v["total_profit"] + v["fin_exp"]
    out["net_profit"] = v["n_income"]
    out["total_share"] = v["total_share_capital"]
    return out


_HEAD_FIELDS = [
    fld("ts_code", "code", None, "stock code", "股票代码"),
    fld("ann_date", "date", None, "announcement date (YYYYMMDD)", "公告日期"),
    fld("f_ann_date", "date", None, "actual (final) announcement date (YYYYMMDD)", "实际公告日期"),
    fld("end_date", "date", None, "report period end (YYYYMMDD); not the end_date parameter, which bounds the announcement date", "报告期（与参数end_date不同：参数为公告日期窗口）"),
    fld("report_type", "text", None, "report type: 1 = consolidated statements", "报表类型(1合并报表)"),
    fld("comp_type", "text", None, "company type: 1 general, 2 bank, 3 insurance, 4 securities", "公司类型(1一般工商业 2银行 3保险 4证券)"),
    fld("end_type", "text", None, "period type: 1 Q1, 2 half-year, 3 Q3, 4 annual", "报告期类型(1一季报 2半年报 3三季报 4年报)"),
    fld("update_flag", "text", None, "version: 0 as first reported, 1 restated by a later report (its comparative)", "更新标识(0首次披露 1追溯调整)"),
]


def _line_fields(lines: list[tuple[str, str, str]], unit: str, currency_word: str) -> list[FieldMeta]:
    return [fld(n, "number", unit, f"{d}, {currency_word}", f"{z}(元)" if unit == "CNY" else f"{z}({unit})") for n, d, z in lines]


def _statement_params(example: str = "600519.SH") -> list[ParamSpec]:
    return [
        ts_code_param(example=example),
        date_param("ann_date", "announcement date YYYYMMDD (exact)"),
        date_param("start_date", "first announcement date YYYYMMDD of the window"),
        date_param("end_date", "last announcement date YYYYMMDD of the window (an announcement date, unlike the record field end_date, the report period; use period to pick a report period)"),
        ParamSpec("period", "date", "report period YYYYMMDD, a quarter end (e.g. 20251231 annual, 20250630 half-year)", fmt=YMD),
        ParamSpec("report_type", "str", "report type; only 1 (consolidated) is published", enum=("1",)),
    ]


_STATEMENT_DATES = [("ann_date", YMD, "point"), ("start_date", YMD, "start"), ("end_date", YMD, "end"), ("period", YMD, "period")]


def _statement_handler(
    lines: list[tuple[str, str, str]], classes: tuple[str, ...], with_head: bool = True, with_eps: bool = False
):
    names = [n for n, _, _ in lines]

    def handler(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
        code = args["ts_code"]
        entity = entity_of(ctx, code, classes)
        records = []
        for report in visible_reports(ctx, args, code):
            values = _statement_values(report.values)
            record: dict[str, Any] = {"ts_code": code, "ann_date": ymd(report.ann_date)}
            if with_head:
                record.update(
                    f_ann_date=ymd(report.ann_date), end_date=ymd(report.end_date), report_type="1",
                    comp_type=_comp_type(entity.industry), end_type=str(report.quarter),
                    update_flag=report.update_flag,
                )
            else:
                record.update(end_date=ymd(report.end_date), currency=entity.reporting_currency,
                              end_type=str(report.quarter), update_flag=report.update_flag)
            if with_eps:
                eps = round(report.values["n_income_attr_p"] / report.values["total_share"], 4)
                record.update(basic_eps=eps, diluted_eps=eps)
            record.update({n: values[n] for n in names})
            records.append(_as_reported(record, entity.industry))
        return records

    return handler


def _as_reported(record: dict[str, Any], industry: str | None) -> dict[str, Any]:
    """A financial company's record leaves the lines it has not (cost of sales, inventories,
    gross margins) empty, as its published statements do."""
    if is_financial(industry):
        record.update({n: None for n in NOT_REPORTED_BY_FINANCIALS if n in record})
    return record


_UPDATE_FLAG = _HEAD_FIELDS[-1]
_EPS_FIELDS = [
    fld("basic_eps", "number", "CNY", "basic earnings per share, year to date (parent net profit / period-end shares), CNY", "基本每股收益(元)"),
    fld("diluted_eps", "number", "CNY", "diluted earnings per share, year to date, CNY", "稀释每股收益(元)"),
]

INDICATOR_FIELDS: list[tuple[str, str, str | None, str, str]] = [
    ("eps", "number", "CNY", "basic EPS, year to date: parent net profit / period-end total shares", "基本每股收益(元)"),
    ("dt_eps", "number", "CNY", "diluted EPS, year to date", "稀释每股收益(元)"),
    ("total_revenue_ps", "number", "CNY", "total operating revenue per share, year to date", "每股营业总收入(元)"),
    ("revenue_ps", "number", "CNY", "operating revenue per share, year to date", "每股营业收入(元)"),
    ("bps", "number", "CNY", "book value per share: parent equity / period-end total shares", "每股净资产(元)"),
    ("ocfps", "number", "CNY", "operating cash flow per share, year to date", "每股经营活动产生的现金流量净额(元)"),
    ("profit_dedt", "number", "CNY", "net profit attributable to the parent after non-recurring items, year to date", "扣除非经常性损益后的净利润(元)"),
    ("gross_margin", "number", "CNY", "gross profit (revenue minus cost of sales), year to date", "毛利(元)"),
    ("grossprofit_margin", "number", "%", "gross profit margin: (revenue - cost of sales) / revenue x 100", "销售毛利率(%)"),
    ("netprofit_margin", "number", "%", "net profit margin: net profit / revenue x 100", "销售净利率(%)"),
    ("roe", "number", "%", "return on equity, year to date, not annualised: parent net profit / average of opening and closing parent equity x 100", "净资产收益率(%)"),
    ("roe_dt", "number", "%", "return on equity after non-recurring items, year to date, not annualised", "净资产收益率(扣除非经常损益)(%)"),
    ("roa", "number", "%", "return on assets, year to date: net profit / average total assets x 100", "总资产报酬率(%)"),
    ("debt_to_assets", "number", "%", "debt-to-assets ratio: total liabilities / total assets x 100", "资产负债率(%)"),
    ("current_ratio", "number", None, "current ratio: current assets / current liabilities", "流动比率"),
    ("quick_ratio", "number", None, "quick ratio: (current assets - inventories) / current liabilities", "速动比率"),
    ("assets_turn", "number", None, "total asset turnover, year to date: revenue / average total assets", "总资产周转率"),
    ("ebit", "number", "CNY", "earnings before interest and tax, year to date", "息税前利润(元)"),
    ("fcff", "number", "CNY", "free cash flow to the firm, year to date", "企业自由现金流量(元)"),
    ("basic_eps_yoy", "number", "%", "year-over-year growth of basic EPS", "基本每股收益同比增长率(%)"),
    ("netprofit_yoy", "number", "%", "year-over-year growth of parent net profit", "归属母公司股东的净利润同比增长率(%)"),
    ("or_yoy", "number", "%", "year-over-year growth of operating revenue", "营业收入同比增长率(%)"),
    ("op_yoy", "number", "%", "year-over-year growth of operating profit", "营业利润同比增长率(%)"),
    ("equity_yoy", "number", "%", "year-over-year growth of parent equity", "净资产同比增长率(%)"),
]


def _indicator_handler(classes: tuple[str, ...], currency_fields: bool = False):
    def handler(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
        code = args["ts_code"]
        entity = entity_of(ctx, code, classes)
        visible = visible_reports(ctx, args, code)
        # Comparison reports were announced before (or with) the report itself, hence always
        # known with it: the versions the company compared against (market/fundamentals.py).
        fundamentals = ctx.market.fundamentals
        everything = fundamentals.versions(code)
        fiscal = fundamentals.fiscal(code)
        records = []
        for report in visible:
            begin, prior = indicator_inputs(everything, report, fiscal)
            record: dict[str, Any] = {"ts_code": code, "ann_date": ymd(report.ann_date), "end_date": ymd(report.end_date)}
            if currency_fields:
                record.update(currency=entity.reporting_currency, end_type=str(report.quarter))
            record["update_flag"] = report.update_flag
            record.update(derive_indicators(report, begin, prior))
            records.append(_as_reported(record, entity.industry))
        return records

    return handler


def _a_share_tools() -> list[ToolSpec]:
    cn = ("cn_equity",)
    common = dict(
        service="statements", asset_classes=["cn_equity"], entity_param="ts_code", date_params=_STATEMENT_DATES,
        time_key="end_date", calendar="XSHG", refresh_class="quarterly",
    )
    money = "CNY (元)"
    return [
        make_tool(
            name="income", description="A-share income statement by report period (consolidated, year-to-date amounts in CNY); only reports announced by the clock",
            fields=_HEAD_FIELDS + _EPS_FIELDS + _line_fields(INCOME_LINES, "CNY", money),
            params=_statement_params(), handler=_statement_handler(INCOME_LINES, cn, with_eps=True), **common,
        ),
        make_tool(
            name="balancesheet", description="A-share balance sheet at report period ends (consolidated, CNY); total assets equal total liabilities plus total equity",
            fields=_HEAD_FIELDS + _line_fields(BALANCE_LINES, "CNY", money),
            params=_statement_params(), handler=_statement_handler(BALANCE_LINES, cn), **common,
        ),
        make_tool(
            name="cashflow", description="A-share cash flow statement by report period (consolidated, year-to-date amounts in CNY)",
            fields=_HEAD_FIELDS + _line_fields(CASHFLOW_LINES, "CNY", money),
            params=_statement_params(), handler=_statement_handler(CASHFLOW_LINES, cn), **common,
        ),
        make_tool(
            name="fina_indicator", description="A-share financial indicators derived from the statements of each report period (per-share values, margins, returns, leverage, growth)",
            fields=[fld("ts_code", "code", None, "stock code", "股票代码"), fld("ann_date", "date", None, "announcement date", "公告日期"),
                    fld("end_date", "date", None, "report period end", "报告期"), _UPDATE_FLAG]
            + [fld(n, t, u, d, z) for n, t, u, d, z in INDICATOR_FIELDS],
            params=_statement_params()[:5], handler=_indicator_handler(cn), **common,
        ),
    ]


# ------------------------------------------------------------------ forecast / express / mainbz / schedule / audit


def _forecast_handler(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    code = args.get("ts_code")
    if code is None:
        raise ToolInputError("forecast needs ts_code (e.g. 600519.SH); use the search tool to find a code by name")
    entity_of(ctx, code, ("cn_equity",))
    first, last = announcement_window(ctx, args)
    period = parse_period(args["period"]) if args.get("period") is not None else None
    kinds = set(str(args["type"]).split(",")) if args.get("type") else None
    records = []
    for f in ctx.market.fundamentals.disclosures.forecasts(code):
        if f.ann_date > last or (first is not None and f.ann_date < first) or (period and f.end_date != period):
            continue
        if kinds and f.type not in kinds:
            continue
        records.append({
            "ts_code": code, "ann_date": ymd(f.ann_date), "end_date": ymd(f.end_date), "type": f.type,
            "p_change_min": f.p_change_min, "p_change_max": f.p_change_max,
            "net_profit_min": f.net_profit_min, "net_profit_max": f.net_profit_max,
            "last_parent_net": f.last_parent_net, "first_ann_date": ymd(f.ann_date),
            "summary": f"预计归属于上市公司股东的净利润{f.net_profit_min:.2f}万元至{f.net_profit_max:.2f}万元({f.type})",
        })
    return sorted(records, key=lambda r: (r["end_date"], r["ann_date"]), reverse=True)


def _express_handler(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    code = args["ts_code"]
    entity_of(ctx, code, ("cn_equity",))
    first, last = announcement_window(ctx, args)
    period = parse_period(args["period"]) if args.get("period") is not None else None
    records = []
    for e in ctx.market.fundamentals.disclosures.express_reports(code):
        if e.ann_date > last or (first is not None and e.ann_date < first) or (period and e.end_date != period):
            continue
        v = e.values
        shares = v["total_share"]
        eps = round(v["n_income_attr_p"] / shares, 4)
        prior_eps = round(v["prior_n_income_attr_p"] / v["prior_total_share"], 4) if "prior_total_share" in v else None

        def yoy(line: str) -> float | None:
            prior = v.get("prior_" + line)
            return round((v[line] - prior) / abs(prior) * 100, 4) if prior else None

        opening_equity = v.get("prior_total_hldr_eqy_exc_min_int")
        average_equity = (opening_equity + v["total_hldr_eqy_exc_min_int"]) / 2 if opening_equity else v["total_hldr_eqy_exc_min_int"]
        records.append({
            "ts_code": code, "ann_date": ymd(e.ann_date), "end_date": ymd(e.end_date),
            "revenue": v["revenue"], "operate_profit": v["operate_profit"], "total_profit": v["total_profit"],
            "n_income": v["n_income_attr_p"], "total_assets": v["total_assets"],
            "total_hldr_eqy_exc_min_int": v["total_hldr_eqy_exc_min_int"], "diluted_eps": eps,
            "diluted_roe": round(v["n_income_attr_p"] / average_equity * 100, 4) if average_equity else None,
            "bps": round(v["total_hldr_eqy_exc_min_int"] / shares, 4),
            "yoy_sales": yoy("revenue"), "yoy_op": yoy("operate_profit"), "yoy_tp": yoy("total_profit"),
            "yoy_net_profit": yoy("n_income_attr_p"),
            "yoy_eps": round((eps - prior_eps) / abs(prior_eps) * 100, 4) if prior_eps else None,
            "or_last_year": v.get("prior_revenue"), "np_last_year": v.get("prior_n_income_attr_p"),
            "open_net_assets": opening_equity, "is_audit": 0,
            "perf_summary": "本公告所载财务数据为初步核算数据,未经会计师事务所审计",
        })
    return sorted(records, key=lambda r: r["end_date"], reverse=True)


def _mainbz_handler(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    code = args["ts_code"]
    entity = entity_of(ctx, code, ("cn_equity",))
    kind = args.get("type") or "P"
    records = []
    for report in visible_reports(ctx, {k: v for k, v in args.items() if k != "type"}, code, versions=False):
        if report.quarter not in (2, 4):
            continue
        for seg in ctx.market.fundamentals.disclosures.main_business(code, report, kind):
            records.append(_as_reported({"ts_code": code, "end_date": ymd(report.end_date), **seg,
                                         "curr_type": entity.currency}, entity.industry))
    return records


def _disclosure_handler(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    code = args["ts_code"]
    entity_of(ctx, code, ("cn_equity",))
    period = parse_period(args["end_date"], "end_date") if args.get("end_date") is not None else None
    pre = optional_date(args, "pre_date")
    records = []
    for p in ctx.market.fundamentals.disclosures.plans(code):
        if p.ann_date > ctx.clock or (period and p.end_date != period):
            continue
        modified = p.modify_date is not None and p.modify_date <= ctx.clock
        pre_date = p.actual_date if modified else p.first_pre_date
        if pre is not None and pre_date != pre:
            continue
        records.append({
            "ts_code": code, "ann_date": ymd(p.modify_date if modified else p.ann_date),
            "end_date": ymd(p.end_date), "pre_date": ymd(pre_date),
            "actual_date": ymd(p.actual_date) if p.actual_date <= ctx.clock else None,
            "modify_date": ymd(p.modify_date) if modified else None,
        })
    return sorted(records, key=lambda r: r["end_date"], reverse=True)


def _audit_handler(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
    code = args["ts_code"]
    entity_of(ctx, code, ("cn_equity",))
    records = []
    for report in visible_reports(ctx, args, code, versions=False):
        if report.quarter != 4:
            continue
        records.append({"ts_code": code, "ann_date": ymd(report.ann_date), "end_date": ymd(report.end_date),
                        **ctx.market.fundamentals.disclosures.audit(code, report)})
    return records


def _disclosure_tools() -> list[ToolSpec]:
    base = dict(service="statements", asset_classes=["cn_equity"], entity_param="ts_code", calendar="XSHG", refresh_class="quarterly")
    head = [fld("ts_code", "code", None, "stock code", "股票代码"), fld("ann_date", "date", None, "announcement date", "公告日期"),
            fld("end_date", "date", None, "report period end", "报告期")]
    window = _statement_params()[:5]
    return [
        make_tool(
            name="forecast", description="A-share earnings preannouncements (业绩预告): expected parent net profit range and change versus last year, announced before the report",
            fields=head + [
                fld("type", "text", None, "forecast type: 预增 up >50%, 预减 down >50%, 扭亏 back to profit, 首亏 first loss, 续亏 continued loss, 续盈 stable profit, 略增 up, 略减 down", "业绩预告类型"),
                fld("p_change_min", "number", "%", "lower bound of the expected change in parent net profit versus the same period last year", "预告净利润变动幅度下限(%)"),
                fld("p_change_max", "number", "%", "upper bound of the expected change in parent net profit", "预告净利润变动幅度上限(%)"),
                fld("net_profit_min", "number", "10k CNY", "lower bound of expected parent net profit, in 10 thousand CNY (万元)", "预告净利润下限(万元)"),
                fld("net_profit_max", "number", "10k CNY", "upper bound of expected parent net profit, in 10 thousand CNY (万元)", "预告净利润上限(万元)"),
                fld("last_parent_net", "number", "10k CNY", "parent net profit of the same period last year, 10 thousand CNY (万元)", "上年同期归属母公司净利润(万元)"),
                fld("first_ann_date", "date", None, "first announcement date of this forecast", "首次公告日"),
                fld("summary", "text", None, "forecast summary", "业绩预告摘要"),
            ],
            params=[ts_code_param(), *window[1:], ParamSpec("type", "str", "forecast type(s), comma separated, e.g. 预增,扭亏")],
            handler=_forecast_handler, date_params=_STATEMENT_DATES, time_key="ann_date", **base,
        ),
        make_tool(
            name="express", description="A-share annual flash earnings reports (业绩快报), published before the audited annual report; a quarter of them are revised by up to 0.5% in the audited statements",
            fields=head + [
                fld("revenue", "number", "CNY", "operating revenue, CNY", "营业收入(元)"),
                fld("operate_profit", "number", "CNY", "operating profit, CNY", "营业利润(元)"),
                fld("total_profit", "number", "CNY", "total profit before tax, CNY", "利润总额(元)"),
                fld("n_income", "number", "CNY", "net profit attributable to shareholders of the parent, CNY", "归属于母公司股东的净利润(元)"),
                fld("total_assets", "number", "CNY", "total assets at year end, CNY", "总资产(元)"),
                fld("total_hldr_eqy_exc_min_int", "number", "CNY", "parent equity at year end, CNY", "股东权益合计(不含少数股东权益)(元)"),
                fld("diluted_eps", "number", "CNY", "earnings per share, CNY", "每股收益(摊薄)(元)"),
                fld("diluted_roe", "number", "%", "return on average parent equity", "净资产收益率(摊薄)(%)"),
                fld("bps", "number", "CNY", "book value per share, CNY", "每股净资产(元)"),
                fld("yoy_sales", "number", "%", "revenue growth versus last year", "同比增长率:营业收入(%)"),
                fld("yoy_op", "number", "%", "operating profit growth versus last year", "同比增长率:营业利润(%)"),
                fld("yoy_tp", "number", "%", "total profit growth versus last year", "同比增长率:利润总额(%)"),
                fld("yoy_net_profit", "number", "%", "parent net profit growth versus last year", "同比增长率:归属母公司股东的净利润(%)"),
                fld("yoy_eps", "number", "%", "EPS growth versus last year", "同比增长率:基本每股收益(%)"),
                fld("or_last_year", "number", "CNY", "operating revenue last year, CNY", "去年同期营业收入(元)"),
                fld("np_last_year", "number", "CNY", "parent net profit last year, CNY", "去年同期净利润(元)"),
                fld("open_net_assets", "number", "CNY", "parent equity at the start of the year, CNY", "期初净资产(元)"),
                fld("is_audit", "integer", None, "audited flag (0: unaudited)", "是否审计(0否)"),
                fld("perf_summary", "text", None, "performance summary", "业绩简要说明"),
            ],
            params=window, handler=_express_handler, date_params=_STATEMENT_DATES, time_key="ann_date", **base,
        ),
        make_tool(
            name="fina_mainbz", series_keys=["bz_item"], description="A-share main business composition (主营业务构成) of half-year and annual reports, by product (P) or region (D); segment sales sum to operating revenue",
            fields=[fld("ts_code", "code", None, "stock code", "股票代码"), fld("end_date", "date", None, "report period end", "报告期"),
                    fld("bz_item", "text", None, "business segment name", "主营业务来源"),
                    fld("bz_sales", "number", "CNY", "segment revenue, year to date, CNY", "主营业务收入(元)"),
                    fld("bz_profit", "number", "CNY", "segment gross profit (revenue minus cost), CNY", "主营业务利润(元)"),
                    fld("bz_cost", "number", "CNY", "segment cost of sales, CNY", "主营业务成本(元)"),
                    fld("curr_type", "text", None, "currency", "货币代码")],
            params=[*_statement_params()[:5], ParamSpec("type", "str", "P by product, D by region", enum=("P", "D"))],
            handler=_mainbz_handler, date_params=_STATEMENT_DATES, time_key="end_date", **base,
        ),
        make_tool(
            name="disclosure_date", description="A-share periodic report disclosure schedule (财报披露计划): scheduled, modified and actual disclosure dates",
            fields=[fld("ts_code", "code", None, "stock code", "股票代码"),
                    fld("ann_date", "date", None, "date the latest schedule was published", "最新披露公告日"),
                    fld("end_date", "date", None, "report period end", "报告期"),
                    fld("pre_date", "date", None, "scheduled disclosure date", "预计披露日期"),
                    fld("actual_date", "date", None, "actual disclosure date (empty until disclosed)", "实际披露日期"),
                    fld("modify_date", "date", None, "date the schedule was changed", "披露日期修正记录")],
            params=[ts_code_param(), ParamSpec("end_date", "date", "report period YYYYMMDD (quarter end)", fmt=YMD), date_param("pre_date", "scheduled disclosure date YYYYMMDD")],
            handler=_disclosure_handler, date_params=[("end_date", YMD, "period"), ("pre_date", YMD, "point")],
            time_key="end_date", **base,
        ),
        make_tool(
            name="fina_audit", description="A-share annual audit opinions: audit result, fees, audit firm and signing accountants",
            fields=head + [fld("audit_result", "text", None, "audit opinion", "审计结果"),
                           fld("audit_fees", "number", "CNY", "audit fees, CNY", "审计总费用(元)"),
                           fld("audit_agency", "text", None, "audit firm", "会计事务所"),
                           fld("audit_sign", "text", None, "signing accountants", "签字会计师")],
            params=window, handler=_audit_handler, date_params=_STATEMENT_DATES, time_key="end_date", **base,
        ),
    ]


# ------------------------------------------------------------------ HK / US simplified statements

_FOREIGN_INCOME = [l for l in INCOME_LINES if l[0] in ("revenue", "oper_cost", "operate_profit", "total_profit", "income_tax", "n_income", "n_income_attr_p", "minority_gain")]
_FOREIGN_BALANCE = [l for l in BALANCE_LINES if l[0] in ("money_cap", "accounts_receiv", "inventories", "total_cur_assets", "total_nca", "total_assets", "total_cur_liab", "total_ncl", "total_liab", "total_hldr_eqy_exc_min_int", "minority_int", "total_hldr_eqy_inc_min_int")]
_FOREIGN_CASHFLOW = [l for l in CASHFLOW_LINES if l[0] in ("n_cashflow_act", "c_pay_acq_const_fiolta", "n_cashflow_inv_act", "n_cash_flows_fnc_act", "n_incr_cash_cash_equ", "c_cash_equ_end_period", "free_cashflow")]
_FOREIGN_INDICATORS = ("eps", "bps", "roe", "roa", "grossprofit_margin", "netprofit_margin", "debt_to_assets", "current_ratio", "or_yoy", "netprofit_yoy")


def _in_reporting_currency(fields: list[FieldMeta], currency: str) -> list[FieldMeta]:
    """Amount fields whose unit is each record's `currency` (the usual one: `currency`)."""
    return [f.model_copy(update={"unit_field": "currency"}) if f.unit == currency else f for f in fields]


def _foreign_tools(prefix: str, asset_class: str, currency: str, calendar: str, example: str, cadence: str) -> list[ToolSpec]:
    classes = (asset_class,)
    base = dict(service="hk_us", asset_classes=[asset_class], entity_param="ts_code", date_params=_STATEMENT_DATES,
                time_key="end_date", calendar=calendar, refresh_class="quarterly")
    head = [fld("ts_code", "code", None, "stock code", "股票代码"), fld("ann_date", "date", None, "announcement date", "公告日期"),
            fld("end_date", "date", None, "report period end (a calendar quarter end; the fiscal year may end in March, June or September)", "报告期"),
            fld("currency", "text", None, "reporting currency of the amounts (HKD, CNY or USD; may differ from the trading currency)", "报告币种"),
            fld("end_type", "text", None, "fiscal period: 1 first quarter, 2 half year (interim), 3 nine months, 4 fiscal year (annual report)", "报告期类型(财年:1一季 2中期 3前三季 4全年)"),
            _HEAD_FIELDS[-1]]
    word = f"in the reporting currency (usually {currency}), simplified wide layout, year to date from the fiscal year's start; {cadence}"
    ind = [fld(n, t, (currency if u == "CNY" else u), d, z.replace("(元)", f"({currency})")) for n, t, u, d, z in INDICATOR_FIELDS if n in _FOREIGN_INDICATORS]
    ind = _in_reporting_currency(ind, currency)
    params = _statement_params(example)[:5]
    eps_fields = _in_reporting_currency(
        [fld("basic_eps", "number", currency, f"basic EPS, year to date, {currency}", f"基本每股收益({currency})"),
         fld("diluted_eps", "number", currency, f"diluted EPS, year to date, {currency}", f"稀释每股收益({currency})")], currency)
    return [
        make_tool(name=f"{prefix}_income", description=f"{asset_class.split('_')[0].upper()} income statement ({word}), year-to-date amounts",
                  fields=head + eps_fields + _in_reporting_currency(_line_fields(_FOREIGN_INCOME, currency, currency), currency), params=params,
                  handler=_statement_handler(_FOREIGN_INCOME, classes, with_head=False, with_eps=True), **base),
        make_tool(name=f"{prefix}_balancesheet", description=f"{asset_class.split('_')[0].upper()} balance sheet at period ends ({word})",
                  fields=head + _in_reporting_currency(_line_fields(_FOREIGN_BALANCE, currency, currency), currency), params=params,
                  handler=_statement_handler(_FOREIGN_BALANCE, classes, with_head=False), **base),
        make_tool(name=f"{prefix}_cashflow", description=f"{asset_class.split('_')[0].upper()} cash flow statement ({word}), year-to-date amounts",
                  fields=head + _in_reporting_currency(_line_fields(_FOREIGN_CASHFLOW, currency, currency), currency), params=params,
                  handler=_statement_handler(_FOREIGN_CASHFLOW, classes, with_head=False), **base),
        make_tool(name=f"{prefix}_fina_indicator", description=f"{asset_class.split('_')[0].upper()} financial indicators derived from the statements ({word})",
                  fields=head + ind, params=params, handler=_foreign_indicator_handler(classes), **base),
    ]


def _foreign_indicator_handler(classes: tuple[str, ...]):
    inner = _indicator_handler(classes, currency_fields=True)

    def handler(ctx: ToolContext, args: dict[str, Any]) -> list[dict[str, Any]]:
        keep = ("ts_code", "ann_date", "end_date", "currency", "end_type", "update_flag", *_FOREIGN_INDICATORS)
        return [{k: r[k] for k in keep} for r in inner(ctx, args)]

    return handler


TOOLS: list[ToolSpec] = [
    *_a_share_tools(),
    *_disclosure_tools(),
    *_foreign_tools("hk", "hk_equity", "HKD", "XHKG", "00700.HK", "half-yearly reports (interim and annual; an A+H company every quarter)"),
    *_foreign_tools("us", "us_equity", "USD", "XNYS", "AAPL", "quarterly reports"),
]
