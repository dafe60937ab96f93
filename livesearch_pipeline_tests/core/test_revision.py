"""Which version of a restated period a program reads (issue 39): `select.revision`, executed by the
extractor, validated against the catalog, and absent from the dump (and qid) while unset."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from pydantic import ValidationError

from livesearch_pipeline.core.catalog import Catalog, DateParamMeta, FieldMeta, ToolMeta
from livesearch_pipeline.core.extract import run_extractor
from livesearch_pipeline.core.models import Program
from livesearch_pipeline.core.program import ProgramError, validate_program
from livesearch_pipeline.core.qid import canonical_json, compute_qid

AS_OF = dt.date(2026, 11, 27)
YMD = "%Y%m%d"
PCT = {"kind": "percent", "decimals": 2}
WINDOW = {"start_date": {"days_back": 800}, "end_date": {"days_back": 0}}


def _tool(name: str, fields: list[tuple[str, str]]) -> ToolMeta:
    revised = any(n == "update_flag" for n, _ in fields)
    return ToolMeta(revision_field="update_flag" if revised else None,
        name=name, service="fake", description=name, asset_classes=["cn_equity"], role="data", entity_param="ts_code",
        date_params=[DateParamMeta(name="start_date", fmt=YMD, role="start"),
                     DateParamMeta(name="end_date", fmt=YMD, role="end")],
        time_key="end_date", time_key_fmt=YMD, refresh_class="quarterly", calendar="XSHG",
        fields=[FieldMeta(name=n, type=t, description=n) for n, t in fields],
    )


HEAD = [("ts_code", "code"), ("end_date", "date"), ("ann_date", "date"), ("revenue", "number")]
CATALOG = Catalog(service="fake", tools=[_tool("income", [*HEAD, ("update_flag", "text")]),
                                         _tool("express", HEAD)])


def rec(end: str, ann: str, revenue: float, flag: str) -> dict:
    return {"ts_code": "A", "end_date": end, "ann_date": ann, "revenue": revenue, "update_flag": flag}


# Q3 2026 restated Q3 2025 (first reported at 300, restated to 320 with the later report), newest first.
RESTATED = {"items": [
    rec("20260930", "20261030", 352.0, "0"),
    rec("20260630", "20260828", 200.0, "0"),
    rec("20251231", "20260320", 400.0, "0"),
    rec("20250930", "20261030", 320.0, "1"),
    rec("20250930", "20251030", 300.0, "0"),
    rec("20250630", "20250828", 190.0, "0"),
]}
# The same company on the day before the Q3 2026 report: neither it nor the restatement is out yet.
BEFORE = {"items": [r for r in RESTATED["items"] if r["ann_date"] <= "20261029"]}


def latest(field: str, **select) -> dict:
    return {"call": "c1", "select": {"mode": "latest", "key": "end_date", **select}, "field": field}


def growth(revision: str | None = None) -> Program:
    chosen = {"revision": revision} if revision else {}
    return Program.model_validate({
        "calls": [{"id": "c1", "tool": "income", "args": {"ts_code": "A"}, "dates": WINDOW}],
        "extract": {**latest("revenue", **chosen), "format": PCT,
                    "combine": {"op": "pct_difference", "other": latest("revenue", years_back=1, **chosen)}}})


def test_unset_revision_reads_the_restated_comparative():
    outcome = run_extractor(growth().extract, {"c1": RESTATED}, AS_OF)
    assert (outcome.status, outcome.answer) == ("ok", "10.00%")  # 352 against the restated 320
    assert run_extractor(growth("latest").extract, {"c1": RESTATED}, AS_OF).answer == "10.00%"


def test_revision_first_reads_the_figures_as_first_reported():
    outcome = run_extractor(growth("first").extract, {"c1": RESTATED}, AS_OF)
    assert (outcome.status, outcome.answer) == ("ok", "17.33%")  # 352 against the first-reported 300


def test_a_restatement_counts_only_from_its_announcement():
    program = Program.model_validate({
        "calls": [{"id": "c1", "tool": "income", "args": {"ts_code": "A"}, "dates": WINDOW}],
        "extract": {**latest("revenue", anchor={"days_back": 390}), "format": {"kind": "number", "decimals": 0}}})
    # Before the restating report, the latest version of Q3 2025 is the first-reported one.
    assert run_extractor(program.extract, {"c1": BEFORE}, dt.date(2026, 10, 29)).value == 300.0
    assert run_extractor(program.extract, {"c1": RESTATED}, dt.date(2026, 10, 30)).value == 320.0


def test_a_window_never_mixes_two_versions_of_a_period():
    total = Program.model_validate({
        "calls": [{"id": "c1", "tool": "income", "args": {"ts_code": "A"}, "dates": WINDOW}],
        "extract": {"call": "c1", "select": {"mode": "all", "key": "end_date"}, "field": "revenue", "aggregate": "count",
                    "format": {"kind": "integer"}}})
    assert run_extractor(total.extract, {"c1": RESTATED}, AS_OF).value == 5  # six records, five periods
    first = total.model_copy(update={"extract": total.extract.model_copy(
        update={"select": total.extract.select.model_copy(update={"revision": "first"})})})
    assert run_extractor(first.extract, {"c1": RESTATED}, AS_OF).value == 5


def test_an_unset_revision_keeps_a_program_s_bytes_and_qid():
    unset, latest_ = growth(), growth("latest")
    assert "revision" not in canonical_json(unset.model_dump())
    assert json.loads(canonical_json(latest_.model_dump()))["extract"]["select"]["revision"] == "latest"
    qid = compute_qid(unset, "A")
    assert qid == compute_qid(Program.model_validate(json.loads(canonical_json(unset.model_dump()))), "A")
    assert qid != compute_qid(latest_, "A") != compute_qid(growth("first"), "A")


def test_a_revision_is_checked_against_the_catalog():
    validate_program(growth("first"), CATALOG)
    one_version = Program.model_validate({
        "calls": [{"id": "c1", "tool": "express", "args": {"ts_code": "A"}, "dates": WINDOW}],
        "extract": {**latest("revenue", revision="first"), "format": {"kind": "number", "decimals": 0}}})
    with pytest.raises(ProgramError, match="publishes one version of each record"):
        validate_program(one_version, CATALOG)
    with pytest.raises(ValidationError):
        Program.model_validate({"calls": [{"id": "c1", "tool": "income"}],
                                "extract": {**latest("revenue", revision="restated"), "format": PCT}})
