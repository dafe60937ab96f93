"""Human titles of the embedded service's tools (MCP `Tool.title` and `annotations.title`).

A tool's name is Tushare's (`daily`, `fina_indicator`, `hk_hold`); its title is what a person
reads in an MCP host's tool picker. One reviewed line per tool; `test_tool_metadata.py` fails
when a tool of the catalog has none or a title names a tool that no longer exists. A tool
outside this table (a test's toy service, a new tool not yet reviewed) gets the opening phrase
of its description (`derived_title`).
"""

from __future__ import annotations

import re

TOOL_TITLES: dict[str, str] = {
    # cn_quotes
    "daily": "A-share daily bars",
    "weekly": "A-share weekly bars",
    "monthly": "A-share monthly bars",
    "adj_factor": "A-share adjustment factors",
    "daily_basic": "A-share daily valuation and share capital",
    "stk_limit": "A-share daily price limits",
    "suspend_d": "A-share suspensions and resumptions",
    "stk_mins": "A-share minute bars",
    "bak_daily": "A-share daily backup quotes",
    "pro_bar": "A-share adjusted bars (qfq/hfq)",
    "stk_factor": "A-share technical indicators",
    # hk_us
    "hk_daily": "Hong Kong daily bars",
    "hk_daily_adj": "Hong Kong daily bars with adjustment and valuation",
    "hk_adjfactor": "Hong Kong adjustment factors",
    "hk_mins": "Hong Kong minute bars",
    "us_daily": "US daily bars",
    "us_daily_adj": "US daily bars with adjustment and valuation",
    "us_adjfactor": "US adjustment factors",
    "us_mins": "US minute bars",
    "hk_income": "Hong Kong income statements",
    "hk_balancesheet": "Hong Kong balance sheets",
    "hk_cashflow": "Hong Kong cash flow statements",
    "hk_fina_indicator": "Hong Kong financial indicators",
    "us_income": "US income statements",
    "us_balancesheet": "US balance sheets",
    "us_cashflow": "US cash flow statements",
    "us_fina_indicator": "US financial indicators",
    # indices
    "index_daily": "Index daily levels",
    "index_weekly": "Index weekly levels",
    "index_monthly": "Index monthly levels",
    "index_weight": "Index constituent weights",
    "index_dailybasic": "Index daily valuation",
    "index_global": "Global index daily levels",
    "sw_daily": "Industry index daily levels",
    "index_member": "Industry index members",
    # funds
    "fund_nav": "Fund net asset values",
    "fund_daily": "ETF daily bars",
    "fund_adj": "Fund adjustment factors",
    "fund_share": "ETF units outstanding",
    "etf_share_size": "ETF units and fund size",
    "fund_div": "Fund distributions",
    "fund_manager": "Fund managers",
    "fund_portfolio": "Fund top holdings",
    # microstructure
    "moneyflow": "A-share money flow by order size",
    "moneyflow_hsgt": "Stock Connect daily net flows",
    "hsgt_top10": "Stock Connect top 10 traded stocks",
    "hk_hold": "Northbound Stock Connect holdings",
    "margin": "Exchange margin trading totals",
    "margin_detail": "Per-stock margin trading",
    "top_list": "Dragon-tiger list",
    "top_inst": "Dragon-tiger list seats",
    "block_trade": "A-share block trades",
    "limit_list": "A-shares closing at their daily limit",
    # reference
    "stock_basic": "A-share list",
    "trade_cal": "Exchange trading calendar",
    "hk_tradecal": "Hong Kong trading calendar",
    "us_tradecal": "US trading calendar",
    "stock_company": "A-share company profiles",
    "namechange": "A-share name history",
    "new_share": "A-share IPOs",
    "hk_basic": "Hong Kong listed companies",
    "us_basic": "US listed companies",
    "index_basic": "Index reference data",
    "fund_basic": "Fund reference data",
    "fund_company": "Fund management companies",
    "stk_managers": "A-share directors and executives",
    "hs_const": "Stock Connect constituents",
    "index_classify": "Industry classification",
    # statements
    "income": "A-share income statements",
    "balancesheet": "A-share balance sheets",
    "cashflow": "A-share cash flow statements",
    "fina_indicator": "A-share financial indicators",
    "forecast": "A-share earnings preannouncements",
    "express": "A-share flash earnings reports",
    "fina_mainbz": "A-share main business composition",
    "disclosure_date": "A-share report disclosure schedule",
    "fina_audit": "A-share audit opinions",
    # corporate
    "dividend": "A-share dividends and bonus shares",
    "top10_holders": "Top 10 shareholders",
    "top10_floatholders": "Top 10 float shareholders",
    "stk_holdernumber": "Number of shareholders",
    "stk_holdertrade": "Shareholder increases and decreases",
    "share_float": "Restricted share unlocks",
    "repurchase": "Share repurchases",
    "pledge_stat": "Share pledge statistics",
    "stk_rewards": "Director and executive pay",
    # macro
    "cn_cpi": "China consumer price index",
    "cn_ppi": "China producer price index",
    "cn_m": "China money supply",
    "sf_month": "China aggregate social financing",
    "cn_pmi": "China purchasing managers' index",
    "cn_gdp": "China GDP",
    "shibor": "SHIBOR interbank rates",
    "shibor_lpr": "China loan prime rates",
    "hibor": "HIBOR interbank rates",
    "us_tycr": "US Treasury yield curve",
    "us_trycr": "US Treasury real yield curve",
    "us_tbr": "US Treasury bill rates",
    "us_tltr": "US Treasury long-term rates",
    "us_trltr": "US Treasury real long-term rate",
    "fx_daily": "FX daily bars",
    "fx_obasic": "FX instrument reference",
    # utility
    "search": "Instrument search",
    "realtime_quote": "Real-time quote snapshot",
    "system_clock": "Service clock and last sessions",
    "entity_visibility": "Instrument web visibility",
}

_OPENING = re.compile(r"[;:(.]")


def derived_title(description: str) -> str:
    """The opening phrase of a description: up to the first `;`, `:`, `(` or `.`."""
    opening = _OPENING.split(description, maxsplit=1)[0].strip().rstrip(",")
    return opening or description.strip()


def tool_title(name: str, description: str) -> str:
    return TOOL_TITLES.get(name) or derived_title(description)
