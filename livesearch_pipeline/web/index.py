"""The stored corpus: one SQLite file holding every page and an FTS5 full-text index over them.

Why SQLite FTS5 (measured in `benchmarks/web.py`, figures in the README): it ships with
Python, ranks by BM25, answers a query over 100,000+ pages in a few milliseconds, and keeps
pages and index in one file that is written once and then opened read-only by any number of
server threads. Chinese has no spaces between words, so the `cjk` tokenizer mode indexes each
Han character as its own token and a query's Chinese run becomes a phrase of consecutive
characters (what a unigram CJK analyzer does in Lucene-family engines). The `trigram`
tokenizer of FTS5 is the alternative the benchmark compares: it matches substrings, but needs
query terms of three characters or more (two-character Chinese words such as 市值 are lost)
and its index is several times larger.

Query semantics are a web engine's. Terms are weighed by how many pages hold them (a `terms`
table written with the index: its vocabulary with page counts). Words in more than 10% of the
pages are stop words of this corpus and are dropped; unknown words are ignored. The engine
asks for every remaining term, then, if that finds fewer results than wanted, for every rare
term (in at most 1% of the pages: names, codes, uncommon words), then for any rare term. Each
plan is ranked by BM25, the title weighing more than the body. Conjunctions of rare terms keep
queries on short posting lists, which is what holds p99 latency down on a 100,000-page
corpus. The file is built under a temporary name and renamed when complete, so a reader never
sees half an index.
"""

from __future__ import annotations

import datetime as dt
import html as html_module
import json
import os
import re
import sqlite3
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal

from livesearch_pipeline.web.corpus import Page

