"""The live-answer rule: which frozen gold the site may show (site/liverule.py)."""

from __future__ import annotations

import datetime as dt

from livesearch_pipeline.core.models import GoldAnswer, MatchRule
from livesearch_pipeline.site import liverule

RULE = MatchRule(rule="approx", abs_tol=0.005, decimals=2, unit="CNY")
QID = "ls-00000000000000a1"


def gold(answer: str | None, day: int = 1, status: str = "ok") -> GoldAnswer:
    return GoldAnswer(qid=QID, date=dt.date(2026, 11, day), status=status, answer=answer,
                      value=float(answer) if answer is not None else None, unit="CNY", match=RULE,
                      error="boom" if status == "error" else None)


def reason(answer: str, *, latest: GoldAnswer | None, latest_class: str | None = "monthly",
           is_latest_day: bool = False) -> str | None:
    return liverule.hidden_reason(gold(answer), is_latest_day=is_latest_day, latest_class=latest_class,
                                  latest_gold=latest)


def test_every_gold_of_the_latest_day_is_hidden_whatever_its_class() -> None:
    for refresh_class in ("daily", "weekly", "static"):
        assert reason("10.00", latest=gold("10.00", 5), latest_class=refresh_class,
                      is_latest_day=True) == liverule.LATEST_DAY


def test_a_static_question_never_shows_its_gold() -> None:
    assert reason("10.00", latest=gold("11.00", 5), latest_class="static") == liverule.STATIC


def test_a_slow_question_is_hidden_until_its_answer_changes_then_shown() -> None:
    assert reason("10.00", latest=gold("10.00", 5)) == liverule.UNCHANGED
    # Within the rule's tolerance it would still score as the latest answer: hidden.
    assert reason("10.004", latest=gold("10.00", 5)) == liverule.UNCHANGED
    assert reason("10.00", latest=gold("10.25", 5)) is None


def test_withdrawn_on_the_latest_day_hides_and_retired_shows() -> None:
    assert reason("10.00", latest=gold(None, 5, status="empty")) == liverule.NOT_OK_ON_LATEST
    assert reason("10.00", latest=None) == liverule.NOT_OK_ON_LATEST
    assert reason("10.00", latest=None, latest_class=None) is None  # not served any more


def test_gold_without_an_answer_is_shown_as_its_status() -> None:
    empty = gold(None, status="empty")
    assert liverule.hidden_reason(empty, is_latest_day=True, latest_class="daily", latest_gold=None) is None


def test_counts_by_class() -> None:
    day1 = {QID: gold("10.00", 1)}
    day2 = {QID: gold("10.00", 2)}
    counts = liverule.count_by_class([(day1, {QID: liverule.UNCHANGED}), (day2, {QID: liverule.LATEST_DAY})],
                                     {QID: "monthly"})
    assert list(counts) == ["monthly"]
    c = counts["monthly"]
    assert (c.questions, c.answers, c.hidden, c.never_shown) == (1, 2, 2, 1)
