"""The site build (site/build.py) on synthetic frozen days written by the real writers."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from urllib.parse import urldefrag, urlsplit

import pyarrow.parquet as pq
import pytest
import yaml

from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline.site.build import SiteBuildError, build_site, site_dir
from livesearch_pipeline.site.inputs import SiteInputError
from livesearch_pipeline_tests.site.conftest import DAYS, N_QUESTIONS

LATEST = DAYS[-1]
HREF = re.compile(r'(?:href|src)="([^"]+)"')


def _served(paths: DataPaths, day: dt.date) -> dict[str, dict]:
    lines = paths.served_file(day).read_text(encoding="utf-8").splitlines()
    return {q["qid"]: q for q in map(json.loads, lines)}


def _all_text(folder: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in sorted(folder.rglob("*")) if p.is_file()
                     and p.suffix != ".parquet")


def test_the_site_has_every_page_and_every_link_resolves_locally(data_paths: DataPaths) -> None:
    built = build_site(data_paths, LATEST)
    out = site_dir(data_paths)
    assert built.latest == LATEST and built.days == len(DAYS) and built.questions == N_QUESTIONS
    for page in ("index.html", "history.html", "methodology.html", "days/index.html", "downloads/index.html",
                 "downloads/README.md", "style.css", *(f"days/{d}.html" for d in DAYS),
                 *(f"agents/{a}.html" for a in ("oracle", "reader", "stale"))):
        assert (out / page).is_file(), page
    assert len(list((out / "questions").glob("ls-*.html"))) == N_QUESTIONS
    for html in out.rglob("*.html"):
        for link in HREF.findall(html.read_text(encoding="utf-8")):
            if link == "data:,":
                continue  # the empty favicon: no request at all
            assert not urlsplit(link).scheme and not link.startswith("//"), f"{html}: external link {link}"
            target = (html.parent / urldefrag(link).url).resolve()
            assert target.is_file(), f"{html.relative_to(out)} links to missing {link}"
    board = (out / "index.html").read_text(encoding="utf-8")
    manifest = SnapshotStore(data_paths.gold).verify(LATEST)
    assert manifest.sha256 in board and 'id="stale-gold"' in board
    history = (out / "history.html").read_text(encoding="utf-8")
    assert "<svg" in history and "pool pool-synthetic2" in history  # the pool change is marked


def test_no_live_gold_is_published(data_paths: DataPaths) -> None:
    """A static question's gold, and every gold of the latest day, appear nowhere in the site."""
    build_site(data_paths, LATEST)
    out = site_dir(data_paths)
    text = _all_text(out)
    store = SnapshotStore(data_paths.gold)
    answers = {d: {a.qid: a for a in store.read(d)} for d in DAYS}
    served = _served(data_paths, LATEST)
    every_answer = [a.answer for day in answers.values() for a in day.values()]
    static = [q for q, s in served.items() if s["refresh_class"] == "static"]
    checked = 0
    for qid in static:
        value = answers[LATEST][qid].answer
        if every_answer.count(value) != len(DAYS):  # another question shares the figure: not a clean probe
            continue
        assert value not in text, f"the static gold {value} of {qid} is in the site"
        checked += 1
    assert checked, "no static question with a unique answer to probe"
    # The latest day's gold is withheld in its download, its verdict reasons too; trajectories skip those qids.
    gold_rows = [json.loads(line) for line in (out / f"downloads/{LATEST}/gold.jsonl").read_text().splitlines()]
    assert gold_rows and all(not r["shown"] and r["answer"] is None and r["observed_period"] is None for r in gold_rows)
    verdicts = [json.loads(line) for line in (out / f"downloads/{LATEST}/verdicts.jsonl").read_text().splitlines()]
    assert verdicts and all(v["reason"] is None for v in verdicts)
    assert (out / f"downloads/{LATEST}/trajectories/oracle.jsonl").read_bytes() == b""
    # A daily question's earlier gold, which has moved since, is shown: the test can fail.
    daily = next(q for q, s in served.items() if s["refresh_class"] == "daily"
                 and answers[DAYS[0]][q].answer != answers[LATEST][q].answer)
    page = (out / f"questions/{daily}.html").read_text(encoding="utf-8")
    assert f"<b>{answers[DAYS[0]][daily].answer}</b>" in page
    assert f"<b>{answers[LATEST][daily].answer}</b>" not in page
    methodology = (out / "methodology.html").read_text(encoding="utf-8")
    assert 'id="hidden-by-class"' in methodology and "<td>static</td>" in methodology


