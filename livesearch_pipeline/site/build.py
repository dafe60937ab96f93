"""Build the static site of a day: `build_site(paths, as_of, out_dir)` writes every page and
download under `out_dir` (default `data/site/`) and returns what it did.

The site of D shows the frozen days up to D (`inputs.site_days`). The live-answer rule (`liverule`)
protects the newest frozen day on disk, whatever D is: a site of an older day withholds every gold
(and every verdict, evidence page and trajectory of that question) the newest day's answer could
still be. A folder holding the site of a newer day is never replaced by an older one (its `site.json`
names its day). Pages:

    index.html                 the board of the latest day with a leaderboard
    history.html               every agent's accuracy per day (SVG chart and table)
    agents/<slug>.html         an agent's runs, usage, trajectories, breakdowns (`pages.slug`: one per name)
    days/index.html, days/<D>.html       the frozen days; a day's questions, gold, verdicts, evidence
    questions/<qid>.html       a question's texts, program, rule and gold on each frozen day
    downloads/...              per day JSONL + Parquet (downloads.py), the dataset card, trajectories
    methodology.html           how questions are made, re-dated and scored; the live-answer rule
    run-it-yourself.html       the outsider's route: install, download a scorable day, run, score, compare
    site.json                  the site's latest day, the day the rule protected, its days
    style.css

Incremental: every output has a key made from the inputs it depends on (a day's fingerprint,
the gold the rule hides that day, the pool line of a question); an output whose key is unchanged
and whose file is there is neither rendered nor written (`<cache>/site/build_index.json` holds
the keys). The few site-wide pages are rendered every time and written only when their bytes
change. Outputs of an earlier build that this one no longer makes are deleted. Every file is
written atomically.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from livesearch_pipeline.core.models import Question
from livesearch_pipeline.core.pool import POOL_FILE
from livesearch_pipeline.core.program import load_pool
from livesearch_pipeline.core.snapshot import sha256_file, write_atomic
from livesearch_pipeline.core.untrusted import UntrustedFileError, read_untrusted
from livesearch_pipeline.core.workers import default_workers, worker_pool
from livesearch_pipeline.evaluation.errors import AgentRegistryError
from livesearch_pipeline.evaluation.registry import load_agents, registry_path
from livesearch_pipeline.evaluation.writers import WriterTargetError, check_writable, protected_directories
from livesearch_pipeline.settings import DataPaths
from livesearch_pipeline.site import downloads, liverule, pages
from livesearch_pipeline.site.day_cache import from_cache, parse_and_cache
from livesearch_pipeline.site.inputs import (
    SiteDay,
    SiteInputError,
    newest_frozen_day,
    published_trajectories,
    site_days,
)
from livesearch_pipeline.site.pages import slug
from livesearch_pipeline.site.agent_cards import agent_card
from livesearch_pipeline.site.templates import FAMILIES, FILTER_JS, SORT_JS, STYLE_CSS, TEMPLATES, environment

SITE_DIR = "site"
MAX_POOL_CACHE_BYTES = 1024 * 1024 * 1024
INDEX_FILE = "build_index.json"
SITE_FILE = "site.json"  # the site's latest day, the day the rule protects, its days
RULE_LINES = (
    "every gold of the latest frozen day (tomorrow's answer may be the same, whatever the class);",
    "every gold of a static question (its answer does not change);",
    "a gold of an earlier day that still passes as the latest day's answer under the question's matching rule "
    "(slow classes — weekly, monthly, quarterly, annual — until their answer moves; a daily question on a day "
    "its value did not move), or that only a judge could tell from it;",
    "a gold of an earlier day when the latest day has no ok gold for the question (withdrawn): whether it "
    "changed cannot be told.",
    "A question no longer served on the latest day (retired from the pool) is never asked again: its gold is "
    "shown. Empty or error gold carries no answer and is shown as its status.",
)
# Part of every key: a change of the templates, the stylesheet, the script or the rule's wording rebuilds everything.
BUILD_VERSION = hashlib.sha256(json.dumps([TEMPLATES, STYLE_CSS, SORT_JS, FILTER_JS, FAMILIES, RULE_LINES, "site-build-2"]).encode()).hexdigest()


class SiteBuildError(ValueError):
    """The site cannot be built (no frozen day, unreadable inputs)."""


class NewerSiteError(SiteBuildError):
    """The output folder holds the site of a newer day than the one asked for."""

    def __init__(self, published: dt.date, message: str) -> None:
        super().__init__(message)
        self.published = published


@dataclass
class SiteBuild:
    out_dir: Path
    latest: dt.date
    days: int
    questions: int
    written: int = 0
    unchanged: int = 0
    skipped: int = 0  # outputs whose inputs did not change: not rendered at all
    removed: int = 0
    days_parsed: int = 0
    days_cached: int = 0
    hidden: int = 0
    seconds: float = 0.0
    by_kind: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def line(self) -> str:
        return (f"site of {self.latest}: {self.days} day(s), {self.questions} questions; {self.written} file(s) "
                f"written, {self.unchanged} unchanged, {self.skipped} skipped (inputs unchanged), {self.removed} "
                f"removed; days parsed {self.days_parsed}, from cache {self.days_cached}; {self.hidden} gold "
                f"answer(s) withheld (live-answer rule); {self.seconds:.1f} s; open {self.out_dir / 'index.html'}")


def site_dir(paths: DataPaths) -> Path:
    return paths.root / SITE_DIR


def cache_dir(paths: DataPaths) -> Path:
    return paths.cache / SITE_DIR


def _key(*parts: object) -> str:
    digest = hashlib.sha256(BUILD_VERSION.encode())
    for part in parts:
        digest.update(b"\0" + (part if isinstance(part, bytes) else str(part).encode()))
    return digest.hexdigest()


def publish(target: Path, data: bytes) -> None:
    """Write a file of the site atomically (a temporary file renamed over it: a reader never sees half
    a page), readable by everyone (a static host serves it). No fsync: the site is derived and rebuilt
    from the frozen files at any time, and thousands of fsyncs cost most of a build."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