Tokenizer = Literal["cjk", "trigram"]
TOKENIZERS: dict[str, str] = {"cjk": "unicode61 remove_diacritics 2", "trigram": "trigram"}
INDEX_FILE = "web.sqlite"
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[^\W_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
TITLE_WEIGHT, BODY_WEIGHT = 4.0, 1.0
SELECTIVE_SHARE = 0.01
STOP_SHARE = 0.1
MAX_QUERY_TERMS = 32
COUNT_CAP = 100_000
BATCH = 2000


class WebIndexError(RuntimeError):
    """The index is missing, malformed, or was asked something it cannot answer."""


@dataclass(frozen=True)
class Hit:
    path: str
    title: str
    snippet: str
    published: dt.date
    site: str
    kind: str
    score: float


@dataclass(frozen=True)
class SearchResult:
    hits: list[Hit]
    total: int  # distinct contents matching the query (not just this page of results)


_FIGURE = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def content_key(page: Page) -> str:
    """What a page says, site and wording aside: its entity, its kind and the figures of its body.
    Mirror copies of one table on several sites share it; a restated or rounded copy does not."""
    body = page.text.split("\n", 2)[-1]
    figures = _FIGURE.findall(body)
    basis = " ".join(figures) if len(figures) >= 3 else body
    return f"{page.entity or ''}:{page.kind}:{zlib.crc32(basis.encode()):08x}"


@dataclass(frozen=True)
class StoredPage:
    path: str
    html: str
    published: dt.date


@dataclass(frozen=True)
class BuildStats:
    pages: int
    seconds: float
    bytes: int
    by_kind: dict[str, int]


_HREF = re.compile(r'<a href="(/[^"#?]+)"')


def page_links(html: str) -> list[str]:
    """The site paths a page's HTML links to (its site's home page aside)."""
    return [h for h in _HREF.findall(html) if h != "/"]


def _spaced_run(match: re.Match[str]) -> str:
    return " " + "  ".join(match.group()) + " "


def _spaced(text: str) -> str:
    """Text as the `cjk` mode indexes it: each Han character a token of its own (" 市  值 ": each
    character between two spaces, one call per run of them rather than per character)."""
    return _CJK_RUN.sub(_spaced_run, text)


def query_terms(query: str) -> list[str]:
    """Lower-cased terms of a query: words, and runs of Han characters (kept whole)."""
    return [t.lower() for t in _WORD.findall(query)][:MAX_QUERY_TERMS]


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def fts_phrases(query: str, tokenizer: Tokenizer) -> list[tuple[str, tuple[str, ...]]]:
    """The query's searchable terms: (FTS5 phrase, the index tokens it is made of), in order."""
    phrases: dict[str, tuple[str, ...]] = {}
    for term in query_terms(query):
        if tokenizer == "cjk":
            tokens = tuple(term) if _CJK_RUN.fullmatch(term) else (term,)
            phrases.setdefault(_quote(" ".join(tokens)), tokens)
        elif len(term) >= 3:  # the trigram tokenizer cannot match anything shorter
            phrases.setdefault(_quote(term), tuple(term[i: i + 3] for i in range(len(term) - 2)))
    return list(phrases.items())


def fts_expressions(query: str, tokenizer: Tokenizer) -> tuple[str | None, str | None]:
    """(all-terms expression, any-term expression) in FTS5 syntax, None when nothing is searchable."""
    phrases = [phrase for phrase, _ in fts_phrases(query, tokenizer)]
    if not phrases:
        return None, None
    return " AND ".join(phrases), " OR ".join(phrases)


def search_plans(phrases: list[tuple[str, int]], pages: int) -> list[str]:
    """FTS5 expressions to try in order, from (phrase, estimated pages holding it).

    Words in more than STOP_SHARE of the pages ("the", "price", "CNY" here) are stop words by
    the corpus' own statistics: they barely move BM25 and would make every plan walk most of
    the index, so they are dropped unless nothing else is left."""
    known = [(phrase, count) for phrase, count in phrases if count > 0]
    if not known:
        return []
    kept = [(phrase, count) for phrase, count in known if count <= STOP_SHARE * pages] or known
    plans = [" AND ".join(phrase for phrase, _ in kept)]
    rare = [phrase for phrase, count in kept if count <= SELECTIVE_SHARE * pages]
    if rare:
        plans += [" AND ".join(rare), " OR ".join(rare)]
    else:
        plans.append(" OR ".join(phrase for phrase, _ in kept))
    return list(dict.fromkeys(plans))


@dataclass(frozen=True, slots=True)
class PreparedPage:
    """A page as the index stores it, worked out from a `Page` wherever it was generated (a worker
    process prepares its own pages, so the process writing the index only inserts them): the
    `pages` row but its id, the full-text row (None: a page the engine has not indexed), the
    site paths it links to (once each, in order) and the records it prints."""

    path: str
    kind: str
    tokenizer: str
    row: tuple
    fts: tuple[str, str] | None
    links: tuple[str, ...]
    records: tuple[str, ...]

    def __reduce__(self) -> tuple:
        # Pickled as its fields (from a worker to the building process), not as a state dict.
        return type(self), tuple([getattr(self, name) for name in self.__slots__])


def prepare_page(page: Page, tokenizer: Tokenizer = "cjk") -> PreparedPage:
    """What `build_index` stores of `page`."""
    if tokenizer not in TOKENIZERS:
        raise WebIndexError(f"unknown tokenizer {tokenizer!r}; expected one of {', '.join(TOKENIZERS)}")
    row = (page.path, page.site, page.kind, page.lang, page.title, page.published.isoformat(), page.entity,
           page.snippet, zlib.compress(page.html.encode("utf-8"), 6), content_key(page))
    fts = None
    if page.indexed:
        fts = (_spaced(page.title), _spaced(page.text)) if tokenizer == "cjk" else (page.title, page.text)
    return PreparedPage(page.path, page.kind, tokenizer, row, fts, tuple(dict.fromkeys(page_links(page.html))), page.records)


def write_term_table(connection: sqlite3.Connection) -> None:
    """The vocabulary with its page counts, as a plain table (fts5vocab recounts on every read)."""
    connection.executescript("""
        CREATE VIRTUAL TABLE temp.vocab_build USING fts5vocab(main, fts, row);
        CREATE TABLE terms(term TEXT PRIMARY KEY, pages INTEGER NOT NULL) WITHOUT ROWID;
        INSERT INTO terms SELECT term, doc FROM temp.vocab_build;
        DROP TABLE temp.vocab_build;
    """)


def build_index(pages: Iterable[Page | PreparedPage], directory: Path, *, identity: str, tokenizer: Tokenizer = "cjk",
                extra_meta: dict[str, object] | None = None) -> BuildStats:
    """Write `directory/web.sqlite` from `pages` (a path may appear once), each a `Page` or the
    `PreparedPage` that `prepare_page(page, tokenizer)` made of it (the same rows either way).
    Atomic: a temporary file is renamed into place only when the index is complete."""
    if tokenizer not in TOKENIZERS:
        raise WebIndexError(f"unknown tokenizer {tokenizer!r}; expected one of {', '.join(TOKENIZERS)}")
    started = time.monotonic()
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / INDEX_FILE
    remove_stale_temporaries(directory)
    temporary = directory / f".{INDEX_FILE}.{os.getpid()}.tmp"
    temporary.unlink(missing_ok=True)
    connection = sqlite3.connect(temporary)
    by_kind: dict[str, int] = {}
    count = 0
    try:
        connection.executescript(f"""
            PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=8192;
            CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE pages(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, site TEXT NOT NULL,
                               kind TEXT NOT NULL, lang TEXT NOT NULL, title TEXT NOT NULL,
                               published TEXT NOT NULL, entity TEXT, snippet TEXT NOT NULL, html BLOB NOT NULL,
                               content TEXT NOT NULL);
            CREATE TABLE records(key TEXT NOT NULL, page INTEGER NOT NULL);
            CREATE TABLE hidden(path TEXT PRIMARY KEY) WITHOUT ROWID;
            CREATE TEMP TABLE all_links(src INTEGER NOT NULL, dst TEXT NOT NULL);
            CREATE VIRTUAL TABLE fts USING fts5(title, body, content='', tokenize='{TOKENIZERS[tokenizer]}');
        """)
        rows: list[tuple] = []
        texts: list[tuple] = []
        keys: list[tuple[str, int]] = []
        edges: list[tuple[int, str]] = []
        hidden: list[tuple[str]] = []

        def flush() -> None:
            connection.executemany("INSERT INTO pages VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
            connection.executemany("INSERT INTO fts(rowid, title, body) VALUES (?,?,?)", texts)
            connection.executemany("INSERT INTO records VALUES (?,?)", keys)
            connection.executemany("INSERT INTO all_links VALUES (?,?)", edges)
            connection.executemany("INSERT INTO hidden VALUES (?)", hidden)
            rows.clear()
            texts.clear()
            keys.clear()
            edges.clear()
            hidden.clear()

        seen: set[str] = set()
        for item in pages:
            page = item if isinstance(item, PreparedPage) else prepare_page(item, tokenizer)
            if page.tokenizer != tokenizer:
                raise WebIndexError(f"{page.path} was prepared for the {page.tokenizer} tokenizer, not {tokenizer}")
            if page.path in seen:
                raise WebIndexError(f"corpus for {directory} holds the path {page.path} twice")
            seen.add(page.path)
            count += 1
            by_kind[page.kind] = by_kind.get(page.kind, 0) + 1
            rows.append((count, *page.row))
            if page.fts is not None:
                texts.append((count, *page.fts))
            else:
                hidden.append((page.path,))
            edges.extend((count, href) for href in page.links)
            keys.extend((key, count) for key in page.records)
            if len(rows) >= BATCH:
                flush()
        flush()
        connection.execute("CREATE INDEX records_by_key ON records(key)")
        # The links into pages the engine did not index: what a reader walks to reach them
        # (the evidence map's effort); links into indexed pages are never needed for that.
        connection.executescript("""
            CREATE TABLE links(dst TEXT NOT NULL, src INTEGER NOT NULL);
            INSERT INTO links SELECT dst, src FROM temp.all_links WHERE dst IN (SELECT path FROM hidden);
            DROP TABLE temp.all_links;
            CREATE INDEX links_by_dst ON links(dst);
        """)
        connection.execute("INSERT INTO fts(fts) VALUES('optimize')")
        write_term_table(connection)
        meta = {"identity": identity, "tokenizer": tokenizer, "pages": count, "by_kind": by_kind,
                **(extra_meta or {})}
        connection.executemany("INSERT INTO meta VALUES (?, ?)",
                               [(k, json.dumps(v, sort_keys=True)) for k, v in meta.items()])
        connection.commit()
    except BaseException:
        connection.close()
        temporary.unlink(missing_ok=True)
        raise
    connection.close()
    os.replace(temporary, final)
    return BuildStats(pages=count, seconds=time.monotonic() - started, bytes=final.stat().st_size,
                      by_kind=dict(sorted(by_kind.items())))


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def remove_stale_temporaries(directory: Path) -> list[Path]:
    """Remove `.web.sqlite.<pid>.tmp` files of builds whose process is gone (a killed build-web
    leaves its ~30 MB temporary behind); a live build's file is left alone. Returns those removed."""
    removed = []
    for path in Path(directory).glob(f".{INDEX_FILE}.*.tmp"):
        pid = path.name.removeprefix(f".{INDEX_FILE}.").removesuffix(".tmp")
        if pid.isdigit() and int(pid) != os.getpid() and _process_alive(int(pid)):
            continue
        path.unlink(missing_ok=True)
        removed.append(path)
    return removed


class WebIndex:
    """Read-only access to a built index; safe to share between threads (one connection each, every one
    closed by `close`)."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / INDEX_FILE
        self.directory = Path(directory)
        if not self.path.is_file():
            raise WebIndexError(f"no web index at {self.path}: build the corpus first "
                                "(`livesearch build-web --date D` or the `web_corpus` asset of D)")
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._opened_lock = threading.Lock()
        self._df: dict[str, int] = {}  # pages per token (a benign cache shared by threads)
        try:
            meta = dict(self._connection().execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            raise WebIndexError(f"the web index {self.path} is damaged ({exc}); rebuild it: livesearch build-web "
                                f"--date {directory.name} (or materialise web_corpus of that day)") from None
        try:
            self.meta = {k: json.loads(v) for k, v in meta.items()}
            self.tokenizer: Tokenizer = self.meta["tokenizer"]
            self.identity: str = self.meta["identity"]
        except (KeyError, json.JSONDecodeError) as exc:
            raise WebIndexError(f"{self.path}: malformed meta table ({exc})") from exc

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            try:
                connection = sqlite3.connect(f"file:{self.path}?mode=ro&immutable=1", uri=True,
                                             check_same_thread=False)
            except sqlite3.Error as exc:
                raise WebIndexError(f"cannot open {self.path}: {exc}") from exc
            self._local.connection = connection
            with self._opened_lock:
                self._opened.append(connection)
        return connection

    def close(self) -> None:
        """Close every connection any thread opened (a server calls it once its workers have stopped)."""
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for connection in opened:
            connection.close()
        self._local = threading.local()

    @property
    def open_connections(self) -> int:
        with self._opened_lock:
            return len(self._opened)

    def _pages_with(self, token: str) -> int:
        cached = self._df.get(token)
        if cached is None:
            row = self._connection().execute("SELECT pages FROM terms WHERE term = ?", (token,)).fetchone()
            cached = self._df[token] = int(row[0]) if row else 0
        return cached

    @property
    def pages(self) -> int:
        return int(self.meta["pages"])

    @property
    def searchable_pages(self) -> int:
        """The pages the engine indexed (those a term's page share is a share of): every page but
        the unindexed ones (bulletins, archives, uncrawled deep pages, a long report's continuation
        pages)."""
        cached = getattr(self, "_searchable", None)
        if cached is None:
            hidden = (self._connection().execute("SELECT count(*) FROM hidden").fetchone()[0]
                      if self._has_table("hidden") else 0)
            cached = self._searchable = max(1, self.pages - int(hidden))
        return cached

    def search(self, query: str, *, pageno: int = 1, per_page: int = 10) -> list[Hit]:
        return self.search_results(query, pageno=pageno, per_page=per_page).hits

    def search_results(self, query: str, *, pageno: int = 1, per_page: int = 10,
                       since: dt.date | None = None) -> SearchResult:
        """One page of results, one per content (mirror copies of a table collapse to the best
        ranked), with the number of distinct contents the query matches; `since`: only pages
        published on or after that day."""
        if pageno < 1 or per_page < 1:
            raise WebIndexError(f"pageno and per_page must be positive, got {pageno} and {per_page}")
        # A phrase is at most as common as its rarest token: that bounds the pages holding it.
        phrases = [(phrase, min(self._pages_with(token) for token in tokens))
                   for phrase, tokens in fts_phrases(query, self.tokenizer)]
        wanted = pageno * per_page
        hits: list[Hit] = []
        contents: set[str] = set()
        last: str | None = None
        for expression in search_plans(phrases, self.searchable_pages):
            last = expression
            seen = {h.path for h in hits}
            for hit, content in self._run(expression, 3 * wanted + 10, since):
                if hit.path not in seen and content not in contents:
                    contents.add(content)
                    hits.append(hit)
            if len(hits) >= wanted:
                break
        total = self._count(last, since) if last is not None else 0
        return SearchResult(hits[(pageno - 1) * per_page: wanted], max(total, len(hits)))

    def _run(self, expression: str, limit: int, since: dt.date | None = None) -> list[tuple[Hit, str]]:
        if since is None:
            sql = (f"SELECT p.path, p.title, p.snippet, p.published, p.site, p.kind, f.score, p.content FROM "
                   f"(SELECT rowid, bm25(fts, {TITLE_WEIGHT}, {BODY_WEIGHT}) AS score FROM fts WHERE fts MATCH ? "
                   f"ORDER BY score LIMIT ?) AS f JOIN pages AS p ON p.id = f.rowid ORDER BY f.score, p.id")
            args: tuple = (expression, limit)
        else:
            sql = (f"SELECT p.path, p.title, p.snippet, p.published, p.site, p.kind, "
                   f"bm25(fts, {TITLE_WEIGHT}, {BODY_WEIGHT}) AS score, p.content FROM fts JOIN pages AS p "
                   f"ON p.id = fts.rowid WHERE fts MATCH ? AND p.published >= ? ORDER BY score, p.id LIMIT ?")
            args = (expression, since.isoformat(), limit)
        try:
            rows = self._connection().execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            raise WebIndexError(f"search expression {expression!r} failed: {exc}") from exc
        return [(Hit(path, title, snippet, dt.date.fromisoformat(published), site, kind, -score), content)
                for path, title, snippet, published, site, kind, score, content in rows]

    def _count(self, expression: str, since: dt.date | None) -> int:
        """Distinct contents matching `expression` (counted up to COUNT_CAP)."""
        where = "fts MATCH ?" + (" AND p.published >= ?" if since is not None else "")
        args: tuple = (expression,) + ((since.isoformat(),) if since is not None else ())
        sql = (f"SELECT count(*) FROM (SELECT DISTINCT p.content FROM fts JOIN pages AS p ON p.id = fts.rowid "
               f"WHERE {where} LIMIT {COUNT_CAP})")
        try:
            return int(self._connection().execute(sql, args).fetchone()[0])
        except sqlite3.OperationalError as exc:
            raise WebIndexError(f"search expression {expression!r} failed: {exc}") from exc

    @property
    def clock(self) -> dt.date | None:
        value = self.meta.get("clock")
        return dt.date.fromisoformat(value) if isinstance(value, str) else None

    def snippet(self, path: str) -> str:
        """The snippet a search result shows for the page at `path` ("" when there is none)."""
        row = self._connection().execute("SELECT snippet FROM pages WHERE path = ?", (path,)).fetchone()
        return str(row[0]) if row is not None else ""

    def pages_with_records(self, keys: Iterable[str]) -> dict[str, list[str]]:
        """For each record key, the paths of the pages printing that record."""
        found: dict[str, list[str]] = {}
        connection = self._connection()
        for key in dict.fromkeys(keys):
            rows = connection.execute("SELECT p.path FROM records AS r JOIN pages AS p ON p.id = r.page "
                                      "WHERE r.key = ? ORDER BY p.id", (key,)).fetchall()
            found[key] = [row[0] for row in rows]
        return found

    def _has_table(self, name: str) -> bool:
        return self._connection().execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None

    def hidden_pages(self) -> frozenset[str]:
        """The paths of the pages the engine did not index (empty for an index built before the
        link tables were written)."""
        connection = self._connection()
        if not self._has_table("hidden"):
            return frozenset()
        return frozenset(row[0] for row in connection.execute("SELECT path FROM hidden"))

    def linking_to(self, path: str) -> list[str]:
        """The paths of the pages linking to an unindexed page (in page order)."""
        connection = self._connection()
        if not self._has_table("links"):
            return []
        rows = connection.execute("SELECT p.path FROM links AS l JOIN pages AS p ON p.id = l.src WHERE l.dst = ? "
                                  "ORDER BY l.src", (path,)).fetchall()
        return [row[0] for row in rows]

    def page(self, path: str) -> StoredPage | None:
        """The stored page at `path` (None when there is none); WebIndexError naming the rebuild command
        when its stored bytes are damaged."""
        try:
            row = self._connection().execute("SELECT html, published FROM pages WHERE path = ?", (path,)).fetchone()
            if row is None:
                return None
            return StoredPage(path, zlib.decompress(row[0]).decode("utf-8"), dt.date.fromisoformat(row[1]))
        except (zlib.error, UnicodeDecodeError, ValueError, TypeError, sqlite3.DatabaseError) as exc:
            raise WebIndexError(f"the page {path} of the web index {self.path} is damaged ({type(exc).__name__}: "
                                f"{exc}); rebuild it: livesearch build-web --date {self.directory.name} (or "
                                "materialise web_corpus of that day)") from None

    def page_text(self, path: str) -> str:
        """The visible text of a stored page (tags dropped, cells separated by spaces); '' when absent."""
        stored = self.page(path)
        if stored is None:
            return ""
        body = stored.html.split("</head>", 1)[-1]
        return html_module.unescape(re.sub(r"<[^>]+>", " ", body))

    def sites(self) -> list[tuple[str, int]]:
        return self._connection().execute("SELECT site, count(*) FROM pages GROUP BY site ORDER BY site").fetchall()
