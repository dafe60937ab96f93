"""Market sanity check (issue 28): the impossible records of the synthetic market on a day.

    python -m livesearch_pipeline.dataservice.sanity [--date YYYY-MM-DD] [--seed N] [--limit N]

Reads the embedded service at a day's clock, through its tools where a tool states the fact
(statements, reference lists) and through the price model for bars, and lists every record no
real market could publish:

- statements: a bank, broker or insurer (A-share 银行/证券/保险, HK 金融, US Banks/Insurance) that
  reports inventories, cost of sales or a gross margin;
- boards: an A-share code outside its board's prefixes (Shanghai main board 600/601/603/605, STAR
  688, Shenzhen main board 000-003, ChiNext 300/301), or a financial company on ChiNext or STAR;
- Hong Kong board lots that are not whole, positive numbers of shares;
- bars outside their own bounds (low <= open, close <= high, low > 0), daily and the weekly and
  monthly bars aggregated from them, for every instrument with bars;
- names (issue 40): an equity whose short name differs between `search`, its basic tool
  (`stock_basic`, `hk_basic`, `us_basic`'s English name) and `namechange` (the name in effect), or
  whose former names in `search` are not exactly the earlier names `namechange` records;
- valuations and sizes (issue 40) outside their sector's documented range
  (market/sectors.py `plausible_range`, docs/dataservice.md): the trailing P/E of a profitable
  company and the P/B of every company on the day's session (A-shares from `daily_basic`, Hong
  Kong and US companies from `hk_daily_adj`/`us_daily_adj`, in their reporting currency), the
  same of each industry index (`sw_daily`), a stock trading more than MAX_STOCK_TURNOVER of its
  free float in a day, an index trading outside INDEX_TURNOVER of its constituents' free float.

Noise of the offline web (a third-party feed's copy) is checked where it is made
(web/formatting.third_party_figure) by the web tests. `check_market` returns the findings; the
command prints them and exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import datetime as dt
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.market import DEFAULT_SEED
from livesearch_pipeline.dataservice.market.fundamentals import NOT_REPORTED_BY_FINANCIALS, is_financial
from livesearch_pipeline.core.calendars import session_on_or_before
from livesearch_pipeline.dataservice.market.prices import Bars
from livesearch_pipeline.dataservice.market.sectors import plausible_range
from livesearch_pipeline.dataservice.market.universe import BOARD_PREFIXES, GROWTH_BOARDS
from livesearch_pipeline.dataservice.server import DataService

STATEMENT_TOOLS = {"cn_equity": ("income", "balancesheet", "fina_indicator"),
                   "hk_equity": ("hk_income", "hk_balancesheet", "hk_fina_indicator"),
                   "us_equity": ("us_income", "us_balancesheet", "us_fina_indicator")}
BAR_CLASSES = ("cn_equity", "hk_equity", "us_equity", "index", "fund")
BASIC_TOOLS = {"cn_equity": "stock_basic", "hk_equity": "hk_basic", "us_equity": "us_basic"}
VALUATION_TOOLS = {"cn_equity": ("daily_basic", "XSHG"), "hk_equity": ("hk_daily_adj", "XHKG"),
                   "us_equity": ("us_daily_adj", "XNYS")}
MAX_STOCK_TURNOVER = 40.0  # percent of the free float in one session
INDEX_TURNOVER = (0.05, 5.0)  # percent of the constituents' free float an index trades in a session


@dataclass(frozen=True)
class Impossible:
    """One record no real market could publish."""

    check: str  # statements | board | board_lot | bars | names | valuation | turnover
    where: str  # the instrument, and the tool or bar series
    detail: str

    def __str__(self) -> str:
        return f"{self.check}: {self.where}: {self.detail}"


def check_market(day: dt.date, seed: int = DEFAULT_SEED, service: DataService | None = None) -> list[Impossible]:
    """Every impossible record of the market as of `day` (empty when the market is sane)."""
    service = service or DataService(config=ServiceConfig(seed=seed, clock=day))
    return [*_boards(service), *_board_lots(service), *_statements(service), *_bars(service, day),
            *check_names(service), *check_valuations(service, day)]


def _boards(service: DataService) -> Iterable[Impossible]:
    for e in service.market.universe.of_class("cn_equity"):
        number, _, suffix = e.code.partition(".")
        prefixes = BOARD_PREFIXES.get((suffix, e.market))
        if prefixes is None:
            yield Impossible("board", e.code, f"board {e.market!r} is not a board of the {suffix} exchange")
        elif not number.startswith(prefixes):
            yield Impossible("board", e.code, f"code outside the {e.market} prefixes {'/'.join(prefixes)}")
        if e.market in GROWTH_BOARDS and is_financial(e.industry):
            yield Impossible("board", e.code, f"a {e.industry} company listed on {e.market}")


def _board_lots(service: DataService) -> Iterable[Impossible]:
    for row in service.call("hk_basic", {})["items"]:
        lot = row.get("trade_unit")
        if not isinstance(lot, (int, float)) or lot <= 0 or float(lot) != int(lot):
            yield Impossible("board_lot", f"{row['ts_code']} hk_basic", f"board lot {lot!r} is not a whole number of shares")


def _statements(service: DataService) -> Iterable[Impossible]:
    for asset_class, tools in STATEMENT_TOOLS.items():
        for e in service.market.universe.of_class(asset_class):
            if not is_financial(e.industry):
                continue
            for tool in tools:
                for row in service.call(tool, {"ts_code": e.code})["items"]:
                    reported = [n for n in NOT_REPORTED_BY_FINANCIALS if row.get(n) not in (None, 0, 0.0)]
                    if reported:
                        yield Impossible("statements", f"{e.code} {tool} {row.get('end_date')}",
                                         f"a {e.industry} company reports {', '.join(reported)}")


def _bars(service: DataService, day: dt.date) -> Iterable[Impossible]:
    prices = service.market.prices
    for asset_class in BAR_CLASSES:
        for e in service.market.universe.of_class(asset_class):
            try:
                daily = prices.daily(e.code)
            except LookupError:
                continue  # an instrument without exchange bars (an open-end fund: NAVs only)
            for label, bars in (("daily", daily), ("weekly", prices.weekly(e.code)), ("monthly", prices.monthly(e.code))):
                found = out_of_bounds(bars, day)
                if found:
                    yield Impossible("bars", f"{e.code} {label}", found)


def check_names(service: DataService) -> list[Impossible]:
    """Every listed equity's name as `search`, its basic tool and `namechange` give it at the
    service's clock: one name, and former names exactly where `namechange` records them."""
    found: list[Impossible] = []
    for asset_class, tool in BASIC_TOOLS.items():
        for row in service.call(tool, {})["items"]:
            code = row["ts_code"]
            hits = [r for r in service.call("search", {"keyword": code})["items"] if r["ts_code"] == code]
            if len(hits) != 1:
                found.append(Impossible("names", f"{code} search", f"{len(hits)} results for its own code"))
                continue
            hit = hits[0]
            basic_name, search_name = ((row["enname"], hit["name_en"]) if asset_class == "us_equity"
                                       else (row["name"], hit["name"]))
            if basic_name != search_name:
                found.append(Impossible("names", code, f"{tool} says {basic_name!r}, search {search_name!r}"))
            former = [n for n in (hit.get("former_names") or "").split(",") if n]
            recorded: list[str] = []
            company = code if asset_class == "cn_equity" else row.get("a_code")  # an H-share: its A-share's
            if company:
                history = service.call("namechange", {"ts_code": company})["items"]
                current = [r["name"] for r in history if r["end_date"] is None]
                recorded = [r["name"] for r in history if r["end_date"] is not None]
                if current != [row["name"]]:
                    found.append(Impossible("names", code, f"namechange's current name {current} differs from {tool}'s {row['name']!r}"))
            if former != recorded:
                found.append(Impossible("names", code, f"search's former names {former} are not namechange's {recorded}"))
    return found