class _Writer:
    """Writes outputs under `out_dir`, skipping those whose key is unchanged (see the module doc)."""

    def __init__(self, out_dir: Path, index_path: Path, build: SiteBuild) -> None:
        self.out_dir, self.index_path, self.build = out_dir, index_path, build
        try:
            previous = json.loads(index_path.read_text(encoding="utf-8")) if index_path.is_file() else {}
        except (OSError, ValueError):
            previous = {}  # an unreadable index only costs a full rebuild
        same_site = previous.get("out_dir") == str(out_dir)
        self.previous: dict[str, str] = previous.get("outputs", {}) if same_site else {}
        self.previous_facts: dict[str, list] = previous.get("facts", {}) if same_site else {}
        self.current: dict[str, str] = {}
        self.facts: dict[str, list] = {}

    def unchanged(self, relative: str, key: str) -> bool:
        """Whether `output(relative, ..., key=key)` would skip (the same key, the file there)."""
        return self.previous.get(relative) == key and (self.out_dir / relative).is_file()

    def remembered(self, relative: str, key: str) -> list | None:
        """What `output(..., remember=)` recorded with `relative` under `key` (then the output is kept as
        it is, counted as skipped), or None when it must be produced again."""
        if self.previous.get(relative) == key and relative in self.previous_facts and (self.out_dir / relative).is_file():
            self.current[relative] = key
            self.facts[relative] = self.previous_facts[relative]
            self.build.skipped += 1
            return self.previous_facts[relative]
        return None

    def output(self, relative: str, kind: str, produce: Callable[[], bytes], key: str | None = None,
               remember: list | None = None) -> None:
        target = self.out_dir / relative
        self.build.by_kind[kind] += 1
        if remember is not None:
            self.facts[relative] = remember
        if key is not None and self.previous.get(relative) == key and target.is_file():
            self.current[relative] = key
            self.build.skipped += 1
            return
        data = produce()
        if key is None:
            key = _key("bytes", hashlib.sha256(data).hexdigest())
        self.current[relative] = key
        if target.is_file() and target.stat().st_size == len(data) and target.read_bytes() == data:
            self.build.unchanged += 1
            return
        publish(target, data)
        self.build.written += 1

    def finish(self) -> None:
        for relative in sorted(set(self.previous) - set(self.current)):
            path = self.out_dir / relative
            if path.is_file():
                path.unlink()
                self.build.removed += 1
        write_atomic(self.index_path, json.dumps({"out_dir": str(self.out_dir), "outputs": self.current,
                                                  "facts": self.facts}, sort_keys=True).encode("utf-8"))


