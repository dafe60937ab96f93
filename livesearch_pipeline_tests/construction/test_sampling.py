"""Stages 1–3 on small inputs: relative windows, the probe's strict majority, coverage plans."""

from __future__ import annotations

import datetime as dt

import anyio
import pytest

from livesearch_pipeline.construction.models import ProbeRow
from livesearch_pipeline.construction.sampling import SERIES_VISIBILITY, plan_coverage, probe_tools, window_dates
from livesearch_pipeline.core.catalog import DateParamMeta, ToolMeta
from livesearch_pipeline.core.client import ToolCallError
from livesearch_pipeline.core.models import DateSpec
from livesearch_pipeline_tests.construction.builders import (
    YMD,
    bar_tool,
    catalog_of,
    entity,
    series_tool,
    utility_tool,
)
from livesearch_pipeline_tests.core.fakes import FakeToolClient

AS_OF = dt.date(2026, 11, 27)


def _tool(refresh_class: str, *date_params: DateParamMeta) -> ToolMeta:
    return ToolMeta(name="t", service="fake", description="d", asset_classes=["cn_equity"], role="data",
                    entity_param="ts_code", date_params=list(date_params), refresh_class=refresh_class)


# --------------------------------------------------------------------------- window_dates


def test_daily_start_end_tool_gets_a_session_window_on_its_calendar():
    dates = window_dates(bar_tool(), "XHKG", sessions=20)
    assert dates == {"start_date": DateSpec(sessions_back=19, calendar="XHKG", fmt=YMD),
                     "end_date": DateSpec(sessions_back=0, calendar="XHKG", fmt=YMD)}


def test_quarterly_start_end_tool_gets_a_look_back_in_days():
    tool = _tool("quarterly", DateParamMeta(name="start_date", fmt=YMD, role="start"),
                 DateParamMeta(name="end_date", fmt=YMD, role="end"))
    dates = window_dates(tool, "XSHG", sessions=20)
    assert dates == {"start_date": DateSpec(days_back=800, fmt=YMD), "end_date": DateSpec(days_back=0, fmt=YMD)}


def test_point_dated_daily_tool_gets_the_latest_session():
    tool = _tool("daily", DateParamMeta(name="trade_date", fmt=YMD, role="point"))
    assert window_dates(tool, "XNYS", sessions=None) == {
        "trade_date": DateSpec(sessions_back=0, calendar="XNYS", fmt=YMD)}


def test_point_dated_monthly_tool_gets_the_last_completed_month():
    assert window_dates(series_tool(), "XSHG", sessions=10) == {
        "month": DateSpec(period="month", periods_back=1, fmt="YYYYMM")}


@pytest.mark.parametrize(("refresh_class", "period"), [("quarterly", "quarter"), ("annual", "year"),
                                                        ("monthly", "month")])
def test_period_keyed_tool_gets_the_last_completed_period(refresh_class, period):
    tool = _tool(refresh_class, DateParamMeta(name="period", fmt=YMD, role="period"))
    assert window_dates(tool, "XSHG", sessions=None) == {
        "period": DateSpec(period=period, periods_back=1, fmt=YMD)}


def test_undated_tool_gets_no_dates():
    assert window_dates(_tool("static"), "XSHG", sessions=5) == {}


# --------------------------------------------------------------------------- probe


def _probe_with(returning: set[str], failing: set[str]) -> ProbeRow:
    codes = [f"60000{i}.SH" for i in range(7)]
    entities = {"cn_equity": [entity(code, i) for i, code in enumerate(codes)]}

    def bars(args):
        return {"items": [{"trade_date": args["end_date"], "close": 1.0}] if args["ts_code"] in returning else []}

    client = FakeToolClient({"bars": bars})
    for code in failing:
        client.script("bars", ToolCallError("bars", "boom"), when={"ts_code": code})
    catalog = catalog_of(bar_tool(), utility_tool())
    rows = anyio.run(lambda: probe_tools(client, catalog, entities, AS_OF, sample_size=7))
    assert [name for name, _ in client.calls] == ["bars"] * 7, "only data tools are probed, once per entity"
    assert all(args["end_date"] == "20261127" and args["limit"] == 1 for _, args in client.calls)
    (row,) = rows
    assert sorted(row.sample) == codes
    return row


def test_probe_four_of_seven_is_a_strict_majority():
    row = _probe_with(returning={"600000.SH", "600001.SH", "600002.SH", "600003.SH"}, failing={"600004.SH"})
    assert (row.sampled, row.returned, row.errors, row.usable) == (7, 4, 1, True)


def test_probe_three_of_seven_is_not_usable_and_errors_count_against_it():
    row = _probe_with(returning={"600000.SH", "600001.SH", "600002.SH"}, failing={"600003.SH"})
    assert (row.sampled, row.returned, row.errors, row.usable) == (7, 3, 1, False)


