"""`history_table` prints each figure of a plain site column by column (`_plain_figure`): the same
text, cell for cell, as `_figure` gives it, whatever the value (floats of any precision, Hong Kong
prices at their tick, whole numbers, flags, text, missing values) and the site's rounding."""

from __future__ import annotations

import random

import numpy as np

from livesearch_pipeline.core.catalog import FieldMeta, ToolMeta
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.market import DEFAULT_SEED, shared_market
from livesearch_pipeline.dataservice.server import DataService
from livesearch_pipeline.web.formatting import Look, _figure, _shown_fields, history_table
from livesearch_pipeline.web.sites import EXCHANGE, EXCHANGE_EN, NEWS_SITES, PORTALS, STATS
from livesearch_pipeline_tests.web.web_fixtures import CLOCK


def _metas() -> dict[str, ToolMeta]:
    service = DataService(config=ServiceConfig(clock=CLOCK), market=shared_market(DEFAULT_SEED))
    return {spec.name: spec.meta for spec in service.specs}


def _values(rng: random.Random) -> list:
    floats = [rng.uniform(-1e6, 1e6), rng.uniform(0, 1), round(rng.uniform(0, 100), rng.randint(0, 6)),
              rng.uniform(0, 0.5), 0.0, -0.0, 1e-7 * rng.random(), 1e17 * rng.random(), 0.49, 0.5, 12.0]
    return [*floats, rng.randint(-10**9, 10**9), 0, True, np.float64(rng.uniform(0, 50)), np.int64(7), "12.5", None]


def test_plain_sites_print_history_tables_as_figure_does() -> None:
    metas = _metas()
    rng = random.Random(20260101)
    sites = [EXCHANGE, EXCHANGE_EN, STATS, *NEWS_SITES, *PORTALS]
    checked = 0
    for name in ("hk_daily", "daily", "fund_nav", "index_daily", "us_daily", "margin"):
        meta = metas[name]
        fields = [f for f in meta.fields if f.type in ("number", "integer")]
        assert fields, name
        records = [{meta.time_key: f"202611{day:02d}", **{f.name: rng.choice(_values(rng)) for f in fields}}
                   for day in range(1, 29)]
        for site in sites:
            look = Look(site, None)
            table = history_table(meta, [[r] for r in records], look, DEFAULT_SEED, "t")
            # The figure columns come last (after the date and any series key).
            shown = [f for f in _shown_fields(meta) if f.type in ("number", "integer") and f.name not in meta.series_keys]
            assert len(table.header) > len(shown) >= 1
            for row, record in zip(table.rows, records, strict=True):
                expected = [_figure(look, f, record.get(f.name), DEFAULT_SEED, "t", meta)[0] for f in shown]
                assert list(row[len(row) - len(expected):]) == expected, (name, site.key)
                checked += 1
    assert checked > 500


def test_a_hong_kong_price_below_half_a_dollar_keeps_three_decimals() -> None:
    meta = _metas()["hk_daily"]
    assert any(isinstance(f, FieldMeta) and f.name == "close" and f.unit == "HKD" for f in meta.fields)
    table = history_table(meta, [[{meta.time_key: "20261127", "close": 0.1234}], [{meta.time_key: "20261126",
                                                                                   "close": 12.3456}]],
                          Look(EXCHANGE_EN, None), DEFAULT_SEED, "t")
    column = [h.split(" (")[0] for h in table.header].index("Close")
    assert [row[column] for row in table.rows] == ["0.123", "12.35"]
