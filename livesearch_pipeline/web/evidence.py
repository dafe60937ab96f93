"""The evidence map of D's web: for every question of D's scoring set, the pages that hold what a
careful analyst needs to answer it.

Derived from each question's program and D's gold, never from its family: every call of the
program is replayed at D's clock with the concrete arguments the gold recorded (`GoldAnswer.args`,
per call id), and every value reference of the program (the extractor, its `combine.other`, each
call's `refs`) selects its records exactly as the executor did (`core.extract.select_records`):
the record of a lookup, the window of an aggregate, every holding an argmax compares, each link
of a chain (a fund's top holding, then that stock's close). A *link* is one reference: the
records it selects, as record keys (`tool|entity|time key`); a page holds a record when the
corpus printed it there (the `records` table of the index, written from `Page.records`). A link
is present when each of its records is on some page; a question's evidence is present when all
its links are. Third-party figures that disagree are not evidence, so they are not recorded.

Questions whose calls read one-minute bars are *tools-only*: no public page carries historical
intraday bars, so they are excluded from web-only ceilings and counted apart.

A window a portal has digested (web/digest.py: the 5/20/60-session change, high, low, average,
total of a visible entity's quote) is also present when a page prints its *digest key*: the figure
itself, computed over exactly the window's records.

Each question's *effort* is the fewest page reads that together show every deciding record (or
the digested figure), from a search, the walk to them included: exact (web/effort.py, a set cover
with link-reachability solved as a mixed-integer program), so no agent answers in fewer reads. A
page the search engine did not index is read only through a page linking to it (a bulletin
through its archive, a long report's statement page from the report's cover through every page
before it); a record a search result's snippet prints (its date and its deciding value) needs no
read. Deciding records are those the value depends on (`deciding_records`): a window's every
session for a mean or a high, only its two ends for a change or a return. A lookup takes one read;
a 20-session mean of an obscure entity, whose history is only in its exchange's daily bulletins,
about ten (a session's close is printed again with the next session's record as its previous
close, `pre_close`: a page printing the next session's quote shows a close too, so one bulletin
shows two sessions' closes); a statement figure of an obscure entity, the cover and the pages up
to the statement; the same figures of a well-known one, one. A page shows a record where a reader
would read it off: a quote also on its twin data set's page (`_TWINS`), a report's announcement
date also on its company's filings list. `cover` is one smallest set of pages in an
order a reader can open them (the greedy cover, `effort_cover`, is the program's starting
answer). The summary gives the distribution per visibility band and family.

`evidence.json` beside the index holds the map, keyed by the gold snapshot's sha256 so that a
new gold of D rebuilds it.
"""

from __future__ import annotations

import bisect
import datetime as dt
import hashlib
import json
import math
import os
import re
import statistics
from collections import defaultdict, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from livesearch_pipeline.core.calendars import session_dates
from livesearch_pipeline.core.executor import call_key
from livesearch_pipeline.core.extract import REVISION_FIELD, ExtractionEmpty, ExtractionError, select_records
from livesearch_pipeline.core.models import GoldAnswer, Question, ValueRef
from livesearch_pipeline.dataservice.catalog import ServiceConfig
from livesearch_pipeline.dataservice.market import shared_market
from livesearch_pipeline.dataservice.server import DataService
from livesearch_pipeline.web.corpus import record_key
from livesearch_pipeline.web.digest import digest_key
from livesearch_pipeline.web.effort import Effort, minimum_reads
from livesearch_pipeline.web.index import WebIndex

EVIDENCE_FILE = "evidence.json"
EVIDENCE_VERSION = 5
# The quote tools whose record of a session prints the session before's close as its `pre_close`,
# with the calendar of their sessions: a page holding a session's record shows the previous
# session's close. Entries of `pages_of` under PRE_CLOSE + a record's key are the pages holding the
# next session's record (build_evidence_map), counted for a link of `close` (cover_items).
_PRE_CLOSE_CALENDARS = {"daily": "XSHG", "index_daily": "XSHG", "fund_daily": "XSHG", "hk_daily": "XHKG",
                        "us_daily": "XNYS"}