def test_probe_of_a_series_tool_calls_it_once_without_an_entity():
    client = FakeToolClient({"cpi": lambda args: {"items": [{"month": args["month"], "yoy": 0.2}]}})
    rows = anyio.run(lambda: probe_tools(client, catalog_of(series_tool()), {}, AS_OF))
    # periods_back=1: the month before the last completed one (October 2026 as of D); one record
    # is all the probe reads (whether the tool returns any).
    assert client.calls == [("cpi", {"month": "202609", "limit": 1})]
    assert [(r.tool, r.sampled, r.returned, r.usable, r.sample) for r in rows] == [("cpi", 1, 1, True, ["cpi"])]


# --------------------------------------------------------------------------- coverage


def _usable(tool: str, asset_class: str, usable: bool = True) -> ProbeRow:
    return ProbeRow(tool=tool, asset_class=asset_class, sampled=7, returned=7 if usable else 0, errors=0,
                    usable=usable, sample=[])


ENTITIES = {"cn_equity": [entity(f"{level}{i:02d}.SH", level) for level in (0, 3, 10) for i in range(6)]}


def test_coverage_draws_one_entity_per_level_and_records_skipped_levels():
    rows = plan_coverage([_usable("bars", "cn_equity")], catalog_of(bar_tool()), ENTITIES, seed=11)
    assert [r.visibility for r in rows] == list(range(11))
    covered = {r.visibility: r for r in rows if r.entity is not None}
    assert sorted(covered) == [0, 3, 10]
    for level, row in covered.items():
        assert row.entity.startswith(str(level)) and row.skipped is None
        assert row.entity_name == f"Name {row.entity}"
    skipped = [r for r in rows if r.entity is None]
    assert len(skipped) == 8
    assert all(r.skipped == f"no cn_equity entity at visibility {r.visibility}" for r in skipped)


def test_coverage_is_reproducible_for_a_seed_and_varies_across_seeds():
    probe, catalog = [_usable("bars", "cn_equity")], catalog_of(bar_tool())
    picks = {seed: [r.entity for r in plan_coverage(probe, catalog, ENTITIES, seed=seed)] for seed in range(8)}
    assert picks[3] == [r.entity for r in plan_coverage(probe, catalog, ENTITIES, seed=3)]
    assert len({tuple(p) for p in picks.values()}) > 1, "the seed must drive which entity a level gets"


def test_coverage_skips_unusable_tools_and_gives_series_tools_one_row():
    probe = [_usable("bars", "cn_equity", usable=False), _usable("cpi", "macro")]
    rows = plan_coverage(probe, catalog_of(bar_tool(), series_tool()), ENTITIES)
    assert [(r.tool, r.visibility, r.entity, r.skipped) for r in rows] == [("cpi", SERIES_VISIBILITY, None, None)]


def test_coverage_rejects_a_probe_row_for_an_unknown_tool():
    with pytest.raises(Exception, match="not in the catalog"):
        plan_coverage([_usable("ghost", "cn_equity")], catalog_of(bar_tool()), ENTITIES)


# --------------------------------------------------------------------------- tool restriction, undatable tools


def test_restrict_catalog_keeps_named_data_tools_and_every_non_data_tool():
    from livesearch_pipeline.construction.sampling import restrict_catalog

    catalog = catalog_of(bar_tool("bars"), bar_tool("other"), series_tool("cpi"), utility_tool())
    restricted = restrict_catalog(catalog, ["cpi"])
    assert [t.name for t in restricted.data_tools()] == ["cpi"]
    assert restricted.get("entity_visibility") is not None
    assert restrict_catalog(catalog, []) is catalog


def test_restrict_catalog_rejects_unknown_and_non_data_names():
    from livesearch_pipeline.construction.sampling import ConstructionError, restrict_catalog

    catalog = catalog_of(bar_tool("bars"), utility_tool())
    with pytest.raises(ConstructionError, match=r"does not have: \['nope'\]"):
        restrict_catalog(catalog, ["bars", "nope"])
    with pytest.raises(ConstructionError, match="never define a gold program.*entity_visibility.*utility"):
        restrict_catalog(catalog, ["entity_visibility"])


def test_weekly_tool_dated_by_a_single_day_is_recorded_unusable_without_calls():
    from livesearch_pipeline.construction.sampling import UNDATABLE_NOTE, stamped_on_single_days

    weekly = _tool("weekly", DateParamMeta(name="end_date", fmt=YMD, role="point"))
    daily_events = _tool("daily", DateParamMeta(name="ann_date", fmt=YMD, role="point"))
    assert stamped_on_single_days(weekly) and not stamped_on_single_days(daily_events)
    client = FakeToolClient({})
    rows = anyio.run(lambda: probe_tools(client, catalog_of(weekly), {"cn_equity": [entity("600000.SH", 3)]}, AS_OF))
    (row,) = rows
    assert (row.sampled, row.usable, row.note) == (0, False, UNDATABLE_NOTE)
    assert client.calls == []
