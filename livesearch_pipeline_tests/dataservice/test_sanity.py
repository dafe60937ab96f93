"""The market sanity check (issue 28): the synthetic market publishes no impossible record."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from livesearch_pipeline.core.catalog import FieldMeta
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.market import Market
from livesearch_pipeline.dataservice.market.fundamentals import is_financial
from livesearch_pipeline.dataservice.market.prices import Bars, aggregate
from livesearch_pipeline.dataservice.market.universe import BOARD_PREFIXES, _sh_main_board_number
from livesearch_pipeline.dataservice.market.sectors import plausible_range
from livesearch_pipeline.dataservice.sanity import check_market, check_valuations, main, out_of_bounds
from livesearch_pipeline.dataservice.server import DataService
from livesearch_pipeline.web.formatting import third_party_figure

DAY = dt.date(2026, 12, 1)  # a fixed clock: the day of make run's pool


@pytest.fixture(scope="module")
def service() -> DataService:
    return DataService(config=ServiceConfig(clock=DAY), market=Market())


def test_the_market_has_no_impossible_record(service: DataService) -> None:
    found = check_market(DAY, service=service)
    assert found == [], [str(f) for f in found[:5]]


def test_financial_companies_report_no_cost_of_sales_or_inventories(service: DataService) -> None:
    banks = [e for e in service.market.universe.of_class("cn_equity") if e.industry == "银行"]
    insurers = [e for e in service.market.universe.of_class("us_equity") if e.industry == "Insurance"]
    assert banks and insurers
    for code, tools in ((banks[0].code, ("income", "balancesheet", "fina_indicator")),
                        (insurers[0].code, ("us_income", "us_balancesheet", "us_fina_indicator"))):
        for tool in tools:
            rows = service.call(tool, {"ts_code": code})["items"]
            assert rows, f"{tool} {code} returned nothing"
            for row in rows:
                assert all(row.get(n) is None for n in ("oper_cost", "inventories", "grossprofit_margin")), (tool, row)
    # Their totals still add up: operating costs moved to business and admin expenses.
    row = service.call("income", {"ts_code": banks[0].code})["items"][0]
    assert row["total_cogs"] == pytest.approx(row["biz_tax_surchg"] + row["sell_exp"] + row["admin_exp"]
                                               + row["rd_exp"] + row["fin_exp"])
    # A non-financial company keeps its cost of sales.
    other = next(e for e in service.market.universe.of_class("cn_equity") if not is_financial(e.industry))
    assert service.call("income", {"ts_code": other.code})["items"][0]["oper_cost"] > 0


def test_codes_match_their_board_and_growth_boards_list_no_financials(service: DataService) -> None:
    rows = service.call("stock_basic", {})["items"]
    for row in rows:
        number, _, suffix = row["ts_code"].partition(".")
        assert number.startswith(BOARD_PREFIXES[(suffix, row["market"])]), row
        assert not (row["market"] in ("创业板", "科创板") and is_financial(row["industry"])), row
    assert {r["market"] for r in rows} == {"主板", "创业板", "科创板"}


def test_a_drawn_number_on_an_unused_shanghai_prefix_moves_to_a_free_allocated_one() -> None:
    taken = {602123, 603123}
    moved = _sh_main_board_number(602123, taken)
    assert f"{moved:06d}"[:3] in ("600", "601", "603", "605") and moved != 603123 and moved in taken
    assert _sh_main_board_number(601555, {601555}) == 601555


def test_hong_kong_board_lots_are_whole_numbers(service: DataService) -> None:
    lots = [row["trade_unit"] for row in service.call("hk_basic", {})["items"]]
    assert lots and all(lot > 0 and float(lot).is_integer() for lot in lots)


def _bars(o, h, lo, c) -> Bars:
    dates = [DAY - dt.timedelta(days=len(o) - 1 - i) for i in range(len(o))]
    arr = lambda x: np.asarray(x, dtype=float)  # noqa: E731
    return Bars("X", dates, arr(o), arr(h), arr(lo), arr(c), arr(o), arr([1] * len(o)), arr([1] * len(o)),
                arr([1] * len(o)), 2)


def test_out_of_bounds_names_the_first_bar_outside_its_own_range() -> None:
    assert out_of_bounds(_bars([10, 11], [10.5, 11.5], [9.5, 10.5], [10.2, 11.2])) is None
    found = out_of_bounds(_bars([10, 11], [10.5, 11.5], [9.5, 10.5], [10.2, 11.6]))
    assert found is not None and "1 bar(s)" in found and DAY.isoformat() in found
    assert out_of_bounds(_bars([10], [10.5], [10.1], [10.2])) is not None  # low above the open
    weekly = aggregate(_bars([10, 11, 12], [10.5, 11.5, 12.5], [9.5, 10.5, 11.5], [10.2, 11.2, 12.2]), "W")
    assert out_of_bounds(weekly) is None


def test_a_third_party_copy_keeps_a_bar_within_its_bounds_and_counts_whole() -> None:
    price = lambda name: FieldMeta(name=name, type="number", unit="CNY", description=name, role="measure")  # noqa: E731
    bar = {"open": 6700.0, "high": 6736.82, "low": 6650.0, "close": 6736.82}
    for salt in ("a", "b", "c:h3:1"):
        for side in (0.2, 0.8):
            copy = {k: third_party_figure(v, side, price(k), 7, salt) for k, v in bar.items()}
            assert copy["low"] <= min(copy["open"], copy["close"]) <= max(copy["open"], copy["close"]) <= copy["high"]
            assert copy != bar  # still a third party's figure: off, not equal
    lot = FieldMeta(name="vol", type="number", unit="shares", description="volume", role="measure")
    assert float(third_party_figure(48_700.0, 0.2, lot, 7, "a")).is_integer()


def test_the_command_prints_the_count_and_exits_0(capsys, monkeypatch) -> None:
    monkeypatch.setattr("livesearch_pipeline.dataservice.sanity.check_market", lambda day, seed: [])
    assert main(["--date", DAY.isoformat()]) == 0
    assert "0 impossible record(s) in the synthetic market as of 2026-12-01" in capsys.readouterr().out


def test_banks_trade_at_real_multiples_and_below_twice_book(service: DataService) -> None:
    banks = [e.code for e in service.market.universe.of_class("cn_equity") if e.industry == "银行"]
    rows = [r for r in service.call("daily_basic", {"trade_date": "20261201"})["items"] if r["ts_code"] in banks]
    assert len(rows) == len(banks) >= 3
    assert all(3 <= r["pe_ttm"] <= 20 and r["pb"] < 2 for r in rows if r["pe_ttm"] is not None), rows
    index = service.call("sw_daily", {"ts_code": "801010.SI", "trade_date": "20261201"})["items"][0]
    assert 3 <= index["pe_ttm"] <= 20 and index["pb"] < 2, index


def test_valuations_and_turnover_stay_in_their_sectors_documented_ranges(service: DataService) -> None:
    assert check_valuations(service, DAY) == []
    # The ranges are the documented ones: banks as analysts quote them, others around the sector band.
    assert plausible_range("银行") == plausible_range("Banks") and plausible_range("银行").pe == (3.0, 20.0)
    assert plausible_range("银行").pb[1] == 2.0
    software = plausible_range("软件服务")
    assert software.pe[0] < 30 < 65 < software.pe[1]


def test_the_valuation_check_finds_an_outlier_and_an_index_trading_its_float_away(service: DataService,
                                                                                 monkeypatch) -> None:
    real_call = service.call
    bank = next(e.code for e in service.market.universe.of_class("cn_equity") if e.industry == "银行")

    def call(tool, args, *rest, **kw):
        result = real_call(tool, args, *rest, **kw)
        if tool == "daily_basic":  # the bank at 603729.SH's P/E of issue 40
            result = {**result, "items": [{**r, "pe_ttm": 1517.2121} if r["ts_code"] == bank else r for r in result["items"]]}
        if tool == "index_dailybasic":  # a 25-stock index trading 8% of its float a day
            result = {**result, "items": [{**r, "turnover_rate_f": 8.09} for r in result["items"][:1]] + result["items"][1:]}
        return result

    monkeypatch.setattr(service, "call", call)
    found = check_valuations(service, DAY)
    assert [f.check for f in found] == ["valuation", "turnover"], [str(f) for f in found]
    assert bank in found[0].where and "1517.2121" in found[0].detail and "3.0-20.0" in found[0].detail