PRE_CLOSE = "pre_close:"
# Data sets that print another data set's record of the same session with the same figures (the
# exchange's adjusted-quote pages of a Hong Kong or US stock and its daily quotes; Tushare's
# pro_bar and bak_daily and the A-share daily quotes): a page holding the twin record shows the
# quote fields. Entries under SAME + a record's key are the pages holding its twin's record.
_TWINS = {"hk_daily_adj": "hk_daily", "us_daily_adj": "us_daily", "pro_bar": "daily", "bak_daily": "daily"}
_QUOTE_FIELDS = frozenset({"trade_date", "open", "high", "low", "close", "pre_close", "change", "pct_chg",
                           "pct_change", "vol", "amount"})
SAME = "same:"
# A report's announcement date is printed on its company's filings list (the date, the kind, the
# period: "2026-10-23 定期报告 20260930"): entries under ANNOUNCED + a record's key are that page,
# counted for a link of an announcement date.
ANNOUNCED = "announced:"
_ANNOUNCEMENT_FIELDS = frozenset({"ann_date", "f_ann_date"})
MAX_PAGES_PER_LINK = 25
# Aggregates a portal's digest can state (web/digest.py).
_DIGESTED = frozenset({"change", "pct_change", "max", "min", "mean", "sum"})
# Visibility bands of the leaderboard's ceilings (the pool's scale is 0..10).
BANDS = (("low", 0, 3), ("mid", 4, 6), ("high", 7, 10))
_FIGURE = re.compile(r"-?\d+(?:\.\d+)?")


class EvidenceError(RuntimeError):
    """The evidence map cannot be derived (a gold answer without its arguments, a call that fails)."""


def band_of(visibility: int) -> str:
    for name, low, high in BANDS:
        if low <= visibility <= high:
            return name
    raise EvidenceError(f"visibility {visibility} is outside 0..10")


@dataclass(frozen=True)
class Link:
    ref: str  # where in the program: "extract", "extract.combine", "<call id>.<arg>"
    call: str
    tool: str
    subject: str | None
    field: str
    keys: tuple[str, ...]
    values: tuple[Any, ...]  # the selected records' values of `field` (for value checks)
    pages: tuple[str, ...]  # pages holding all keys first, then pages holding some
    missing: tuple[str, ...]  # keys on no page
    digest: str | None = None  # the digest key of the link's figure (a window a portal may digest)
    digest_pages: tuple[str, ...] = ()  # pages printing that figure

    @property
    def present(self) -> bool:
        return bool(self.keys) and (not self.missing or bool(self.digest_pages))


def _references(question: Question) -> list[tuple[str, ValueRef]]:
    """Every value reference of the program: the extractor's own (its value, each combine step's
    other value, each other value a pick compares: `Extractor.refs`), each call's `refs`, and the
    set a screen's selection keeps (`select.within`: the constituents it reads), as a reference
    of its own."""
    program = question.program
    refs: list[tuple[str, ValueRef]] = list(program.extract.refs())
    for call in program.calls:
        refs += [(f"{call.id}.{arg}", ref) for arg, ref in sorted(call.refs.items())]
    for where, ref in list(refs):
        member = getattr(ref.select, "within", None)
        if member is not None:
            refs.append((f"{where}.within", ValueRef(call=member.call, path=member.path, select=member.select,
                                                     field=member.field)))
    return refs


