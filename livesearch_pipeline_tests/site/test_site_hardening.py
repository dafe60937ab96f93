"""Issue 38's reproductions against the site: linked and malformed trajectories, verdicts that tell a
withheld gold, a build as of an older day, runs bound by their folder's name, colliding agent pages,
planted cache entries and a full disk."""

from __future__ import annotations

import datetime as dt
import errno
import html
import json
import os
import pickle
import shutil
from pathlib import Path

import pytest

from livesearch_pipeline.cli import main
from livesearch_pipeline.core.models import GoldAnswer, PredictionRunMeta
from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.core.served import served_from_pool, write_served
from livesearch_pipeline.core.snapshot import SnapshotStore
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.leaderboard import build_leaderboard, write_leaderboard
from livesearch_pipeline.evaluation.outputs import write_evaluation
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline.site import build as site_build
from livesearch_pipeline.site.build import SiteBuildError, build_site, site_dir
from livesearch_pipeline.site.pages import slug
from livesearch_pipeline_tests.site.conftest import DAYS
from livesearch_pipeline_tests.site.synthetic import synthetic_pool

LATEST = DAYS[-1]
FIRST = DAYS[0]


def _gold(paths: DataPaths, day: dt.date) -> dict[str, GoldAnswer]:
    return {a.qid: a for a in SnapshotStore(paths.gold).read(day)}


def _text(folder: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in sorted(folder.rglob("*"))
                     if p.is_file() and p.suffix != ".parquet")


# --- finding 1: a linked trajectories file published the latest day's gold


def test_a_linked_trajectories_file_publishes_nothing_and_is_named(data_paths: DataPaths) -> None:
    run = data_paths.run_dir(FIRST, "reader")
    (run / "trajectories.jsonl").unlink()
    target = os.path.relpath(SnapshotStore(data_paths.gold).path_for(LATEST), run)
    (run / "trajectories.jsonl").symlink_to(target)
    build_site(data_paths, LATEST)
    out = site_dir(data_paths)
    latest_gold = _gold(data_paths, LATEST)
    published = (out / f"downloads/{FIRST}/trajectories/reader.jsonl")
    text = published.read_text(encoding="utf-8") if published.exists() else ""
    assert not [a.answer for a in latest_gold.values() if f'"answer":"{a.answer}"' in text.replace(" ", "")]
    assert '"status"' not in text
    page = (out / "agents/reader.html").read_text(encoding="utf-8")
    assert "symbolic link" in page and "not published" in page
    # The day and the other runs are published as usual.
    assert (out / f"downloads/{FIRST}/trajectories/oracle.jsonl").is_file()


def test_a_linked_run_folder_file_is_never_followed(data_paths: DataPaths) -> None:
    """A verdicts file linked elsewhere is refused like any other file of a run folder: the run is not
    published and the day still builds."""
    run = data_paths.run_dir(FIRST, "reader")
    real = run.parent / "elsewhere.jsonl"
    (run / "verdicts.jsonl").rename(real)
    (run / "verdicts.jsonl").symlink_to(real)
    build_site(data_paths, LATEST)
    day_page = (site_dir(data_paths) / f"days/{FIRST}.html").read_text(encoding="utf-8")
    assert 'id="skipped-runs"' in day_page and "symbolic link" in day_page


# --- finding 8: one run's trajectories could fail or balloon every build


def test_a_trajectory_line_without_a_qid_fails_only_that_run(data_paths: DataPaths) -> None:
    path = data_paths.run_dir(FIRST, "reader") / "trajectories.jsonl"
    path.write_bytes(path.read_bytes() + b'{"messages": []}\n')
    built = build_site(data_paths, LATEST)
    assert built.days == len(DAYS)
    page = (site_dir(data_paths) / "agents/reader.html").read_text(encoding="utf-8")
    assert "not a trajectory line" in page
    assert not (site_dir(data_paths) / f"downloads/{FIRST}/trajectories/reader.jsonl").exists()


