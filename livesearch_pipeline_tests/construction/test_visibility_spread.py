"""The pool spread over visibility (issue 20): the per-tool cap keeps instrument questions even
over the levels 0..10, and market-wide series are their own band, not level 10."""

from __future__ import annotations

from collections import Counter

from livesearch_pipeline.construction.pool import PoolPolicy, pool_counts, select_pool
from livesearch_pipeline.core.pool import MARKET_BAND, visibility_band, visibility_label
from livesearch_pipeline_tests.construction.builders import question

LEVELS = range(11)


def _instrument_pool(tools: int = 6, signatures: int = 40) -> list:
    """Every signature has three questions on evenly spaced levels, the lowest first: the shape
    that made the old cap take one low level per signature (960 of 1,230 at 0-3)."""
    out = []
    for t in range(tools):
        for s in range(signatures):
            low = (s + t) % 4  # 0..3
            for k, level in enumerate((low, low + 3, low + 7)):
                out.append(question(f"{t}{s:03d}{k}0.SH", signature=f"sig-{t}-{s}", visibility=level, tool=f"tool{t}"))
    return out


def test_the_per_tool_cap_spreads_instrument_questions_over_every_level():
    questions = _instrument_pool()
    # A cap reached after about one question per signature, as in `make run`.
    selection = select_pool(questions, {}, PoolPolicy(max_per_signature=3, max_per_tool=45))
    levels = Counter(q.visibility for q in selection.questions)
    total = sum(levels.values())
    assert total == 6 * 45
    shares = {level: levels[level] / total for level in LEVELS}
    assert all(0.05 <= share <= 0.14 for share in shares.values()), shares
    # Still one question per signature before a second one of any.
    assert len({q.signature for q in selection.questions}) == 6 * 40


def test_taking_the_first_question_of_each_signature_would_not_spread():
    """The measurement the spread answers: the lowest picked level of each signature alone holds
    no question at 7..10."""
    questions = _instrument_pool()
    firsts = {}
    for q in sorted(questions, key=lambda q: q.visibility):
        firsts.setdefault(q.signature, q)
    assert max(q.visibility for q in firsts.values()) <= 3


def test_market_series_are_their_own_band_and_label():
    assert visibility_band(10, "macro") == MARKET_BAND and visibility_band(10, "rates_fx") == MARKET_BAND
    assert visibility_band(10, "cn_equity") == "high" and visibility_band(2, "fund") == "low"
    assert visibility_band(5) == "mid"  # without a class: the level's band, as before
    assert visibility_label(10, "market") == MARKET_BAND and visibility_label(7, "index") == "7"
    series = question("cpi", signature="sig-cpi", visibility=10).model_copy(update={"asset_class": "macro"})
    stock = question("600519.SH", signature="sig-s", visibility=10)
    assert pool_counts([series, stock])["visibility"] == {"10": 1, MARKET_BAND: 1}


def test_market_series_do_not_count_against_any_level():
    questions = _instrument_pool(tools=2, signatures=20)
    series = [question(f"s{i}", signature=f"sig-m{i}", visibility=10, tool="tool0").model_copy(
        update={"asset_class": "macro"}) for i in range(10)]
    selection = select_pool(questions + series, {}, PoolPolicy(max_per_signature=3, max_per_tool=45))
    instruments = [q for q in selection.questions if q.asset_class != "macro"]
    levels = Counter(q.visibility for q in instruments)
    assert len(selection.questions) - len(instruments) == 10  # every series kept, none at a level
    assert all(0.05 <= levels[level] / len(instruments) <= 0.14 for level in LEVELS), levels


def test_the_evaluator_reports_market_series_in_their_own_band_and_off_the_level_chart(tmp_path):
    from livesearch_pipeline.evaluation.evaluator import evaluate
    from livesearch_pipeline_tests.evaluation.eval_fixtures import CNY2, PCT2, case, qid, write_day

    cases = [case(1, 1234.56, "1234.56", CNY2, unit="CNY", visibility=10),
             case(2, 1.23, "1.23%", PCT2, unit="%", asset_class="macro", visibility=10)]
    summary = evaluate(*write_day(tmp_path, cases, {qid(1): "1234.56 CNY", qid(2): "1.23%"})).summary
    assert summary.by_visibility_band["high"].n == 1 and summary.by_visibility_band[MARKET_BAND].n == 1
    assert summary.by_tier_and_visibility["T1"]["10"].n == 1  # the stock only