class _Replayer:
    """The data service at D's clock; each distinct call answered once for the whole map."""

    def __init__(self, seed: int, clock: dt.date) -> None:
        self.service = DataService(config=ServiceConfig(seed=seed, clock=clock), market=shared_market(seed))
        self.metas = {spec.name: spec.meta for spec in self.service.specs}
        self._cache: dict[Any, dict[str, Any]] = {}

    def call(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        key = call_key(tool, dict(args))
        cached = self._cache.get(key)
        if cached is None:
            try:
                cached = self._cache[key] = self.service.call(tool, dict(args))
            except Exception as exc:  # the service raises its own errors; name the call
                raise EvidenceError(f"replaying {tool} {dict(args)}: {type(exc).__name__}: {exc}") from exc
        return cached


def question_links(question: Question, gold: GoldAnswer, replayer: _Replayer,
                   pages_of: Mapping[str, Sequence[str]] | None = None) -> list[Link]:
    """The links of one question's evidence (pages left empty when `pages_of` is None)."""
    calls = {call.id: call for call in question.program.calls}
    responses: dict[str, dict[str, Any]] = {}
    for call_id, call in calls.items():
        args = gold.args.get(call_id)
        if args is None:
            raise EvidenceError(f"{question.qid}: the gold of {gold.date} has no arguments for call {call_id}")
        responses[call_id] = replayer.call(call.tool, args)
    links: list[Link] = []
    for where, ref in _references(question):
        call = calls[ref.call]
        meta = replayer.metas.get(call.tool)
        if meta is None:
            raise EvidenceError(f"{question.qid}: tool {call.tool} is not a tool of the data service")
        try:
            records = deciding_records(ref, select_records(ref, responses, gold.date))
        except (ExtractionEmpty, ExtractionError) as exc:
            raise EvidenceError(f"{question.qid} {where}: {exc}") from exc
        links.append(_link(where, ref.call, call.tool, ref.field, records, gold, replayer, pages_of,
                           aggregate=ref.aggregate if ref.times is None else None))
        if ref.times is not None and meta.time_key is not None:
            # The joined call's records on the selected records' time keys (the adjustment factor
            # of each session of a window): a link of their own.
            joined = calls.get(ref.times.call)
            if joined is None:
                raise EvidenceError(f"{question.qid} {where}: the join reads call {ref.times.call}, not in the program")
            stamps = {str(r.get(ref.select.key)) for r in records}
            partners = [r for r in responses[ref.times.call].get("items", [])
                        if str(r.get(ref.select.key)) in stamps]
            links.append(_link(f"{where}.times", ref.times.call, joined.tool, ref.times.field, partners, gold,
                               replayer, pages_of))
    return links


def _link(where: str, call_id: str, tool: str, field: str, records: Sequence[Mapping[str, Any]], gold: GoldAnswer,
          replayer: _Replayer, pages_of: Mapping[str, Sequence[str]] | None, aggregate: str | None = None) -> Link:
    meta = replayer.metas[tool]
    args = gold.args[call_id]
    subject = str(args[meta.entity_param]) if meta.entity_param and meta.entity_param in args else None
    # A cross-section (a session of every instrument, for a screen) names each record's own entity.
    keys = tuple(dict.fromkeys(
        record_key(tool, subject if subject is not None or not meta.entity_param else r.get(meta.entity_param),
                   r.get(meta.time_key) if meta.time_key else None, r.get(REVISION_FIELD))
        for r in records))
    values = tuple(r.get(field) for r in records)
    digest = None
    if aggregate in _DIGESTED and meta.time_key and records and subject is not None:
        digest = digest_key(tool, subject, field, aggregate, len(records), records[-1].get(meta.time_key))
    pages, missing = _placed(keys, pages_of) if pages_of is not None else ((), keys)
    digest_pages = tuple(pages_of.get(digest, ())) if pages_of is not None and digest is not None else ()
    return Link(where, call_id, tool, subject, field, keys, values, pages, missing, digest, digest_pages)


class Walks:
    """The reads that open a page: the page itself when the search engine indexed it, else the
    shortest walk of links from an indexed page to it (breadth-first, backwards over the links
    into unindexed pages): a bulletin from the company page through its archive, a report's
    statement page from the report's cover through every page before it. None: no walk reaches it."""

    def __init__(self, hidden: frozenset[str] | set[str], linking_to: Callable[[str], Sequence[str]]) -> None:
        self.hidden = hidden
        self._linking_to = linking_to
        self._parents: dict[str, Sequence[str]] = {}
        self._walks: dict[str, tuple[str, ...] | None] = {}

    def parents(self, path: str) -> Sequence[str]:
        found = self._parents.get(path)
        if found is None:
            found = self._parents[path] = tuple(self._linking_to(path))
        return found

    def __call__(self, page: str) -> tuple[str, ...] | None:
        if page not in self.hidden:
            return (page,)
        if page in self._walks:
            return self._walks[page]
        towards: dict[str, str | None] = {page: None}  # each page seen: the next page of its walk
        frontier = deque([page])
        walk: tuple[str, ...] | None = None
        while frontier and walk is None:
            node = frontier.popleft()
            for source in self.parents(node):
                if source in towards:
                    continue
                towards[source] = node
                if source not in self.hidden:
                    steps = [source]
                    while (after := towards[steps[-1]]) is not None:
                        steps.append(after)
                    walk = tuple(steps)
                    break
                frontier.append(source)
        self._walks[page] = walk
        return walk


def effort_cover(links: Sequence[Link], pages_of: Mapping[str, Sequence[str]],
                 walk: Callable[[str], Sequence[str] | None] | None = None,
                 free: frozenset[tuple[int, str]] = frozenset()) -> list[str] | None:
    """The pages a reader opens to see every deciding record of `links` (or a link's digested
    figure), in the order read, by weighted greedy set cover: opening a page costs the reads of
    its walk (`walk(page)`: the pages read to reach it, itself last; just the page when None is
    given) not already made, and shows the records of every page of the walk; each time the page
    showing the most unseen records per new read is opened (ties: fewer reads, the lowest path).
    The pages of one document's walk are counted once however many of its pages are needed.
    None when some record is on no page reachable and its link has no digest. Items in `free` (a
    search result's snippet shows them) need no read."""
    needed, shows = cover_items(links, pages_of, free)
    opened: list[str] = []
    seen: set[str] = set()
    while needed:
        best: tuple[float, int, str] | None = None
        chosen: tuple[list[str], set[tuple[int, str]]] = ([], set())
        for page, shown in shows.items():
            if page in seen or not shown & needed:
                continue
            steps = [page] if walk is None else walk(page)
            if steps is None:
                continue
            new = [q for q in steps if q not in seen]
            gained = set().union(*(shows.get(q, set()) for q in new)) & needed
            rank = (-len(gained) / len(new), len(new), page)
            if best is None or rank < best:
                best, chosen = rank, (new, gained)
        if best is None:
            return None
        opened.extend(chosen[0])
        seen.update(chosen[0])
        needed -= chosen[1]
    return opened


def cover_items(links: Sequence[Link], pages_of: Mapping[str, Sequence[str]],
                free: frozenset[tuple[int, str]] = frozenset()
                ) -> tuple[set[tuple[int, str]], dict[str, set[tuple[int, str]]]]:
    """What a reader must see, as (link position, record key), and what each page shows of it (a
    record it prints, or every record of a link whose digested figure it prints); `free`: items a
    search already shows (in a result's snippet), needing no read."""
    needed: set[tuple[int, str]] = set()
    shows: dict[str, set[tuple[int, str]]] = defaultdict(set)
    for position, link in enumerate(links):
        for key in link.keys:
            needed.add((position, key))
            for page in pages_of.get(key, ()):
                shows[page].add((position, key))
            if link.field == "close":  # printed again as the next session's previous close
                for page in pages_of.get(PRE_CLOSE + key, ()):
                    shows[page].add((position, key))
            if link.field in _QUOTE_FIELDS:  # on its twin data set's pages too
                for page in pages_of.get(SAME + key, ()):
                    shows[page].add((position, key))
            if link.field in _ANNOUNCEMENT_FIELDS:  # on the filings list
                for page in pages_of.get(ANNOUNCED + key, ()):
                    shows[page].add((position, key))
        for page in link.digest_pages:
            shows[page].update((position, key) for key in link.keys)
    return needed - free, {page: items - free for page, items in shows.items()}


def _filings_lists(index: WebIndex, derived: Sequence[tuple[Question, GoldAnswer, list[Link]]]
                   ) -> dict[str, list[str]]:
    """ANNOUNCED + key -> the filings list of the record's company, for each record of an
    announcement-date link whose date and period that list prints together."""
    found: dict[str, list[str]] = {}
    texts: dict[str, str] = {}
    for _, _, links in derived:
        for link in links:
            if link.field not in _ANNOUNCEMENT_FIELDS or not link.subject:
                continue
            path = f"/exchange/filings/{link.subject}.html"
            if path not in texts:
                texts[path] = index.page_text(path)
            for key, value in zip(link.keys, link.values):
                period, day = key.removesuffix("|restated").rsplit("|", 1)[-1], str(value or "")
                if re.fullmatch(r"\d{8}", period) and re.fullmatch(r"\d{8}", day) and re.search(
                        rf"{day[:4]}-{day[4:6]}-{day[6:]}\s+\S+\s+{period}", texts[path]):
                    found[ANNOUNCED + key] = [path]
    return found


def twin_key(key: str) -> str | None:
    """The key of the same session's record in the twin data set (`_TWINS`), or None."""
    parts = key.split("|")
    twin = _TWINS.get(parts[0])
    return None if twin is None or len(parts) != 3 else "|".join([twin, *parts[1:]])


def next_session_key(key: str) -> str | None:
    """The key of the next session's record of a quote tool's record (`tool|code|YYYYMMDD`), on the
    tool's calendar; None for another tool or a time key that is no session date."""
    tool, subject, stamp = (key.split("|") + ["", ""])[:3]
    calendar = _PRE_CLOSE_CALENDARS.get(tool)
    if calendar is None or key.count("|") != 2 or not re.fullmatch(r"\d{8}", stamp):
        return None
    sessions = session_dates(calendar)
    at = bisect.bisect_right(sessions, dt.date(int(stamp[:4]), int(stamp[4:6]), int(stamp[6:])))
    return record_key(tool, subject, sessions[at].strftime("%Y%m%d")) if at < len(sessions) else None


def deciding_records(ref: ValueRef, records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The selected records a reader needs to compute the value: all of them, except for `first`
    and `last`, which only the first (last) record with a value decides (the latest implemented
    dividend, not every dividend since the listing), and `change` and `pct_change`, which only the
    window's two ends decide (a 60-session return is the first and the last close, not the 59
    between). `argmax`/`argmin` keep every record: the winner is only known once each candidate
    has been compared. Records arrive ascending by key (`select_records`); a null field is skipped
    as the aggregate skips it."""
    if ref.aggregate not in ("first", "last", "change", "pct_change"):
        return list(records)
    valued = [r for r in records if r.get(ref.field) is not None]
    if not valued:
        return list(records)
    if ref.aggregate == "first":
        return [valued[0]]
    if ref.aggregate == "last":
        return [valued[-1]]
    return [valued[0], valued[-1]] if len(valued) > 1 else valued


def tools_only(question: Question, replayer: _Replayer) -> bool:
    """Whether the question reads one-minute bars (which no public page keeps)."""
    return any(getattr(replayer.metas.get(call.tool), "time_key", None) == "trade_time"
               for call in question.program.calls)


def _printed(value: Any, texts: Iterable[str]) -> bool:
    """Whether a number is printed on one of the pages (as it is, or rounded to the page's decimals)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return isinstance(value, str) and any(value in text for text in texts)
    for text in texts:
        for token in _FIGURE.findall(text.replace(",", "")):
            decimals = len(token.split(".")[1]) if "." in token else 0
            if abs(float(token) - value) <= 0.5 * 10 ** -decimals + 1e-9 * max(1.0, abs(value)):
                return True
    return False


def build_evidence_map(web_dir: Path, questions: Sequence[Question], answers: Sequence[GoldAnswer], *,
                       seed: int, gold_sha256: str, workers: int | None = None) -> dict[str, Any]:
    """The evidence map of the web in `web_dir` for the ok gold answers of its clock (the efforts
    worked out in `workers` forked processes, default `default_workers()`; the map is the same
    whatever their number)."""
    index = WebIndex(web_dir)
    clock = index.clock
    if clock is None:
        raise EvidenceError(f"{web_dir}: the web's index records no clock")
    by_qid = {q.qid: q for q in questions}
    replayer = _Replayer(seed, clock)
    scored = [a for a in answers if a.status == "ok"]
    wrong_day = [a.qid for a in scored if a.date != clock]
    if wrong_day:
        raise EvidenceError(f"gold answers of another day than the web's clock {clock}: {wrong_day[:5]}")
    unknown = [a.qid for a in scored if a.qid not in by_qid]
    if unknown:
        raise EvidenceError(f"{len(unknown)} gold qids are not in the pool (first: {unknown[:5]})")
    derived: list[tuple[Question, GoldAnswer, list[Link]]] = []
    for answer in scored:
        question = by_qid[answer.qid]
        derived.append((question, answer, question_links(question, answer, replayer)))
    pages_of = index.pages_with_records(
        [k for _, _, links in derived for link in links for k in link.keys]
        + [link.digest for _, _, links in derived for link in links if link.digest is not None])
    twins: dict[str, str] = {}
    following: dict[str, set[str]] = defaultdict(set)
    for _, _, links in derived:
        for link in links:
            for key in link.keys:
                twin = twin_key(key) if link.field in _QUOTE_FIELDS else None
                if twin is not None:
                    twins[key] = twin
                if link.field == "close":
                    following[key].update(after for k in (key, twin) if k is not None
                                          and (after := next_session_key(k)) is not None)
    if twins or following:
        found = index.pages_with_records(sorted(set(twins.values()) | {a for afters in following.values() for a in afters}))
        pages_of = {**pages_of,
                    **{SAME + key: found[twin] for key, twin in twins.items() if found.get(twin)},
                    **{PRE_CLOSE + key: sorted({p for a in afters for p in found.get(a, ())})
                       for key, afters in following.items() if any(found.get(a) for a in afters)}}
    pages_of = {**pages_of, **_filings_lists(index, derived)}
    placed: list[tuple[Question, list[Link], bool, bool]] = []
    for question, answer, bare in derived:
        links = [Link(b.ref, b.call, b.tool, b.subject, b.field, b.keys, b.values,
                      *_placed(b.keys, pages_of), b.digest,
                      tuple(pages_of.get(b.digest, ())) if b.digest is not None else ()) for b in bare]
        only_tools = tools_only(question, replayer)
        placed.append((question, links, only_tools, all(link.present for link in links)))
    efforts = _efforts(web_dir, pages_of, [(q.qid, links) for q, links, only_tools, present in placed
                                           if present and not only_tools], workers)
    entries: dict[str, Any] = {}
    for question, links, only_tools, present in placed:
        effort = efforts.get(question.qid)
        entry: dict[str, Any] = {
            "visibility": question.visibility, "band": band_of(question.visibility), "tier": question.tier,
            "family": family_of(question), "tools_only": only_tools,
            "present": present, "effort": effort.reads if effort is not None else None,
            "effort_exact": effort.exact if effort is not None else None,
            "cover": list(effort.pages) if effort is not None else [],
            "pages": sorted({p for link in links for p in (*link.pages, *link.digest_pages)}
                            | set(effort.pages if effort is not None else ())),
            "links": [{"ref": link.ref, "tool": link.tool, "subject": link.subject, "field": link.field,
                       "records": len(link.keys), "present": link.present, "pages": list(link.pages),
                       "digest_pages": list(link.digest_pages[:MAX_PAGES_PER_LINK]),
                       "missing": list(link.missing[:5])} for link in links],
        }
        if is_lookup(question):
            texts = [index.page_text(path) for path in links[0].pages[:MAX_PAGES_PER_LINK]]
            entry["value_printed"] = _printed(links[0].values[0], texts) if links[0].values else False
        entries[question.qid] = entry
    return {"version": EVIDENCE_VERSION, "clock": clock.isoformat(), "web": index.identity,
            "index_fingerprint": index_fingerprint(web_dir),
            "gold_sha256": gold_sha256, "questions": entries, "summary": summarise(entries)}


EFFORT_CHUNK = 64  # questions per task of a worker working out efforts


def _efforts(web_dir: Path, pages_of: Mapping[str, Sequence[str]], jobs: Sequence[tuple[str, list[Link]]],
             workers: int | None) -> dict[str, Effort]:
    """Each question's effort (qid -> `Effort`), in forked worker processes, chunk by chunk."""
    from livesearch_pipeline.core.workers import default_workers, forked_pool

    count = default_workers() if workers is None else workers
    chunks = [list(jobs[i:i + EFFORT_CHUNK]) for i in range(0, len(jobs), EFFORT_CHUNK)]
    if count <= 1 or len(chunks) <= 1:
        return dict(_effort_chunk(chunks[0], (web_dir, pages_of)) if chunks else [])
    found: dict[str, Effort] = {}
    with forked_pool(count, (web_dir, pages_of)) as pool:
        for result in pool.map(_effort_chunk, chunks):
            found.update(result)
    return found


# In a process working out efforts: the web's index, its unindexed pages, walks and snippets,
# opened once per process and index build (keyed by the pid: a SQLite connection is never used
# across a fork, and by the index's fingerprint: a web rebuilt in place is read anew).
_READER: tuple[tuple[int, Path, str], frozenset[str], "Walks", "_Snippets"] | None = None


def _effort_chunk(jobs: Sequence[tuple[str, list[Link]]],
                  state: tuple[Path, Mapping[str, Sequence[str]]] | None = None) -> list[tuple[str, Effort]]:
    global _READER
    from livesearch_pipeline.core.workers import inherited

    web_dir, pages_of = state if state is not None else inherited()
    key = (os.getpid(), web_dir, index_fingerprint(web_dir))
    if _READER is None or _READER[0] != key:
        index = WebIndex(web_dir)
        hidden = index.hidden_pages()
        _READER = (key, hidden, Walks(hidden, index.linking_to), _Snippets(index, hidden))
    _, hidden, walks, snippets = _READER
    found: list[tuple[str, Effort]] = []
    for qid, links in jobs:
        free = snippets.shown(links, pages_of)
        needed, shows = cover_items(links, pages_of, free)
        effort = minimum_reads(needed, shows, hidden, walks.parents, effort_cover(links, pages_of, walks, free))
        if effort is not None:
            found.append((qid, effort))
    return found


class _Snippets:
    """What a search shows without a read: the snippet of each indexed page, as a result prints it.
    A deciding record is shown when an indexed page printing it has a snippet naming the record's
    date and printing its deciding value (`_printed`: as it is, or rounded)."""

    def __init__(self, index: WebIndex, hidden: frozenset[str]) -> None:
        self._index = index
        self._hidden = hidden
        self._texts: dict[str, str] = {}

    def _snippet(self, path: str) -> str:
        text = self._texts.get(path)
        if text is None:
            text = self._texts[path] = self._index.snippet(path)
        return text

    def shown(self, links: Sequence[Link], pages_of: Mapping[str, Sequence[str]]) -> frozenset[tuple[int, str]]:
        free: set[tuple[int, str]] = set()
        for position, link in enumerate(links):
            for key, value in zip(link.keys, link.values):
                stamp = key.rsplit("|", 1)[-1]
                if not stamp or value is None:
                    continue
                for page in pages_of.get(key, ()):
                    if page in self._hidden:
                        continue
                    snippet = self._snippet(page)
                    if _names_date(snippet, stamp) and _printed(value, [snippet]):
                        free.add((position, key))
                        break
        return frozenset(free)


def _names_date(text: str, stamp: str) -> bool:
    """Whether `text` names the date `stamp` (YYYYMMDD) as a page prints it."""
    if len(stamp) != 8 or not stamp.isdigit():
        return stamp in text
    return stamp in text or f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:]}" in text