def _pool(paths: DataPaths, cache: Path) -> tuple[dict[str, Question], dict[str, str]]:
    """The current pool's questions and each one's JSON line (its key); empty without a pool. Parsed
    (every qid recomputed by `load_pool`) only when the file's sha256 changed since the last build;
    the cache entry (`pool.json`) is plain JSON under that sha256, each question validated again."""
    pool_file = paths.pool / POOL_FILE
    if not pool_file.is_file():
        return {}, {}
    digest = sha256_file(pool_file)
    cache_file = cache / "pool.json"
    try:
        entry = json.loads(read_untrusted(cache_file, max_bytes=MAX_POOL_CACHE_BYTES))
        if isinstance(entry, dict) and entry.get("request") == {"pool_sha256": digest, "version": BUILD_VERSION}:
            questions = [Question.model_validate_json(line) for line in entry["questions"]]
            return {q.qid: q for q in questions}, dict(zip((q.qid for q in questions), entry["questions"]))
    except (UntrustedFileError, ValueError, KeyError, TypeError):
        pass  # rebuilt from the pool file below
    try:
        questions = load_pool(pool_file)
    except ValueError as exc:
        raise SiteBuildError(f"{pool_file}: {exc}") from exc
    lines = [q.model_dump_json() for q in questions]
    cache.mkdir(parents=True, exist_ok=True)
    write_atomic(cache_file, json.dumps({"request": {"pool_sha256": digest, "version": BUILD_VERSION},
                                         "questions": lines}).encode("utf-8"))
    return {q.qid: q for q in questions}, dict(zip((q.qid for q in questions), lines))


DEFAULT_WORKERS = default_workers()
# Below this many gold answers to judge, or days to parse or export, starting worker processes costs
# more than it saves.
PARALLEL_RULE_ANSWERS = 20_000
PARALLEL_DAYS = 6
DOWNLOAD_FILES = ("questions.jsonl", "questions.parquet", "gold.jsonl", "gold.parquet", "gold.manifest.json",
                  "served_questions.jsonl", "verdicts.jsonl", "verdicts.parquet")


def download_name(day: dt.date, name: str) -> str:
    """The file name of a download of `day`: the served file keeps the name the evaluator and the
    agent runner read (`served_questions_<D>.jsonl`)."""
    return f"served_questions_{day.isoformat()}.jsonl" if name == "served_questions.jsonl" else name


