"""How the sites of the offline web word things: page titles per data set, and field labels that
vary by site the way real portals word them.

A field's label starts from the reviewed lexicon's noun (core/lexicon.py: "closing price",
"归属于母公司股东的净利润") and is reworded by the site's *style*: each site uses its own
synonyms ("Close", "Last price"; "收盘", "今收"), abbreviations ("YoY", "% of", "no. of") and
case, so a question's words are seldom a substring of the page that answers it. Every variant
maps back to the noun through `canonical_label`, which a careful reader (the search-and-read
baseline) uses to recognise a row whatever the site calls it.

Titles name the data set as a portal would ("Daily quotes", "日行情"), never the data
service's tool names or its description of itself.
"""

from __future__ import annotations

import functools
import re

STYLES = 4  # label styles (EN: 1 writes Title Case, 3 drops hyphens); a site's style is fixed by its key

# Whole-label synonyms (the label is exactly the noun): noun -> variants by style (index 0 = the noun).
_WHOLE_EN: dict[str, tuple[str, ...]] = {
    "closing price": ("closing price", "close", "last price", "close"),
    "opening price": ("opening price", "open", "opening quote", "open"),
    "highest price": ("highest price", "high", "day high", "high"),
    "lowest price": ("lowest price", "low", "day low", "low"),
    "previous close": ("previous close", "prev. close", "prior close", "previous close"),
    "trading volume": ("trading volume", "volume", "shares traded", "vol."),
    "turnover value": ("turnover value", "amount traded", "value traded", "turnover"),
    "price change": ("price change", "change", "net change", "chg"),
    "percentage change": ("percentage change", "% change", "change (%)", "pct chg"),
    "NAV per unit": ("NAV per unit", "unit NAV", "NAV", "net asset value per unit"),
    "turnover rate": ("turnover rate", "turnover ratio", "share turnover", "turnover rate"),
    "intraday amplitude": ("intraday amplitude", "range", "day range (%)", "amplitude"),
}
_WHOLE_ZH: dict[str, tuple[str, ...]] = {
    "收盘价": ("收盘价", "收盘", "今收", "收市价"),
    "开盘价": ("开盘价", "开盘", "今开", "开市价"),
    "最高价": ("最高价", "最高", "最高", "当日最高"),
    "最低价": ("最低价", "最低", "最低", "当日最低"),
    "昨收价": ("昨收价", "昨收", "前收盘", "昨收"),
    "成交量": ("成交量", "成交数量", "成交量", "总手"),
    "成交额": ("成交额", "成交金额", "成交额", "金额"),
    "涨跌额": ("涨跌额", "涨跌", "涨跌值", "涨跌"),
    "涨跌幅": ("涨跌幅", "涨幅", "涨跌幅（%）", "幅度"),
    "单位净值": ("单位净值", "净值", "最新净值", "单位净值"),
    "换手率": ("换手率", "换手", "换手率", "换手"),
}
# Phrase synonyms inside a label (word-bounded in English): phrase -> variants by style.
_PHRASES_EN: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("year-over-year", ("year-over-year", "YoY", "y/y", "annual")),
    ("month-over-month", ("month-over-month", "MoM", "m/m", "monthly")),
    ("year-to-date", ("year-to-date", "YTD", "cumulative", "year to date")),
    ("as a percentage of", ("as a percentage of", "as % of", "% of", "in % of")),
    ("number of", ("number of", "no. of", "count of", "no. of")),
    ("market capitalisation", ("market capitalisation", "market cap", "market value", "mkt cap")),
    ("net profit", ("net profit", "net income", "net earnings", "net profit")),
    ("attributable to shareholders", ("attributable to shareholders", "attrib. to shareholders",
                                      "to owners of the parent", "attributable to owners")),
    ("cash and cash equivalents", ("cash and cash equivalents", "cash & equivalents", "cash and equivalents",
                                   "cash & cash equivalents")),
    ("operating revenue", ("operating revenue", "revenue from operations", "operating sales", "revenues")),
    ("per share", ("per share", "/share", "per share", "per shr")),
    ("per unit", ("per unit", "/unit", "per unit", "per unit")),
    ("shareholders", ("shareholders", "stockholders", "holders", "shareholders")),
    ("securities lending", ("securities lending", "short selling", "stock lending", "securities lending")),
    ("margin financing", ("margin financing", "margin buying", "margin loan", "margin debt")),
    ("balance", ("balance", "outstanding", "balance", "o/s")),
    ("trailing", ("trailing", "TTM", "trailing", "LTM")),
    ("dividend", ("dividend", "div.", "dividend", "payout")),
    ("expenses", ("expenses", "expense", "costs", "exp.")),
    ("value added", ("value added", "added value", "GVA", "value-added")),
    ("growth", ("growth", "growth rate", "change", "increase")),
    ("total", ("total", "total", "aggregate", "sum of")),
)
_PHRASES_ZH: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("归属于母公司股东的净利润", ("归属于母公司股东的净利润", "归母净利润", "归属母公司净利润", "归属于上市公司股东的净利润")),
    ("归属于母公司股东权益", ("归属于母公司股东权益", "归母权益", "归属母公司股东权益", "母公司股东权益")),
    ("归属于母公司", ("归属于母公司", "归母", "归属母公司", "归属于上市公司")),
    ("营业总收入", ("营业总收入", "营收总额", "营业总收入", "总营收")),
    ("营业收入", ("营业收入", "营收", "营业收入", "营业额")),
    ("同比增长率", ("同比增长率", "同比增幅", "同比增长", "较上年同期增长")),
    ("同比", ("同比", "较上年同期", "比上年", "较去年同期")),
    ("环比", ("环比", "较上月", "比上月", "较前月")),
    ("本年累计", ("本年累计", "年初至今", "今年以来", "年内累计")),
    ("总市值", ("总市值", "A股市值", "总市值", "市值总额")),
    ("流通市值", ("流通市值", "流通值", "流通市值", "流通A股市值")),
    ("比例", ("比例", "占比", "比重", "比率")),
    ("每股", ("每股", "每股", "单股", "每股")),
    ("余额", ("余额", "余额", "存量", "结余")),
    ("金额", ("金额", "金额", "金额", "数额")),
    ("费用", ("费用", "费用", "支出", "开支")),
    ("合计", ("合计", "总计", "合计", "小计")),
)


