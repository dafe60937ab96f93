"""The one JSONL reader and writer (core/jsonl.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import BaseModel

from livesearch_pipeline.core.jsonl import (
    JsonlError,
    parse_jsonl,
    parse_jsonl_numbered,
    read_jsonl,
    render_jsonl,
    write_jsonl,
)


class Row(BaseModel):
    qid: str
    n: int


ROWS = [Row(qid="a", n=1), Row(qid="b", n=2), Row(qid="c", n=3)]


def test_written_rows_read_back_in_order(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "rows.jsonl"
    data = write_jsonl(path, ROWS)
    assert data == b'{"qid":"a","n":1}\n{"qid":"b","n":2}\n{"qid":"c","n":3}\n' == path.read_bytes()
    assert read_jsonl(path, Row, "row") == ROWS
    assert render_jsonl([]) == b"" and parse_jsonl("empty", b"", Row, "row") == []


def test_a_bad_line_is_named_with_the_file_and_its_line_number(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"qid":"a","n":1}\n{"qid":"b","n":"two"}\n{"qid":"c","n":3}\n')
    with pytest.raises(JsonlError, match=rf"^{path}: 1 malformed row line\(s\) — line 2: n: "):
        read_jsonl(path, Row, "row")


def test_every_bad_line_is_counted_and_the_first_five_named() -> None:
    data = b"".join(b"not json\n" if i % 2 else b'{"qid":"x","n":1}\n' for i in range(1, 15))
    with pytest.raises(JsonlError) as caught:
        parse_jsonl("where.jsonl", data, Row, "row")
    message = str(caught.value)
    assert message.startswith("where.jsonl: 7 malformed row line(s) — line 1: ")
    assert "line 9:" in message and "line 11:" not in message


@pytest.mark.parametrize("data, line", [
    (b'{"qid":"a","n":1}{"qid":"b","n":2}\n', 1),  # two objects on a line
    (b'{"qid":"a",\n"n":1}\n', 1),  # one object split over two lines
    (b'{"qid":"a","n":1}\n\n{"qid":"b","n":2}\n', 2),  # a blank line
    (b'[{"qid":"a","n":1}]\n', 1),  # not an object
])
def test_each_line_must_be_exactly_one_object(data: bytes, line: int) -> None:
    with pytest.raises(JsonlError, match=rf"line {line}: "):
        parse_jsonl("f.jsonl", data, Row, "row")


def test_blank_lines_may_be_skipped_and_numbers_stay_those_of_the_file() -> None:
    data = b'{"qid":"a","n":1}\n\n{"qid":"b","n":2}\n'
    assert [(n, r.qid) for n, r in parse_jsonl_numbered("f", data, Row, "row", skip_blank=True)] == [(1, "a"), (3, "b")]


def test_a_line_separator_inside_a_string_does_not_split_the_record() -> None:
    # pydantic writes U+2028 unescaped; str.splitlines() would cut the record in two.
    row = Row(qid="a\u2028b", n=1)
    assert parse_jsonl("f", render_jsonl([row]), Row, "row") == [row]


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(JsonlError, match=rf"row file {tmp_path / 'absent.jsonl'} does not exist"):
        read_jsonl(tmp_path / "absent.jsonl", Row, "row")


def test_a_failed_write_leaves_the_old_file_and_no_partial_one(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "rows.jsonl"
    old = write_jsonl(path, ROWS[:1])

    def rows_then_failure():
        yield ROWS[1]
        raise RuntimeError("the producer failed half-way")

    with pytest.raises(RuntimeError, match="half-way"):
        write_jsonl(path, rows_then_failure())
    assert path.read_bytes() == old

    def no_fsync(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", no_fsync)
    with pytest.raises(OSError, match="disk full"):
        write_jsonl(path, ROWS)
    monkeypatch.undo()
    assert path.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.jsonl"]  # no temporary file left behind