class _Pool:
    """Worker processes for the per-day work, started on first use: forkserver, a fresh interpreter
    per worker, never a fork of a process that runs threads (a Dagster step does); the workers end
    with the build, even a killed one (`core.workers.worker_pool`)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.executor: ProcessPoolExecutor | None = None
        self._stack = ExitStack()

    def map(self, function, args: list[tuple], *, parallel: bool) -> list:
        if not args:
            return []
        if not parallel or self.workers < 2:
            return [function(*a) for a in args]
        if self.executor is None:
            self.executor = self._stack.enter_context(worker_pool(self.workers, "forkserver"))
        return list(self.executor.map(function, *zip(*args)))

    def close(self) -> None:
        self._stack.close()
        self.executor = None


def _day_downloads(d: SiteDay, hidden: dict[str, str]) -> dict[str, bytes]:
    """The six download files of a day (downloads.py), by file name."""
    questions = downloads.question_rows(d.date, d.served)
    gold = downloads.gold_rows(d.date, d.served, d.gold, hidden)
    verdicts = downloads.verdict_rows(d.date, d.runs, hidden)
    gold_jsonl = downloads.jsonl_bytes(gold)
    return {"questions.jsonl": downloads.jsonl_bytes(questions),
            "questions.parquet": downloads.parquet_bytes(questions, downloads.QUESTIONS_SCHEMA),
            "gold.jsonl": gold_jsonl, "gold.parquet": downloads.parquet_bytes(gold, downloads.GOLD_SCHEMA),
            "gold.manifest.json": downloads.gold_manifest_bytes(d.date, gold_jsonl, gold, d.manifest),
            "served_questions.jsonl": downloads.served_bytes(d.served),
            "verdicts.jsonl": downloads.jsonl_bytes(verdicts),
            "verdicts.parquet": downloads.parquet_bytes(verdicts, downloads.VERDICTS_SCHEMA)}


REPOSITORY_ENV = "LIVESEARCH_SITE_REPOSITORY"  # the public repository's address, linked from the site when set


def build_site(paths: DataPaths, as_of: dt.date, out_dir: Path | None = None,
               progress: Callable[[str], None] | None = None, cache: Path | None = None,
               workers: int = DEFAULT_WORKERS, repository: str | None = None) -> SiteBuild:
    """Build (or update) the site of `as_of` under `out_dir` (default `data/site/`), keeping the parsed
    days and the build index under `cache` (default `data/cache/site/`); the live-answer rule of many
    days is judged over `workers` processes.

    The rule protects the newest frozen day on disk, whatever `as_of` is: a site of an older day
    withholds what the newest day's answers would give away. A folder holding the site of a newer
    day is never replaced by an older one (`NewerSiteError`, naming that day).

    `repository` (default: $LIVESEARCH_SITE_REPOSITORY) is the public address of the benchmark's
    repository, linked from the agent cards and the Run-it-yourself page; without it they name the
    code without a link."""
    pool = _Pool(workers)
    repository = repository if repository is not None else (os.environ.get(REPOSITORY_ENV) or None)
    if repository is not None and not repository.startswith(("https://", "http://")):
        raise SiteBuildError(f"the repository address {repository!r} ({REPOSITORY_ENV} or repository=) is not an "
                             "http(s) URL")
    try:
        return _build(paths, as_of, out_dir, progress, cache, pool, repository)
    finally:
        pool.close()


def published_day(out_dir: Path) -> dt.date | None:
    """The latest day of the site built in `out_dir` (its `site.json`), or None when there is none."""
    try:
        recorded = json.loads(read_untrusted(Path(out_dir) / SITE_FILE, max_bytes=1024 * 1024))
        return dt.date.fromisoformat(recorded["latest"])
    except (UntrustedFileError, ValueError, KeyError, TypeError):
        return None


def _registry(paths: DataPaths) -> dict:
    """The registered agents by name (the baselines and `<data>/agents.json`) for the agent cards."""
    try:
        return {spec.name: spec for spec in load_agents(registry_path(paths))}
    except AgentRegistryError as exc:
        raise SiteBuildError(f"the agent registry {registry_path(paths)} cannot be read for the agent cards: {exc}") from None


def _build(paths: DataPaths, as_of: dt.date, out_dir: Path | None, progress, cache: Path | None,
           processes: _Pool, repository: str | None) -> SiteBuild:
    started = time.perf_counter()
    out_dir = Path(out_dir) if out_dir is not None else site_dir(paths)
    dates = site_days(paths, as_of)
    if not dates:
        raise SiteBuildError(f"no frozen day on or before {as_of} under {paths.root} (a gold snapshot and a served "
                             "file): run the daily loop first (livesearch run)")
    try:  # never into the gold, served, pool, cache or analytics folders, never through a link
        check_writable(out_dir, what="site --out", files=(), protected=protected_directories(paths=paths))
    except WriterTargetError as exc:
        raise SiteBuildError(str(exc)) from None
    published = published_day(out_dir)
    if published is not None and published > dates[-1]:
        raise NewerSiteError(published, f"{out_dir} holds the site of {published}, newer than {dates[-1]}: a build "
                             f"as of an older day never replaces it; build it as of {published} (or later), or into "
                             "another folder (--out DIR)")
    newest = newest_frozen_day(paths) or dates[-1]
    cache = Path(cache) if cache is not None else cache_dir(paths)
    build = SiteBuild(out_dir=out_dir, latest=dates[-1], days=len(dates), questions=0)
    loaded: dict[dt.date, SiteDay] = {}
    misses: list[tuple[dt.date, str]] = []
    for day in dict.fromkeys([*dates, newest]):
        stored, print_ = from_cache(paths, day, cache)
        if stored is not None:
            loaded[day] = stored
        else:
            misses.append((day, print_))
    build.days_cached, build.days_parsed = len(loaded), len(misses)
    parsed = processes.map(parse_and_cache, [(paths, day, print_, cache) for day, print_ in misses],
                           parallel=len(misses) >= PARALLEL_DAYS)
    loaded.update(zip((day for day, _ in misses), parsed))
    days = [loaded[day] for day in dates]
    if progress:
        progress(f"inputs of {len(loaded)} day(s) read ({build.days_cached} from the cache)")
    # The live-answer rule protects the newest frozen day on disk, not the site's own latest day.
    protected = loaded[newest]
    latest_classes = {q.qid: q.refresh_class for q in protected.served}
    classes_key = _key(*sorted(f"{q}={c}" for q, c in latest_classes.items()))
    hidden = _hidden_by_day(days, protected, latest_classes, classes_key, cache, processes)
    build.hidden = sum(len(h) for h in hidden.values())
    hidden_key = {d: _key(*sorted(f"{q}={r}" for q, r in h.items())) for d, h in hidden.items()}
    pool, pool_lines = _pool(paths, cache)
    out_dir.mkdir(parents=True, exist_ok=True)
    writer = _Writer(out_dir, cache / INDEX_FILE, build)
    env = environment()
    site = {"latest": days[-1].date, "protected": protected.date}
    agents = sorted({run.agent for d in days for run in d.runs} | {s.agent for d in days for s in d.skipped if s.agent})
    specs = _registry(paths)
    cards = pages.cards_of(days, specs)
    references = frozenset(agent for agent, card in cards.items() if card.reference)
    nav_key = _key(*agents, *(d.date for d in days), "references", *sorted(references))

    def render(template: str, root: str, **context) -> bytes:
        return env.get_template(template).render(root=root, site=site, **context).encode("utf-8")

    writer.output("style.css", "asset", lambda: STYLE_CSS.lstrip().encode("utf-8"))

    # --- the board
    board_day = next((d for d in reversed(days) if d.board is not None), days[-1])
    writer.output("index.html", "page", lambda: render("board.html", "", title=f"board {board_day.date}",
                                                       card_slugs={a: slug(a) for a in cards},
                                                       **pages.board_context(board_day, cards)))

    # --- history
    writer.output("history.html", "page", lambda: render("history.html", "", title="history", **pages.history_context(days)))

    # --- downloads and trajectories of each day (the downloads of changed days made over the workers)
    trajectory_links: dict[tuple[dt.date, str], tuple[str, int, int] | str] = {}
    keys: dict[str, str] = {}
    stale_days = [d for d in days if any(not writer.unchanged(f"downloads/{d.date}/{download_name(d.date, name)}",
                                                             _key(name, _key(d.fingerprint, hidden_key[d.date])))
                                         for name in DOWNLOAD_FILES)]
    made = dict(zip((d.date for d in stale_days), processes.map(
        _day_downloads, [(d, hidden[d.date]) for d in stale_days], parallel=len(stale_days) >= PARALLEL_DAYS)))
    for d in days:
        day_key = _key(d.fingerprint, hidden_key[d.date])
        base = f"downloads/{d.date}"
        for name in DOWNLOAD_FILES:
            keys[f"{base}/{download_name(d.date, name)}"] = _key(name, day_key)
        for run in d.runs:
            if run.trajectories is not None:
                trajectory_links[(d.date, run.agent)] = _trajectories(writer, d, run, hidden[d.date], base)
    for d in days:
        for name in DOWNLOAD_FILES:
            relative = f"downloads/{d.date}/{download_name(d.date, name)}"
            writer.output(relative, "download", lambda day=d.date, name=name: made[day][name], key=keys[relative])
    writer.output("downloads/README.md", "download", lambda: downloads.dataset_card(
        [d.date.isoformat() for d in days], RULE_LINES).encode("utf-8"))
    shown_counts = {d.date: _shown_counts(d, hidden[d.date]) for d in days}
    writer.output("downloads/index.html", "page", lambda: render("downloads.html", "../", title="downloads", days=[
        {"date": d.date, "shown": shown_counts[d.date][0], "withheld": shown_counts[d.date][1],
         "verdicts": sum(len(run.verdicts) for run in d.runs),
         "verdicts_shown": sum(1 for run in d.runs for qid in run.verdicts if qid not in hidden[d.date]),
         "trajectories": [{"agent": run.agent, "path": f"../{link[0]}", "lines": link[1], "withheld": link[2]}
                          for run in d.runs if isinstance(link := trajectory_links.get((d.date, run.agent)), tuple)]}
        for d in reversed(days)]))

    # --- agents
    for agent in agents:
        writer.output(f"agents/{slug(agent)}.html", "page", lambda agent=agent: render(
            "agent.html", "../", repository=repository, **pages.agent_context(
                agent, days, trajectory_links, cards.get(agent) or agent_card(agent, specs.get(agent), None),
                references)))

    # --- days
    writer.output("days/index.html", "page", lambda: render("days.html", "../", title="frozen days", days=[
        {"date": d.date, "pool": d.manifest.pool_version, "served": len(d.served), "withdrawn": len(d.manifest.withdrawn),
         "shown": sum(1 for q in d.served if q.qid in d.gold and q.qid not in hidden[d.date]
                      and d.gold[q.qid].status == "ok"), "sha256": d.manifest.sha256}
        for d in reversed(days)]))
    for d in days:
        writer.output(f"days/{d.date}.html", "page", lambda d=d: render(
            "day.html", "../", **pages.day_context(d, hidden[d.date], references)),
                      key=_key("day", d.fingerprint, hidden_key[d.date], nav_key))

    # --- questions
    served_on: dict[str, list[SiteDay]] = defaultdict(list)
    last_served = {}
    for d in days:
        for q in d.served:
            served_on[q.qid].append(d)
            last_served[q.qid] = q
    build.questions = len(served_on)
    # What a question's page shows of each day: the gold (the snapshot's sha256 and the rule's
    # decision), the program shape and every agent's verdict; another change of the day (a note on
    # its board, a new usage figure) leaves the page alone.
    shown_of_day = {d.date: _question_cells(d) for d in days}
    for qid, on_days in sorted(served_on.items()):
        q = last_served[qid]
        key = _key("question", protected.date, pool_lines.get(qid, "-"), q.question, q.question_zh, q.tier,
                   q.refresh_class, q.asset_class, q.visibility, q.entity,
                   *(f"{d.date}|{d.manifest.sha256}|{hidden[d.date].get(qid)}|{shown_of_day[d.date].get(qid)}"
                     for d in on_days))
        writer.output(f"questions/{qid}.html", "page", lambda qid=qid, on_days=on_days: render(
            "question.html", "../", **pages.question_context(qid, last_served[qid], on_days, pool.get(qid), hidden)), key=key)

    # --- methodology
    counts = liverule.count_by_class([(d.gold, hidden[d.date]) for d in days], latest_classes)
    writer.output("methodology.html", "page", lambda: render(
        "methodology.html", "", title="methodology", families=FAMILIES, rule_lines=RULE_LINES, counts=counts, n_days=len(days)))
    scorable = [{"date": d.date, "shown": shown_counts[d.date][0], "withheld": shown_counts[d.date][1],
                 "sha256": d.manifest.sha256, "code_version": d.manifest.code_version}
                for d in reversed(days) if shown_counts[d.date][0]]
    writer.output("run-it-yourself.html", "page", lambda: render(
        "run.html", "", title="run it yourself", scorable=scorable, example=scorable[0] if scorable else None,
        repository=repository))
    writer.output(SITE_FILE, "asset", lambda: json.dumps(
        {"latest": days[-1].date.isoformat(), "protected": protected.date.isoformat(),
         "days": [d.date.isoformat() for d in days]}, indent=2).encode("utf-8") + b"\n")
    writer.finish()
    build.seconds = time.perf_counter() - started
    return build


def _trajectories(writer: _Writer, d: SiteDay, run, hidden: dict[str, str], base: str) -> tuple[str, int, int] | str:
    """Publish a run's trajectories of the shown questions: (its path, lines kept, lines withheld), or
    why the file is not published (`inputs.published_trajectories`: a link, not a regular file, too
    large, a line that is not a trajectory of the day)."""
    relative = f"{base}/trajectories/{slug(run.agent)}.jsonl"
    key = _key("trajectories", d.fingerprint, _key(*sorted(hidden)), run.folder, run.agent)
    counts = writer.remembered(relative, key)
    if counts is None:  # filtered again: the day or the rule's decisions changed
        try:
            kept, withheld = published_trajectories(run.trajectories, hidden, {q.qid for q in d.served})
        except SiteInputError as exc:
            return f"not published: {exc}"
        counts = [kept.count(b"\n"), withheld]
        writer.output(relative, "download", lambda: kept, key=key, remember=counts)
    return relative, counts[0], counts[1]


def _rule_cache(day: SiteDay, latest: SiteDay, classes_key: str, cache: Path) -> tuple[Path, dict, dict | None]:
    """(the entry's file, its request, the decisions stored under that very request or None)."""
    request = {"version": BUILD_VERSION, "day": day.date.isoformat(), "day_sha256": day.manifest.sha256,
               "latest": latest.date.isoformat(), "latest_sha256": latest.manifest.sha256, "latest_classes": classes_key}
    cache_file = cache / f"rule-{day.date.isoformat()}.json"
    try:
        stored = json.loads(read_untrusted(cache_file, max_bytes=MAX_POOL_CACHE_BYTES))
    except (UntrustedFileError, ValueError):
        return cache_file, request, None  # judged again
    hidden = stored.get("hidden") if isinstance(stored, dict) and stored.get("request") == request else None
    if not isinstance(hidden, dict) or not all(isinstance(v, str) and v in liverule.REASONS for v in hidden.values()):
        return cache_file, request, None
    return cache_file, request, hidden


def _judge_day(gold, is_latest_day: bool, latest_classes, latest_gold) -> dict[str, str]:
    return liverule.hidden_on_day(gold, is_latest_day=is_latest_day, latest_classes=latest_classes,
                                  latest_answers=latest_gold)


def _hidden_by_day(days: list[SiteDay], latest: SiteDay, latest_classes: dict[str, str], classes_key: str,
                   cache: Path, pool: "_Pool") -> dict[dt.date, dict[str, str]]:
    """The live-answer rule's decisions for every day (liverule.hidden_on_day) against `latest`, the
    newest frozen day on disk, kept in the cache under their full request (the two snapshots' sha256
    and the latest day's served classes): a day is judged again only when its gold, the latest gold
    or the latest served set changed (a new latest day judges every day again, over `workers`
    processes). The latest day itself is judged every time (everything it has is hidden: no match to
    run), never read from the cache."""
    hidden: dict[dt.date, dict[str, str]] = {}
    pending = []
    for day in days:
        if day.date == latest.date:
            hidden[day.date] = _judge_day(day.gold, True, latest_classes, latest.gold)
            continue
        cache_file, request, stored = _rule_cache(day, latest, classes_key, cache)
        if stored is not None:
            hidden[day.date] = stored
        else:
            pending.append((day, cache_file, request))
    args = [(day.gold, False, latest_classes, latest.gold) for day, _, _ in pending]
    results = pool.map(_judge_day, args,
                       parallel=sum(len(day.gold) for day, _, _ in pending) >= PARALLEL_RULE_ANSWERS)
    for (day, cache_file, request), result in zip(pending, results):
        write_atomic(cache_file, json.dumps({"request": request, "hidden": result}, sort_keys=True).encode("utf-8"))
        hidden[day.date] = result
    return hidden


def _shown_counts(day: SiteDay, hidden: dict[str, str]) -> tuple[int, int]:
    """(ok golds of the day's served questions the site shows, ok golds it withholds)."""
    ok = [q.qid for q in day.served if q.qid in day.gold and day.gold[q.qid].status == "ok"]
    withheld = sum(1 for qid in ok if qid in hidden)
    return len(ok) - withheld, withheld


def _question_cells(day: SiteDay) -> dict[str, str]:
    """qid -> the day's program shape and each agent's verdict, as a key part of the question's page."""
    cells: dict[str, list[str]] = defaultdict(list)
    for qid, family in day.families.items():
        cells[qid].append(family)
    for run in day.runs:
        for qid, verdict in run.verdicts.items():
            cells[qid].append(f"{run.agent}={verdict.correct}")
    return {qid: ",".join(parts) for qid, parts in cells.items()}