def test_downloads_read_as_parquet_and_the_card_names_them(data_paths: DataPaths) -> None:
    build_site(data_paths, LATEST)
    out = site_dir(data_paths) / "downloads"
    first = pq.read_table(out / f"{DAYS[0]}/gold.parquet")
    assert first.num_rows == N_QUESTIONS and str(first.schema.field("date").type) == "date32[day]"
    shown = first.filter(first["shown"]).to_pylist()
    assert shown and all(r["answer"] for r in shown)
    card = (out / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(card.split("---")[1])
    for config in header["configs"]:
        pattern = config["data_files"][0]["path"]
        assert len(list(out.glob(pattern))) == len(DAYS), pattern


def test_a_second_build_skips_unchanged_days_and_a_new_day_rebuilds_what_it_reveals(data_paths: DataPaths,
                                                                                    tmp_path: Path) -> None:
    # The newest day is not frozen yet: its gold and served file arrive after the first builds.
    store = SnapshotStore(data_paths.gold)
    held = [store.path_for(LATEST), store.manifest_path_for(LATEST), data_paths.served_file(LATEST)]
    for path in held:
        path.rename(tmp_path / path.name)
    earlier = build_site(data_paths, DAYS[-2])
    assert earlier.latest == DAYS[-2] and earlier.days_parsed == len(DAYS) - 1
    again = build_site(data_paths, DAYS[-2])
    assert again.written == 0 and again.days_parsed == 0 and again.skipped > N_QUESTIONS
    for path in held:
        (tmp_path / path.name).rename(path)
    later = build_site(data_paths, LATEST)
    assert later.days_parsed == 1 and later.days_cached == len(DAYS) - 1
    # The day before the new latest day now shows its moved gold: its page was rebuilt.
    assert later.written > 0
    out = site_dir(data_paths)
    assert f"days/{LATEST}.html" in {str(p.relative_to(out)) for p in out.rglob("*.html")}


def test_a_changed_day_is_read_again(data_paths: DataPaths) -> None:
    build_site(data_paths, LATEST)
    board = data_paths.runs / DAYS[1].isoformat() / "leaderboard" / "leaderboard.json"
    data = json.loads(board.read_text())
    data["notes"] = ["a note added after the first build"]
    board.write_text(json.dumps(data))
    rebuilt = build_site(data_paths, LATEST)
    assert rebuilt.days_parsed == 1
    assert "a note added" not in (site_dir(data_paths) / "index.html").read_text()  # the board is of LATEST


def test_a_broken_leaderboard_is_named(data_paths: DataPaths) -> None:
    board = data_paths.runs / LATEST.isoformat() / "leaderboard" / "leaderboard.json"
    board.write_text("{not json")
    with pytest.raises(SiteInputError, match=re.escape(str(board))):
        build_site(data_paths, LATEST)


def test_no_frozen_day_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SiteBuildError, match="no frozen day on or before 2026-11-05"):
        build_site(DataPaths(tmp_path), LATEST)


def test_worker_processes_build_the_same_site(data_paths: DataPaths, tmp_path: Path, monkeypatch) -> None:
    """Parsing, judging and exporting over two worker processes gives the bytes of one process."""
    from livesearch_pipeline.site import build as site_build

    build_site(data_paths, LATEST, tmp_path / "one", cache=tmp_path / "cache-one", workers=1)
    monkeypatch.setattr(site_build, "PARALLEL_DAYS", 1)
    monkeypatch.setattr(site_build, "PARALLEL_RULE_ANSWERS", 1)
    build_site(data_paths, LATEST, tmp_path / "two", cache=tmp_path / "cache-two", workers=2)
    one = {p.relative_to(tmp_path / "one"): p.read_bytes() for p in (tmp_path / "one").rglob("*") if p.is_file()}
    two = {p.relative_to(tmp_path / "two"): p.read_bytes() for p in (tmp_path / "two").rglob("*") if p.is_file()}
    assert one.keys() == two.keys() and len(one) > N_QUESTIONS
    assert [k for k in one if one[k] != two[k]] == []