def _style_of(site_key: str) -> int:
    return sum(site_key.encode()) % STYLES


def _word_bounded(phrase: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])" + re.escape(phrase) + r"(?![\w-])", re.IGNORECASE)


def _unhyphen(text: str) -> str:
    return text.replace("-", " ")


_PHRASE_PATTERNS_EN = tuple((_word_bounded(p), variants) for p, variants in _PHRASES_EN)


def _title_case(text: str) -> str:
    small = {"of", "and", "the", "to", "in", "on", "at", "per", "by", "for", "a", "as", "or", "vs"}
    words = text.split(" ")
    return " ".join(w if (i and w.lower() in small) or any(c.isupper() for c in w[1:]) or not w
                    else w[:1].upper() + w[1:] for i, w in enumerate(words))


@functools.lru_cache(maxsize=8192)
def site_label(noun: str, lang: str, site_key: str) -> str:
    """The label `site_key` prints for the lexicon noun `noun` (`lang` "en" or "zh")."""
    style = _style_of(site_key)
    if lang == "zh":
        if noun in _WHOLE_ZH:
            return _WHOLE_ZH[noun][style]
        text = noun
        for phrase, variants in _PHRASES_ZH:
            if phrase in text:
                text = text.replace(phrase, variants[(style + len(phrase)) % STYLES])
                break
        if style in (1, 3):
            text = text.replace("的", "")
        return text
    if noun in _WHOLE_EN:
        text = _WHOLE_EN[noun][style]
    else:
        text = noun
        used = 0
        for index, (pattern, variants) in enumerate(_PHRASE_PATTERNS_EN):
            if used < 2 and pattern.search(text):
                text = pattern.sub(variants[(style + index) % STYLES], text, count=1)
                used += 1
        text = re.sub(r"^the ", "", text)
        if style == 3:
            text = text.replace("-", " ")
    if style == 1:
        return _title_case(text)
    return text[:1].upper() + text[1:]


