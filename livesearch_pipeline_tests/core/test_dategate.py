"""Date gate (DESIGN §4.4): table-driven rejects and passes, English and Chinese."""

from __future__ import annotations

import pytest

from livesearch_pipeline.core.dategate import check_text, find_date_spans, fold_width

# (text, the span that must be reported)
REJECTED = [
    ("What was the close on 2026-10-27?", "2026-10-27"),
    ("Close as of 2026/10/27", "2026/10/27"),
    ("Close as of 2026.10.27", "2026.10.27"),
    ("Volume on 10/27/2026", "10/27/2026"),
    ("Volume on 27.10.2026", "27.10.2026"),
    ("Net flow on 27-10-26", "27-10-26"),
    ("The close on 27 Oct 2026", "27 Oct 2026"),
    ("The close on 27th of October", "27th of October"),
    ("What happened on October 27?", "October 27"),
    ("What happened on Oct. 27th?", "Oct. 27th"),
    ("The close on Oct 27, 2026", "Oct 27, 2026"),
    ("The dividend paid on May 5", "May 5"),
    ("Revenue in October 2026", "October 2026"),
    ("Revenue in Sept '26", "Sept '26"),
    ("What was the October CPI?", "October"),
    ("Net income in Q3 2026", "Q3 2026"),
    ("Net income in 2026Q3", "2026Q3"),
    ("Net income in 3Q26", "3Q26"),
    ("Net income in Q3'26", "Q3'26"),
    ("Revenue for H1 2026", "H1 2026"),
    ("Revenue for 2026H1", "2026H1"),
    ("Revenue for 1H26", "1H26"),
    ("Revenue for FY2025", "FY2025"),
    ("Revenue for FY25", "FY25"),
    ("Revenue for FY 2025", "FY 2025"),
    ("What was the Q3 revenue?", "Q3"),
    ("Revenue in the third quarter", "third quarter"),
    ("Revenue in the first half", "first half"),
    ("What was revenue in 2025?", "2025"),
    ("What was 2025's revenue?", "2025"),
    ("How did it trade in the 1990s?", "1990"),
    ("Revenue over 2024-2025", "2024"),
    ("The close on 20261027", "20261027"),
    ("The close on 10/27", "10/27"),
    ("The close on 3/15", "3/15"),
    ("The index closed at 2050", "2050"),
    ("２０２６年的营业收入是多少？", "２０２６年"),
    ("2026年10月27日的收盘价是多少？", "10月27日"),
    ("10月27日的收盘价是多少？", "10月27日"),
    ("2026年的营业收入", "2026年"),
    ("二〇二六年的营业收入", "二〇二六年"),
    ("二零二六年的营业收入", "二零二六年"),
    ("2026年第三季度的净利润", "第三季度"),
    ("2026年上半年的营业收入", "2026年"),
    ("第三季度的净利润是多少？", "第三季度"),
    ("三季报披露的净利润", "三季报"),
    ("十月二十七日的收盘价", "十月二十七日"),
    ("12月份的CPI同比", "12月"),
    ("一月的出口增速", "一月"),
    ("2026-10-27收盘价", "2026-10-27"),
    ("截至2026年末的总资产", "2026年"),
]

PASSED = [
    "What was the close on the most recent trading day?",
    "What was net income in the last completed quarter?",
    "Average close over the past 20 trading sessions",
    "Return year to date",
    "YTD return of the fund",
    "The index closed at 2045.32 points on the latest session",
    "Holder A owns 1,998 shares",
    "Holder A owns 2000 shares",
    "The fund holds 2025 lots",
    "The index is near the 2000 level",
    "Market cap of HK$2,025 million",
    "A price of $2025 per share",
    "What was the market capitalization?",
    "Did the stock decline during the latest session?",
    "The stock may rise",
    "Junior bonds outstanding",
    "Half of the float is locked up",
    "The ratio was 1/2",
    "Turnover of 3/4 of the float",
    "The 52-week high",
    "The close at 10:30 on the latest session",
    "The top 10 holders of 2020.HK",
    "Volume of 600519.SH on the latest trading day",
    "Change of 20.25% over the last 5 sessions",
    "Net income in the previous fiscal year",
    "The first trading day of the current month",
    "Price in the second half hour of the session",
    "最近一个交易日的收盘价是多少？",
    "上一个完整季度的净利润",
    "近20个交易日的平均收盘价",
    "本月的成交额",
    "上月的CPI同比",
    "3月期SHIBOR利率",
    "3个月SHIBOR利率",
    "1年期国债收益率",
    "5日均线",
    "20日涨跌幅",
    "上一季度的营业收入",
    "最近一季度的净利润",
    "近一月涨幅",
    "近一年最高价",
    "过去5年的分红总额",
    "前十大股东持股比例",
    "沪深300指数收于2000点",
    "总市值2025亿元",
    "成交量2026手",
    "年初至今的涨跌幅",
    "今年以来的累计收益",
    "去年的营业收入",
    "最近一期季报的每股收益",
]


def test_tables_are_large_enough_and_bilingual() -> None:
    assert len(REJECTED) >= 40 and len(PASSED) >= 40
    def has_cjk(s: str) -> bool:
        return any("\u4e00" <= ch <= "\u9fff" for ch in s)
    assert sum(has_cjk(t) for t, _ in REJECTED) >= 10
    assert sum(has_cjk(t) for t in PASSED) >= 10


@pytest.mark.parametrize(("text", "span"), REJECTED)
def test_absolute_dates_are_rejected_with_their_span(text: str, span: str) -> None:
    result = check_text(text)
    assert not result.passed
    assert span in [h.text for h in result.hits], result.hits
    for hit in result.hits:
        assert text[hit.start:hit.end] == hit.text
        assert hit.reason


@pytest.mark.parametrize("text", PASSED)
def test_relative_phrases_and_plain_numbers_pass(text: str) -> None:
    result = check_text(text)
    assert result.passed, result.hits
    assert result.hits == ()


def test_every_date_in_a_text_is_reported_once() -> None:
    hits = check_text("Between 2026-10-01 and October 27 in FY2026").hits
    assert [h.text for h in hits] == ["2026-10-01", "October 27", "FY2026"]
    reasons = [h.reason for h in hits]
    assert reasons == ["ISO date", "month name with a day", "fiscal year"]


def test_nested_spans_collapse_to_the_widest() -> None:
    # "2026" (bare year) and "2026-10-27" (ISO) overlap: only the ISO span is reported.
    hits = check_text("on 2026-10-27").hits
    assert [(h.start, h.end, h.reason) for h in hits] == [(3, 13, "ISO date")]


def test_offsets_index_the_original_text_with_full_width_characters() -> None:
    text = "截至２０２６－１０－２７的收盘价"
    (hit,) = check_text(text).hits
    assert hit.text == "２０２６－１０－２７"
    assert text[hit.start:hit.end] == hit.text


def test_fold_width_is_one_to_one() -> None:
    text = "１，２３４．５　元−3"
    folded = fold_width(text)
    assert folded == "1,234.5 元-3"
    assert len(folded) == len(text)


def test_bare_years_can_be_left_out_for_number_parsing() -> None:
    assert find_date_spans("closed at 2050 on 2026-10-27", include_bare_years=False)[0].text == "2026-10-27"
    assert [h.text for h in find_date_spans("closed at 2050", include_bare_years=False)] == []
    assert [h.text for h in find_date_spans("closed at 2050")] == ["2050"]