def test_a_trajectories_file_without_a_line_break_is_read_no_further_than_its_bound(data_paths: DataPaths,
                                                                                    monkeypatch) -> None:
    from livesearch_pipeline.site import inputs

    monkeypatch.setattr(inputs, "MAX_TRAJECTORY_LINE_BYTES", 64 * 1024, raising=False)
    path = data_paths.run_dir(FIRST, "reader") / "trajectories.jsonl"
    path.write_bytes(b'{"qid": "' + b"x" * (256 * 1024))  # one line, no line break
    build_site(data_paths, LATEST)
    page = (site_dir(data_paths) / "agents/reader.html").read_text(encoding="utf-8")
    assert "line 1 is longer than 65,536 bytes" in page


# --- finding 2: the latest day's verdicts told its withheld gold


def test_verdicts_on_withheld_gold_are_withheld_with_it(data_paths: DataPaths) -> None:
    build_site(data_paths, LATEST)
    out = site_dir(data_paths)
    day_page = (out / f"days/{LATEST}.html").read_text(encoding="utf-8")
    questions = day_page.split('id="questions"', 1)[1]
    assert "&#10003;" not in questions and "&#10007;" not in questions  # every gold of the latest day is withheld
    verdicts = [json.loads(line) for line in (out / f"downloads/{LATEST}/verdicts.jsonl").read_text().splitlines()]
    assert verdicts and all(v["correct"] is None and v["judge"] is None and not v["shown"] for v in verdicts)
    assert "withheld" in questions.split("</tr>", 2)[1]  # the evidence pages too
    # The accuracy of each run stays on the board; verdicts on shown gold stay on earlier days.
    board = (out / "index.html").read_text(encoding="utf-8")
    assert "100.0%" in board
    first_day = (out / f"days/{FIRST}.html").read_text(encoding="utf-8").split('id="questions"', 1)[1]
    assert "&#10003;" in first_day
    question_pages = [p.read_text(encoding="utf-8") for p in (out / "questions").glob("*.html")]
    for page in question_pages:
        row = page.split(f'days/{LATEST}.html">{LATEST}</a>', 1)[1].split("</tr>", 1)[0]
        assert "&#10003;" not in row and "&#10007;" not in row


# --- finding 3: a site built as of an older day published current answers and rolled the board back


def _add_newer_day(paths: DataPaths, day: dt.date, rewound: str) -> GoldAnswer:
    """Freeze `day` after the synthetic days: every answer moves, but `rewound` (a daily question)
    answers again what it answered on the first day."""
    pool = synthetic_pool(len(_gold(paths, LATEST)))
    first = _gold(paths, FIRST)
    answers = []
    for a in _gold(paths, LATEST).values():
        value = first[a.qid].value if a.qid == rewound else round(float(a.value) + 7.77, 2)
        answers.append(a.model_copy(update={"date": day, "value": value, "answer": f"{value:.2f}"}))
    write_served(paths.served_file(day), served_from_pool(pool))
    SnapshotStore(paths.gold).write(day, answers, pool_version="pool-synthetic2", pool_sha256="0" * 64,
                                    data_service="synthetic", code_version="test", max_withdrawn_share=0.05,
                                    cutoff=dt.datetime.combine(day, dt.time(23, 59, 59), tzinfo=dt.timezone.utc),
                                    created_at=dt.datetime.combine(day, dt.time(23, 59, 59), tzinfo=dt.timezone.utc))
    return first[rewound]


def test_a_site_of_an_older_day_withholds_what_the_newest_frozen_day_answers(data_paths: DataPaths,
                                                                            tmp_path: Path) -> None:
    served = {json.loads(line)["qid"]: json.loads(line) for line in
              data_paths.served_file(LATEST).read_text(encoding="utf-8").splitlines()}
    first, latest = _gold(data_paths, FIRST), _gold(data_paths, LATEST)
    rewound = next(q for q, s in served.items() if s["refresh_class"] == "daily"
                   and first[q].answer != latest[q].answer and [a.answer for a in first.values()].count(first[q].answer) == 1)
    newer = LATEST + dt.timedelta(days=1)
    old_gold = _add_newer_day(data_paths, newer, rewound)
    built = build_site(data_paths, LATEST, tmp_path / "older-site")
    assert built.latest == LATEST
    rows = [json.loads(line) for line in (tmp_path / f"older-site/downloads/{FIRST}/gold.jsonl").read_text().splitlines()]
    row = next(r for r in rows if r["qid"] == rewound)
    assert not row["shown"] and row["answer"] is None, f"{old_gold.answer} is the newest day's answer again"
    assert old_gold.answer not in (tmp_path / f"older-site/questions/{rewound}.html").read_text(encoding="utf-8")
    recorded = json.loads((tmp_path / "older-site/site.json").read_text())
    assert recorded["latest"] == LATEST.isoformat() and recorded["protected"] == newer.isoformat()