@functools.lru_cache(maxsize=1)
def _reverse_tables() -> tuple[dict[str, str], dict[str, str], list[tuple[re.Pattern[str], str]],
                               list[tuple[str, str]]]:
    whole_en = {_unhyphen(v.lower()): noun.lower() for noun, variants in _WHOLE_EN.items() for v in variants}
    whole_zh = {v: noun for noun, variants in _WHOLE_ZH.items() for v in variants}
    phrases_en: list[tuple[re.Pattern[str], str]] = []
    for phrase, variants in _PHRASES_EN:
        for variant in sorted(set(variants) - {phrase}, key=len, reverse=True):
            phrases_en.append((_word_bounded(_unhyphen(variant)), _unhyphen(phrase)))
    phrases_zh = [(variant, phrase) for phrase, variants in _PHRASES_ZH
                  for variant in sorted(set(variants) - {phrase}, key=len, reverse=True)]
    phrases_zh.sort(key=lambda item: len(item[0]), reverse=True)
    return whole_en, whole_zh, phrases_en, phrases_zh


@functools.lru_cache(maxsize=65536)
def canonical_label(text: str, lang: str | None = None) -> str:
    """A label (or a question's text) with every site's wording mapped back to the lexicon's:
    lower case, hyphens as spaces, "the" and "的" dropped. Two texts naming the same quantity in
    different sites' words have the same canonical form."""
    whole_en, whole_zh, phrases_en, phrases_zh = _reverse_tables()
    stripped = " ".join(text.split())
    if lang != "en" and stripped in whole_zh:
        stripped = whole_zh[stripped]
    elif lang != "zh" and _unhyphen(stripped.lower()) in whole_en:
        stripped = whole_en[_unhyphen(stripped.lower())]
    out = stripped
    if lang != "en" and re.search(r"[\u4e00-\u9fff]", out):
        for variant, phrase in phrases_zh:
            if variant in out and phrase not in out:
                out = out.replace(variant, phrase)
        out = out.replace("的", "")
        out = whole_zh.get(out, out)
    if lang != "zh":
        out = _unhyphen(out)
        for pattern, phrase in phrases_en:
            out = pattern.sub(phrase, out)
        out = out.lower()
        out = re.sub(r"\bthe\b ?", "", out)
    return " ".join(out.split())


