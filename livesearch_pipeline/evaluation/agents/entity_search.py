"""Finding a named entity's code through a search, as an analyst does (issue 39).

A question may name its instrument without a code: its short name (翊昶电子), the English name of a
Chinese company (Yichang Electronics), a former name ("the company formerly named 筠昶科技"). The web
baselines read a question by its codes, so before anything else `with_codes` finds each name of a
code-free question on the web: it searches the name, keeps the results whose title or snippet holds
it, and takes the code their titles print — one code, or the name is not resolved. A former name
is on no title: the name-history page a search returns for it is read (one read of the budget) to
see the name in its table. `search` and `read` are the agent's own, on the question's budget: they
count and record each call (agents/budget.py); `Resolved.trace` holds what was found. The question
is then read as if it gave the codes ("翊昶电子 (600580.SH)" in both texts), with `entity` the code
the web gave for its first name: never the served record's.
A question whose texts give codes is read as it is (`entity` the first code it gives).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from livesearch_pipeline.core.models import ServedQuestion
from livesearch_pipeline.evaluation.agents.reading import ParsedPage

# An instrument's code as the texts and titles print it: A-shares, indices and funds, Hong Kong
# stocks, a US ticker (letters only, in parentheses after its name).
_CODE = r"\d{6}\.(?:SH|SZ|BJ|OF|SI)|\d{5}\.HK|[A-Z]{1,5}"
_CODE_IN_PARENS = re.compile(rf"[（(]\s*({_CODE})\s*[）)]")
_DOTTED = re.compile(r"(?<![0-9A-Za-z])(\d{6}\.(?:SH|SZ|BJ|OF|SI)|\d{5}\.HK)(?![0-9A-Za-z])")
# Parenthesised acronyms that are not tickers.
_ACRONYMS = frozenset({"TTM", "CPI", "PPI", "PMI", "GDP", "LPR", "NAV", "EPS", "MACD", "KDJ", "RSI", "DIF", "DEA",
                       "ETF", "CMT", "EMA", "ROE", "ROA", "SHIBOR", "HIBOR", "LOF", "QDII", "USD", "CNY", "HKD"})
_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"|‘[^’]*’")
_FORMER_EN = re.compile(r"the company formerly named ([^\s,?]+)")
_CJK_RUN = re.compile(r"[\u3400-\u9fff][\u3400-\u9fffA-Za-z0-9]*")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9&'.\-]*")
_TICKER = re.compile(r"(?<![\d.,:])\d{5,6}(?![\d.,:]\d|\d)")
# Capitalised words of the question templates: never a name, nor part of one.
_STOP = frozenset("""
What Which On By For Take Among Of How In The A An Answer Give Here Trading Count It If Its That Is Was Were
NAV CNY HKD USD EPS TTM MACD DIF DEA KDJ RSI EMA Bollinger YYYY-MM-DD R&D CPI PPI PMI GDP LPR SHIBOR HIBOR CMT
Shanghai Shenzhen Beijing Hong Kong New York Stock Exchange Exchange's Connect Nasdaq China Chinese US Treasury
DEA. DIF. KDJ. RSI. MACD. Here. A. M0 M1 M2 Exchange.
""".split())

INSTRUMENT_CLASSES = frozenset({"cn_equity", "hk_equity", "us_equity", "index", "fund"})
Search = Callable[[str], Awaitable[list[dict[str, Any]]]]
Read = Callable[[str], Awaitable[ParsedPage]]


@dataclass
class Resolved:
    """A question read with codes: the question (None when a name fits no single entity on the
    web), what was found (trace entries), the reads spent, the paths the searches showed."""

    question: ServedQuestion | None
    trace: list[dict[str, Any]] = field(default_factory=list)
    reads: int = 0
    seen: set[str] = field(default_factory=set)
    reason: str | None = None


def _fold(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text).casefold())


def given_codes(text: str) -> list[str]:
    """The instrument codes a text gives its instruments, in order: a code in parentheses after a
    name ("翊昶电子 (600580.SH)"). A code on its own names another record (a fund's constituent)."""
    return list(dict.fromkeys(m.group(1) for m in _CODE_IN_PARENS.finditer(text) if m.group(1) not in _ACRONYMS))


def title_code(title: str) -> str | None:
    """The code a result's title gives its entity: in parentheses, else the first dotted code."""
    codes = given_codes(title) or [m.group(1) for m in _DOTTED.finditer(title)]
    return codes[0] if codes else None


def name_mentions(text: str) -> list[tuple[str, bool]]:
    """The names a code-free English text gives, in order: a former name ("the company formerly
    named X"), a Chinese name (a run of Chinese characters, with the letters and digits that end
    it: 骞澜科技ETF), an English name (a run of capitalised words that are not the template's), each
    with whether it must be a name (a former or Chinese name; a run of capitalised words may be
    none). Quoted series (a shareholder, a segment) and codes are not names of the instrument."""
    bare = _QUOTED.sub(lambda m: " " * len(m.group(0)), text)
    bare = _DOTTED.sub(lambda m: " " * len(m.group(0)), bare)
    found: list[tuple[int, str, bool]] = []
    taken: list[tuple[int, int]] = []
    for m in _FORMER_EN.finditer(bare):
        found.append((m.start(1), m.group(1), True))
        taken.append((m.start(1), m.end(1)))
    for m in _CJK_RUN.finditer(bare):
        if not any(a <= m.start() < b for a, b in taken):
            found.append((m.start(), m.group(0), True))
    # A stock's ticker alone (600123, 00721): a code without its exchange, found like a name.
    found += [(m.start(), m.group(0), True) for m in _TICKER.finditer(bare)]
    run: list[tuple[int, str]] = []

    def close() -> None:
        # A run of capitalised words, without the template's words at its ends ("On", "What", a
        # calendar's "Shanghai Stock Exchange"); one inside a name stays ("Lanji Shenzhen Composite Index").
        while run and run[0][1] in _STOP:
            run.pop(0)
        while run and run[-1][1] in _STOP:
            run.pop()
        if run:
            found.append((run[0][0], " ".join(word for _, word in run), False))
        run.clear()

    for m in _TOKEN.finditer(bare):
        word = m.group(0).rstrip(".'")
        gap = bare[run[-1][0] + len(run[-1][1]):m.start()] if run else " "
        if not word[0].isupper() or gap.strip() or any(a <= m.start() < b for a, b in taken):
            close()
        if word[0].isupper() and not any(a <= m.start() < b for a, b in taken):
            run.append((m.start(), word))
    close()
    return [(name, must) for _, name, must in sorted(found)]


def _codes_of(result: dict[str, Any], mention: str) -> list[str]:
    """The code a result's title gives, when its title or snippet holds the name."""
    title = str(result.get("title", ""))
    content = str(result.get("snippet", result.get("content", "")))  # WebTools: "snippet"; the SearXNG API: "content"
    if _fold(mention) not in _fold(title) and _fold(mention) not in _fold(content):
        return []
    code = title_code(title)
    return [code] if code else []


def _chinese_names(results: list[dict[str, Any]], code: str) -> list[str]:
    """The Chinese names the results about `code` print in their titles."""
    names: list[str] = []
    for r in results:
        title = str(r.get("title", ""))
        if code in title:
            names += [n for n in _CJK_RUN.findall(title) if len(n) >= 2]
    return sorted(dict.fromkeys(names), key=len, reverse=True)


async def _resolve(mention: str, search: Search, read: Read, state: Resolved) -> tuple[str, list[dict]] | None:
    results = await search(mention)
    state.seen.update(str(r.get("url", "")) for r in results)
    codes = list(dict.fromkeys(code for r in results for code in _codes_of(r, mention)))
    if len(codes) == 1:
        return codes[0], results
    if len(codes) > 1:
        # A name that is exactly one entity's (its title starts with it) over the ones that contain it.
        exact = list(dict.fromkeys(code for r in results for code in _codes_of(r, mention)
                                   if _fold(str(r.get("title", ""))).startswith(_fold(mention) + "（")
                                   or _fold(str(r.get("title", ""))).startswith(_fold(mention) + "(")))
        return (exact[0], results) if len(exact) == 1 else None
    # A former name is on no title: the name history a search returns for it shows it.
    for r in results:
        url, title = str(r.get("url", "")), str(r.get("title", ""))
        if "/namechange/" not in url or not title_code(title):
            continue
        page = await read(url)
        state.reads += 1
        if any(_fold(mention) == _fold(cell) for rows in page.tables for row in rows for cell in row):
            return title_code(title), results
    return None


def _insert(text: str, name: str, code: str, zh: bool) -> str:
    """The text with the code after the first mention of `name`."""
    at = text.find(name)
    if at < 0:
        return text
    end = at + len(name)
    return f"{text[:end]}{'（' + code + '）' if zh else ' (' + code + ')'}{text[end:]}"


async def with_codes(question: ServedQuestion, search: Search, read: Read) -> Resolved:
    """The question read with codes (module doc)."""
    codes = given_codes(question.question)
    if codes:
        return Resolved(question.model_copy(update={"entity": codes[0]}))
    if question.asset_class not in INSTRUMENT_CLASSES:
        # A market-wide series (a rate, a statistic, an FX pair) is named by its series, not by a code.
        return Resolved(question)
    state = Resolved(None)
    mentions = name_mentions(question.question)
    listed = [m.group(1) for m in _DOTTED.finditer(question.question)]
    if not mentions and listed:
        # Instruments named by their codes alone ("Of the indices 000300.SH, 399001.SZ and …").
        return Resolved(question.model_copy(update={"entity": listed[0]}))
    en, zh = question.question, question.question_zh
    found: list[str] = []
    for mention, must in mentions:
        resolved = await _resolve(mention, search, read, state)
        if resolved is None and must:
            # A name the web does not tie to one entity: no reading of the question can be trusted.
            found = []
            break
        if resolved is None:
            continue
        code, results = resolved
        found.append(code)
        en = _insert(en, mention, code, zh=False)
        if zh:
            if mention in zh:
                zh = _insert(zh, mention, code, zh=True)
            else:
                for name in _chinese_names(results, code):
                    if name in zh:
                        zh = _insert(zh, name, code, zh=True)
                        break
    if not found:
        state.reason = f"no single entity found on the web for the names {[m for m, _ in mentions]}"
        state.trace.append({"type": "entity", "found": None, "reason": state.reason})
        return state
    state.trace.append({"type": "entity", "names": [m for m, _ in mentions], "codes": found})
    state.question = question.model_copy(update={"question": en, "question_zh": zh, "entity": found[0]})
    return state