def test_a_build_as_of_an_older_day_never_replaces_the_site_of_a_newer_one(data_paths: DataPaths, monkeypatch,
                                                                           capsys) -> None:
    build_site(data_paths, LATEST)
    before = {p: p.read_bytes() for p in site_dir(data_paths).rglob("*") if p.is_file()}
    with pytest.raises(SiteBuildError, match=f"holds the site of {LATEST}, newer than {DAYS[-2]}"):
        build_site(data_paths, DAYS[-2])
    assert {p: p.read_bytes() for p in site_dir(data_paths).rglob("*") if p.is_file()} == before
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(data_paths.root))
    with pytest.raises(SystemExit, match="never replaces it"):
        main(["site", "build", "--date", DAYS[-2].isoformat()])


def test_the_public_site_asset_of_a_backfilled_day_keeps_the_newer_site(data_paths: DataPaths) -> None:
    import dagster as dg

    from livesearch_pipeline.defs.resources import StorageResource
    from livesearch_pipeline.defs.site.assets import public_site

    build_site(data_paths, LATEST)
    result = dg.materialize([public_site], partition_key=DAYS[-2].isoformat(), instance=dg.DagsterInstance.ephemeral(),
                            resources={"storage": StorageResource(root=str(data_paths.root))})
    assert result.success
    assert json.loads((site_dir(data_paths) / "site.json").read_text())["latest"] == LATEST.isoformat()
    assert f"Board — gold of {LATEST}" in (site_dir(data_paths) / "index.html").read_text(encoding="utf-8")


# --- finding 11: a run found by its folder's basename


def test_a_folder_elsewhere_named_like_a_day_run_publishes_nothing_of_that_run(data_paths: DataPaths,
                                                                              tmp_path: Path) -> None:
    day_dir = data_paths.runs / FIRST.isoformat()
    outside = tmp_path / "mine" / "oracle"  # an outside run folder sharing the name of the day's oracle run
    outside.mkdir(parents=True)
    shutil.copy(day_dir / "reader" / "predictions.jsonl", outside / "predictions.jsonl")
    served = [json.loads(line)["qid"] for line in data_paths.served_file(FIRST).read_text().splitlines()]
    meta = PredictionRunMeta(agent="mine", date=FIRST, served_qid_set_hash=qid_set_hash(served),
                             started_at=dt.datetime(2026, 11, 2, 12, tzinfo=dt.timezone.utc))
    (outside / "predictions.meta.json").write_text(meta.model_dump_json(), encoding="utf-8")
    store = SnapshotStore(data_paths.gold)
    write_evaluation(evaluate(data_paths.served_file(FIRST), store.path_for(FIRST), outside / "predictions.jsonl"),
                     outside)
    runs = sorted(p for p in day_dir.iterdir() if (p / "summary.json").is_file())
    board = build_leaderboard([*runs, outside], date=FIRST.isoformat(), gold_dir=data_paths.gold,
                              served_dir=data_paths.served)
    write_leaderboard(board, day_dir / "leaderboard")
    build_site(data_paths, LATEST)
    page = (site_dir(data_paths) / "agents/mine.html").read_text(encoding="utf-8")
    runs_table = page.split('id="runs"', 1)[1].split("</table>", 1)[0]
    assert "100.0%" not in runs_table  # the day's oracle run is not shown as mine's
    assert "is of agent 'oracle', not of 'mine'" in html.unescape(page)


# --- finding 12: two agent names shared one page