# Page titles per data set: (English, Chinese). A tool without an entry gets its service's name.
TITLES: dict[str, tuple[str, str]] = {
    "daily": ("Daily quotes", "日行情"), "weekly": ("Weekly bars", "周线行情"), "monthly": ("Monthly bars", "月线行情"),
    "adj_factor": ("Price adjustment factors", "复权因子"), "daily_basic": ("Valuation and share capital", "每日指标"),
    "stk_limit": ("Daily price limits", "涨跌停价格"), "suspend_d": ("Trading suspensions", "停复牌信息"),
    "bak_daily": ("Extended daily quotes", "备用行情"), "pro_bar": ("Adjusted quotes", "复权行情"),
    "stk_factor": ("Technical indicators", "技术指标"), "dividend": ("Dividends and bonus shares", "分红送股"),
    "hk_daily": ("Daily quotes", "日行情"), "hk_daily_adj": ("Daily quotes with market value", "复权行情及市值"),
    "hk_adjfactor": ("Price adjustment factors", "复权因子"), "us_daily": ("Daily quotes", "日行情"),
    "us_daily_adj": ("Daily quotes with market value", "复权行情及市值"), "us_adjfactor": ("Price adjustment factors", "复权因子"),
    "index_daily": ("Index levels", "指数行情"), "index_weekly": ("Weekly index levels", "指数周线"),
    "index_monthly": ("Monthly index levels", "指数月线"), "index_weight": ("Constituent weights", "成分股权重"),
    "index_dailybasic": ("Index valuation", "指数估值指标"), "index_global": ("Index levels", "指数行情"),
    "sw_daily": ("Industry index levels and valuation", "行业指数行情"), "index_member": ("Index members", "指数成分股"),
    "fund_nav": ("Net asset value", "基金净值"), "fund_daily": ("ETF daily quotes", "场内行情"),
    "fund_adj": ("Fund adjustment factors", "基金复权因子"), "fund_share": ("Units outstanding", "基金份额"),
    "etf_share_size": ("Units and fund size", "份额与规模"), "fund_div": ("Distributions", "基金分红"),
    "fund_manager": ("Fund managers", "基金经理"), "fund_portfolio": ("Top holdings", "十大重仓股"),
    "moneyflow": ("Money flow by order size", "资金流向"), "moneyflow_hsgt": ("Stock Connect net flows", "沪深港通资金流向"),
    "hsgt_top10": ("Stock Connect top 10 by turnover", "沪深股通十大成交股"), "hk_hold": ("Northbound holdings", "北向持股"),
    "margin": ("Margin trading totals", "融资融券汇总"), "margin_detail": ("Margin trading detail", "融资融券明细"),
    "top_list": ("Dragon-tiger list", "龙虎榜"), "top_inst": ("Dragon-tiger list seats", "龙虎榜席位明细"),
    "block_trade": ("Block trades", "大宗交易"), "limit_list": ("Limit-up and limit-down stocks", "涨跌停统计"),
    "stock_basic": ("Company overview", "公司概况"), "stock_company": ("Company profile", "公司资料"),
    "namechange": ("Name history", "曾用名"), "hk_basic": ("Company overview", "公司概况"),
    "us_basic": ("Company overview", "公司概况"), "index_basic": ("Index overview", "指数概况"),
    "fund_basic": ("Fund overview", "基金概况"), "stk_managers": ("Directors and executives", "高管信息"),
    "income": ("Income statement", "利润表"), "balancesheet": ("Balance sheet", "资产负债表"),
    "cashflow": ("Cash flow statement", "现金流量表"), "fina_indicator": ("Financial ratios", "财务指标"),
    "forecast": ("Earnings forecast", "业绩预告"), "express": ("Preliminary results", "业绩快报"),
    "fina_mainbz": ("Revenue by segment", "主营构成"), "disclosure_date": ("Reporting calendar", "财报披露日期"),
    "fina_audit": ("Audit opinion", "审计意见"), "hk_income": ("Income statement", "利润表"),
    "hk_balancesheet": ("Balance sheet", "资产负债表"), "hk_cashflow": ("Cash flow statement", "现金流量表"),
    "hk_fina_indicator": ("Financial ratios", "财务指标"), "us_income": ("Income statement", "利润表"),
    "us_balancesheet": ("Balance sheet", "资产负债表"), "us_cashflow": ("Cash flow statement", "现金流量表"),
    "us_fina_indicator": ("Financial ratios", "财务指标"), "top10_holders": ("Top 10 shareholders", "十大股东"),
    "top10_floatholders": ("Top 10 float shareholders", "十大流通股东"), "stk_holdernumber": ("Shareholder count", "股东户数"),
    "stk_holdertrade": ("Insider and shareholder trades", "股东增减持"), "share_float": ("Lock-up expiries", "限售解禁"),
    "repurchase": ("Share buybacks", "股份回购"), "pledge_stat": ("Share pledges", "股权质押统计"),
    "stk_rewards": ("Executive pay", "管理层薪酬"), "cn_cpi": ("Consumer prices (CPI)", "居民消费价格指数"),
    "cn_ppi": ("Producer prices (PPI)", "工业生产者出厂价格指数"), "cn_m": ("Money supply", "货币供应量"),
    "sf_month": ("Aggregate social financing", "社会融资规模"), "cn_pmi": ("Purchasing managers' index", "采购经理指数"),
    "cn_gdp": ("Gross domestic product", "国内生产总值"), "shibor": ("SHIBOR fixings", "上海银行间同业拆放利率"),
    "shibor_lpr": ("Loan prime rate", "贷款市场报价利率"), "hibor": ("HIBOR fixings", "香港银行同业拆息"),
    "us_tycr": ("Treasury par yield curve", "美国国债收益率曲线"), "us_trycr": ("Treasury real yield curve", "美国实际收益率曲线"),
    "us_tbr": ("Treasury bill rates", "美国国库券利率"), "us_tltr": ("Treasury long-term rates", "美国长期国债利率"),
    "us_trltr": ("Real long-term rate average", "美国实际长期利率"), "fx_daily": ("Currency rates", "外汇行情"),
    "fx_obasic": ("Currency pairs", "外汇品种"),
}
SERVICE_TITLES: dict[str, tuple[str, str]] = {
    "reference": ("Reference data", "基本资料"), "cn_quotes": ("Quotes", "行情"), "hk_us": ("Quotes", "行情"),
    "indices": ("Index data", "指数数据"), "funds": ("Fund data", "基金数据"), "statements": ("Financial data", "财务数据"),
    "corporate": ("Corporate actions", "公司公告与股东"), "microstructure": ("Trading data", "资金与交易"),
    "macro": ("Economic data", "宏观与利率汇率"),
}


def data_title(tool: str, service: str, lang: str) -> str:
    """The name of a data set as a site prints it ("Daily quotes", "日行情")."""
    en, zh = TITLES.get(tool) or SERVICE_TITLES.get(service, ("Market data", "市场数据"))
    return zh if lang == "zh" else en