def check_valuations(service: DataService, day: dt.date) -> list[Impossible]:
    """Valuations and turnover outside their sector's documented range (module doc)."""
    found: list[Impossible] = []
    universe = service.market.universe
    for asset_class, (tool, calendar) in VALUATION_TOOLS.items():
        session = session_on_or_before(calendar, day).strftime("%Y%m%d")
        for row in service.call(tool, {"trade_date": session})["items"]:
            # An H-share is valued as its company, an A-share of its industry.
            industry = universe.get(service.market.fundamentals.company(row["ts_code"])).industry
            found.extend(_out_of_range(f"{row['ts_code']} {tool} {session}", industry, row.get("pe_ttm"), row.get("pb")))
            turnover = row.get("turnover_rate_f")
            if turnover is not None and turnover > MAX_STOCK_TURNOVER:
                found.append(Impossible("turnover", f"{row['ts_code']} {tool} {session}",
                                        f"traded {turnover}% of its free float (at most {MAX_STOCK_TURNOVER}%)"))
    session = session_on_or_before("XSHG", day).strftime("%Y%m%d")
    for row in service.call("sw_daily", {"trade_date": session})["items"]:
        industry = row["name"].removesuffix("行业指数")
        found.extend(_out_of_range(f"{row['ts_code']} sw_daily {session}", industry, row.get("pe_ttm"), row.get("pb")))
    low, high = INDEX_TURNOVER
    for row in service.call("index_dailybasic", {"trade_date": session})["items"]:
        turnover = row.get("turnover_rate_f")
        if turnover is not None and not low <= turnover <= high:
            found.append(Impossible("turnover", f"{row['ts_code']} index_dailybasic {session}",
                                    f"traded {turnover}% of its constituents' free float (expected {low}-{high}%)"))
    return found


def _out_of_range(where: str, industry: str, pe: float | None, pb: float | None) -> list[Impossible]:
    limits = plausible_range(industry)
    found = []
    if pe is not None and not limits.pe[0] <= pe <= limits.pe[1]:
        found.append(Impossible("valuation", where, f"a {industry} company at a trailing P/E of {pe} "
                                                    f"(profitable {industry}: {limits.pe[0]}-{limits.pe[1]})"))
    if pb is not None and not limits.pb[0] <= pb <= limits.pb[1]:
        found.append(Impossible("valuation", where, f"a {industry} company at a P/B of {pb} ({industry}: {limits.pb[0]}-{limits.pb[1]})"))
    return found


def out_of_bounds(bars: Bars, day: dt.date | None = None) -> str | None:
    """The first bar (up to `day`) outside its own bounds, described; None when all are within."""
    _, end = bars.span(None, day)
    if end == 0:
        return None
    o, h, lo, c = (np.asarray(x[:end], dtype=float) for x in (bars.open, bars.high, bars.low, bars.close))
    bad = (lo > np.minimum(o, c) + 1e-9) | (np.maximum(o, c) > h + 1e-9) | (lo <= 0)
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    return (f"{int(bad.sum())} bar(s) out of bounds, first {bars.dates[i].isoformat()}: open {o[i]}, high {h[i]}, "
            f"low {lo[i]}, close {c[i]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="List the impossible records of the synthetic market on a day.")
    parser.add_argument("--date", type=dt.date.fromisoformat, required=True, help="the day (its point-in-time clock)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    found = check_market(args.date, args.seed)
    for item in found:
        print(item)
    print(f"{len(found)} impossible record(s) in the synthetic market as of {args.date.isoformat()}")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