def test_agent_pages_are_keyed_by_a_collision_free_slug() -> None:
    names = ["lab_agent", "lab~agent", "Lab_agent", "lab agent", "navigator-6", "..", "a/b", "a\\b"]
    slugs = [slug(name) for name in names]
    assert len(set(slugs)) == len(names)
    assert slug("navigator-6") == "navigator-6" and slug("lab_agent") == "lab_agent"
    assert all("/" not in s and "\\" not in s and not s.startswith(".") for s in slugs)


# --- finding 6 (b): the site's cache was unpickled before any check


def test_a_planted_cache_entry_never_runs_code(data_paths: DataPaths, tmp_path: Path) -> None:
    marker = tmp_path / "code-ran"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    cache = data_paths.cache / "site"
    cache.mkdir(parents=True, exist_ok=True)
    for name in [f"day-{d}.pickle" for d in DAYS] + ["pool.pickle"]:
        (cache / name).write_bytes(pickle.dumps(Payload()))
    for name in [f"day-{d}.json" for d in DAYS] + ["pool.json"]:
        (cache / name).write_text('{"request": {"version": 0}, "day": {}}', encoding="utf-8")
    built = build_site(data_paths, LATEST)
    assert not marker.exists()
    assert built.days_parsed == len(DAYS)  # every planted entry refused, every day parsed from its files


# --- finding 15: a full disk printed a traceback


def test_a_full_disk_is_one_line(data_paths: DataPaths, monkeypatch) -> None:
    def full(target: Path, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target))

    monkeypatch.setattr(site_build, "publish", full)
    monkeypatch.setenv("LIVESEARCH_DATA_DIR", str(data_paths.root))
    with pytest.raises(SystemExit) as stopped:
        main(["site", "build"])
    message = str(stopped.value)
    assert message.count("\n") == 0 and "No space left on device" in message and "site build: error" in message


def test_the_site_is_never_built_into_a_protected_folder(data_paths: DataPaths) -> None:
    """`cache/` is the pipeline's own (issue 38, finding 6): a site build, like every writer, refuses it."""
    for folder in (data_paths.cache / "site", data_paths.gold / "site"):
        with pytest.raises(SiteBuildError, match=f"is inside {folder.parent}"):
            build_site(data_paths, LATEST, folder)
        assert not (folder / "index.html").exists()


def test_a_second_run_under_a_taken_name_never_replaces_the_first_on_the_site(data_paths: DataPaths) -> None:
    """Findings 5 and 12: the board lists the squatter unranked; the site names it and publishes the ranked
    run's verdicts and trajectories under the name, never the squatter's."""
    day_dir = data_paths.runs / FIRST.isoformat()
    squatter = day_dir / "my-run"
    shutil.copytree(day_dir / "reader", squatter)
    (squatter / "summary.json").unlink()  # a fresh folder of its own: only its predictions and trajectories copied
    trajectories = squatter / "trajectories.jsonl"
    trajectories.write_text(trajectories.read_text().replace('"content":"', '"content":"SQUATTER '), encoding="utf-8")
    meta = json.loads((squatter / "predictions.meta.json").read_text())
    meta["agent"] = "oracle"
    (squatter / "predictions.meta.json").write_text(json.dumps(meta), encoding="utf-8")
    store = SnapshotStore(data_paths.gold)
    write_evaluation(evaluate(data_paths.served_file(FIRST), store.path_for(FIRST), squatter / "predictions.jsonl"),
                     squatter)
    runs = sorted(p for p in day_dir.iterdir() if (p / "summary.json").is_file())
    board = build_leaderboard(runs, date=FIRST.isoformat(), gold_dir=data_paths.gold, served_dir=data_paths.served,
                              registered={"oracle", "reader", "stale"}, runs_root=data_paths.runs)
    assert [u.run_dir for u in board.unranked] == [str(squatter)]
    write_leaderboard(board, day_dir / "leaderboard")
    build_site(data_paths, LATEST)
    out = site_dir(data_paths)
    assert "SQUATTER" not in (out / f"downloads/{FIRST}/trajectories/oracle.jsonl").read_text(encoding="utf-8")
    page = html.unescape((out / "agents/oracle.html").read_text(encoding="utf-8"))
    assert str(squatter) in page and "is ranked from" in page