def _placed(keys: tuple[str, ...], pages_of: Mapping[str, Sequence[str]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    holding = [set(pages_of.get(k, ())) for k in keys]
    missing = tuple(k for k, found in zip(keys, holding) if not found)
    everything = set.intersection(*holding) if holding else set()
    some = (set().union(*holding) - everything) if holding else set()
    return tuple(sorted(everything) + sorted(some))[:MAX_PAGES_PER_LINK], missing


def is_lookup(question: Question) -> bool:
    """One call, one record, a number: the questions whose gold value must be printed on the web."""
    program = question.program
    return (len(program.calls) == 1 and program.extract.aggregate is None and program.extract.combine is None
            and program.extract.format.kind in ("number", "integer", "percent"))


def family_of(question: Question) -> str:
    """The shape of a question's program, for the per-family figures: lookup, window (an aggregate
    or a path over a window, its extreme day read at another field included), entity resolution
    (argmax/argmin across records that are not sessions), comparison (combine), screen (a
    cross-section within a set), pick (which of named instruments ranks first), chain (refs) or
    minute bar."""
    program = question.program
    extract = program.extract
    if any(call.refs for call in program.calls):
        return "chain"
    if getattr(extract, "pick", None) is not None:
        return "pick"
    if getattr(extract.select, "within", None) is not None:
        return "screen"
    if extract.combine is not None:
        return "comparison"
    if extract.select.mode == "minute":
        return "minute"
    if extract.aggregate in ("argmax", "argmin") and not str(extract.select.key).endswith("date"):
        return "resolution"
    if extract.aggregate is not None:
        return "window"
    return "lookup"


def summarise(entries: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Evidence presence overall, per visibility band and per family; lookups' printed gold values."""
    def share(selected: list[Mapping[str, Any]], key: str) -> dict[str, Any]:
        n = len(selected)
        hits = sum(1 for e in selected if e.get(key))
        return {"n": n, "present": hits, "share": round(hits / n, 4) if n else None}

    web = [e for e in entries.values() if not e["tools_only"]]
    lookups = [e for e in web if "value_printed" in e]
    by_band: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    by_family: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for entry in web:
        by_band[entry["band"]].append(entry)
        by_family[entry["family"]].append(entry)
    return {
        "questions": len(entries), "tools_only": len(entries) - len(web),
        "effort": effort_summary(web),
        "evidence": share(web, "present"),
        "by_band": {name: share(by_band[name], "present") for name, _, _ in BANDS},
        "by_family": {name: share(items, "present") for name, items in sorted(by_family.items())},
        "lookup_value_printed": share(lookups, "value_printed"),
        "lookup_value_printed_by_band": {name: share([e for e in lookups if e["band"] == name], "value_printed")
                                         for name, _, _ in BANDS},
    }


def _effort_figures(efforts: Sequence[int]) -> dict[str, Any]:
    if not efforts:
        return {"n": 0, "median": None, "mean": None, "p90": None, "max": None}
    ordered = sorted(efforts)
    return {"n": len(ordered), "median": statistics.median(ordered), "mean": round(statistics.fmean(ordered), 2),
            "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], "max": ordered[-1]}


def effort_summary(entries: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The distribution of effort (page reads) over questions with evidence: overall, per band,
    per family and per band and family."""
    present = [e for e in entries if e.get("effort") is not None]
    by_band: dict[str, list[int]] = defaultdict(list)
    by_family: dict[str, list[int]] = defaultdict(list)
    by_both: dict[str, list[int]] = defaultdict(list)
    for entry in present:
        by_band[entry["band"]].append(entry["effort"])
        by_family[entry["family"]].append(entry["effort"])
        by_both[f"{entry['band']}/{entry['family']}"].append(entry["effort"])
    return {"all": _effort_figures([e["effort"] for e in present]),
            "by_band": {name: _effort_figures(by_band[name]) for name, _, _ in BANDS},
            "by_family": {name: _effort_figures(v) for name, v in sorted(by_family.items())},
            "by_band_family": {name: _effort_figures(v) for name, v in sorted(by_both.items())}}


def write_evidence_map(web_dir: Path, evidence: Mapping[str, Any]) -> Path:
    path = web_dir / EVIDENCE_FILE
    temporary = web_dir / f".{EVIDENCE_FILE}.{os.getpid()}.tmp"
    temporary.write_text(json.dumps(evidence, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return path


def read_evidence_map(web_dir: Path) -> dict[str, Any] | None:
    path = web_dir / EVIDENCE_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise EvidenceError(f"{path}: unreadable evidence map ({exc})") from exc
    if not isinstance(data, dict) or data.get("version") != EVIDENCE_VERSION or "questions" not in data:
        raise EvidenceError(f"{path}: not an evidence map of version {EVIDENCE_VERSION}")
    return data


def _version_on_disk(web_dir: Path) -> Any:
    """The version of the evidence map in `web_dir` (None: none there; an unreadable map is
    reported by read_evidence_map)."""
    path = web_dir / EVIDENCE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, json.JSONDecodeError):
        return EVIDENCE_VERSION  # read_evidence_map names the damage
    return data.get("version") if isinstance(data, dict) else EVIDENCE_VERSION


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def ensure_evidence_map(web_dir: Path, pool_file: Path, gold_file: Path, *, seed: int) -> dict[str, Any]:
    """The evidence map of the web in `web_dir` for the gold in `gold_file` (built, or read when it
    is already there for this gold)."""
    from livesearch_pipeline.core.program import load_pool
    from livesearch_pipeline.core.snapshot import SnapshotStore, snapshot_date

    gold_sha = file_sha256(gold_file)
    # A map of an earlier EVIDENCE_VERSION is derived data of an older rule: built again.
    existing = read_evidence_map(web_dir) if _version_on_disk(web_dir) == EVIDENCE_VERSION else None
    if (existing is not None and existing.get("gold_sha256") == gold_sha
            and existing.get("index_fingerprint") == index_fingerprint(web_dir)):
        return existing
    day = snapshot_date(gold_file)
    if day is None:
        raise EvidenceError(f"{gold_file} is not a gold snapshot file (gold_answers_<D>.jsonl)")
    answers = SnapshotStore(gold_file.parent).read(day)
    evidence = build_evidence_map(web_dir, load_pool(pool_file), answers, seed=seed, gold_sha256=gold_sha)
    write_evidence_map(web_dir, evidence)
    return evidence


def index_fingerprint(web_dir: Path) -> str:
    """Which build of the index a map was derived from (a rebuilt web gets a new map)."""
    from livesearch_pipeline.web.index import INDEX_FILE

    stat = (web_dir / INDEX_FILE).stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"
