"""core.progress: a long step's progress in a handful of lines."""

from __future__ import annotations

import pytest

from livesearch_pipeline.core.progress import Progress, say


def test_a_line_at_each_quarter_and_at_the_end() -> None:
    lines: list[str] = []
    p = Progress(total=21, what="replay", report=lines.append, unit="days")
    for _ in range(21):
        p.advance()
    assert lines == ["replay: 6 of 21 days", "replay: 11 of 21 days", "replay: 16 of 21 days",
                     "replay: 21 of 21 days"]


def test_big_advances_say_one_line_and_small_totals_each_unit() -> None:
    lines: list[str] = []
    p = Progress(total=1000, what="pages", report=lines.append)
    p.advance(600, detail="60 entities")
    p.advance(400)
    assert lines == ["pages: 600 of 1,000 (60 entities)", "pages: 1,000 of 1,000"]
    lines.clear()
    p = Progress(total=2, what="shards", report=lines.append, steps=10)
    p.advance()
    p.advance()
    assert lines == ["shards: 1 of 2", "shards: 2 of 2"]


def test_nobody_listening_and_bad_settings() -> None:
    Progress(total=5, what="x", report=None).advance(5)
    say(None, "unheard")
    heard: list[str] = []
    say(heard.append, "heard")
    assert heard == ["heard"]
    with pytest.raises(ValueError, match="steps"):
        Progress(total=5, what="x", report=None, steps=0)
    with pytest.raises(ValueError, match="total"):
        Progress(total=-1, what="x", report=None)


def test_a_line_of_its_own_when_the_count_is_not_what_the_line_tells() -> None:
    lines: list[str] = []
    pages = 0
    p = Progress(total=4, what="pages", report=lines.append, steps=2, line=lambda: f"pages: {pages} so far")
    for _ in range(4):
        pages += 10
        p.advance()
    assert lines == ["pages: 20 so far", "pages: 40 so far"]
