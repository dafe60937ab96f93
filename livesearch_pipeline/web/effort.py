"""The effort of a question: the fewest page reads that show every record deciding its answer, from
a search, counting the walk to a page the search engine did not index. Exact, so it is a lower
bound on any agent's reads.

A reader's searches are free; a page is readable when the search engine indexed it, or when a page
it read links to it (a bulletin from its archive, a long report's page from the one before it). A
set of pages is a way to answer when it shows every deciding record (some page of the set prints
each) and every page of it is readable from the others in the set: for each page a chain of links
from an indexed page through pages of the set. Effort is the size of the smallest such set.

That is a set cover with a reachability condition. It is solved exactly as a mixed-integer
program (HiGHS through `scipy.optimize.milp`): one binary per candidate page (read or not), one
flow variable per link between candidates, a root that sends one unit of flow to every page read
and may enter only through indexed pages, and a link may carry flow only out of a page read, so
every page read is reached from an indexed page through pages read. Candidates are the pages
printing a deciding record and the pages that link to them, back to indexed pages, no further
than a feasible answer's size (a longer walk cannot be part of a smaller answer).

Small cases are decided without the program: the greedy cover (`upper`, a feasible answer) of
one read, or of two reads where no single indexed page shows everything, is already the
minimum, and so is one no larger than a lower bound (`_packing`: needed items no page shows two
of, each needing its own page; one more when no indexed page shows any, the entry page). The
walks the program considers are no longer than the reads a smallest answer can spend beyond
those pages. A program that does not finish within its time limit gives HiGHS's proven lower bound
(`exact` False), never more than the minimum.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Callable, Hashable, Mapping, Sequence

import numpy as np

TIME_LIMIT_S = 10.0
# Candidate pages beyond this many: the program is not built; the greedy answer's size is
# reported with `exact` False and a lower bound from the records each page can show (never seen
# on the embedded market's web, where the largest question needs a few hundred candidates).
MAX_CANDIDATES = 6000


@dataclass(frozen=True)
class Effort:
    reads: int  # the fewest reads (a proven lower bound when not exact)
    pages: tuple[str, ...]  # a smallest set of pages, in an order a reader can open them
    exact: bool


def minimum_reads(needed: set[Hashable], shows: Mapping[str, set[Hashable]], hidden: frozenset[str] | set[str],
                  parents: Callable[[str], Sequence[str]], upper: Sequence[str] | None,
                  *, time_limit_s: float = TIME_LIMIT_S) -> Effort | None:
    """The fewest reads showing every item of `needed` (`shows`: page -> the items it prints; a
    page in `hidden` is read only through a page linking to it, `parents(page)`: the pages linking
    to it). `upper` is a feasible answer (the greedy cover), or None when there is none: then no
    set of pages shows everything and the answer is None."""
    if not needed:
        return Effort(0, (), True)
    if upper is None:
        return None
    bound = len(upper)
    if bound <= 1:
        return Effort(bound, tuple(upper), True)
    if bound == 2 and not any(needed <= items for page, items in shows.items() if page not in hidden):
        return Effort(2, tuple(upper), True)
    apart = _packing(needed, shows)
    entry = _needs_entry(needed, shows, hidden, parents)
    if apart + entry >= bound:  # the greedy answer meets a lower bound: it is a smallest one
        return Effort(bound, tuple(upper), True)
    candidates = _candidates(needed, shows, hidden, parents, bound - apart + 1)
    if candidates is None:
        return Effort(max(apart + entry, _counting_bound(needed, shows)), tuple(upper), False)
    candidates = _without_dominated(candidates, needed, shows, hidden, parents)
    return _solve(needed, shows, hidden, parents, candidates, upper, time_limit_s)


def _needs_entry(needed: set[Hashable], shows: Mapping[str, set[Hashable]], hidden: frozenset[str] | set[str],
                 parents: Callable[[str], Sequence[str]]) -> bool:
    """Whether every answer reads a page showing no needed item: some item is shown only on
    unindexed pages, each in a group of unindexed showing pages (linked among themselves) that
    only pages showing nothing needed link into (a run of bulletins entered from their archive)."""
    showing = {page for page, items in shows.items() if items & needed}
    inner = showing & set(hidden)
    group: dict[str, int] = {}
    entered: list[bool] = []  # per group: a showing page outside it links into it
    for start in sorted(inner):
        if start in group:
            continue
        number = len(entered)
        group[start] = number
        entered.append(False)
        stack = [start]
        while stack:
            page = stack.pop()
            for parent in parents(page):
                if parent in inner:
                    if parent not in group:
                        group[parent] = number
                        stack.append(parent)
                elif parent in showing:
                    entered[number] = True
    for item in needed:
        pages = [page for page in showing if item in shows[page]]
        if pages and all(page in group and not entered[group[page]] for page in pages):
            return True
    return False


def _packing(needed: set[Hashable], shows: Mapping[str, set[Hashable]]) -> int:
    """A lower bound: how many needed items no page shows two of (a greedy maximal packing, items
    shown by the fewest pages first); each needs a page of its own."""
    pages_of: dict[Hashable, list[str]] = {item: [] for item in needed}
    for page, items in shows.items():
        for item in items & needed:
            pages_of[item].append(page)
    taken: set[str] = set()
    count = 0
    for item in sorted(needed, key=lambda i: (len(pages_of[i]), repr(i))):
        if not taken.intersection(pages_of[item]):
            taken.update(pages_of[item])
            count += 1
    return count


def _candidates(needed: set[Hashable], shows: Mapping[str, set[Hashable]], hidden: frozenset[str] | set[str],
                parents: Callable[[str], Sequence[str]], bound: int) -> list[str] | None:
    """The pages that can be part of a smallest answer: those printing a needed item, and those
    linking to them within `bound - 1` links, back to indexed pages (`bound`: one more than the
    reads a smallest answer can spend on pages printing no needed item)."""
    showing = [page for page, items in shows.items() if items & needed]
    depth: dict[str, int] = {page: 0 for page in showing}
    queue = deque(page for page in showing if page in hidden)
    while queue:
        page = queue.popleft()
        if depth[page] >= bound - 1:
            continue
        for parent in parents(page):
            if parent in depth:
                continue
            depth[parent] = depth[page] + 1
            if len(depth) > MAX_CANDIDATES:
                return None
            if parent in hidden:
                queue.append(parent)
    return sorted(depth)


def _without_dominated(candidates: list[str], needed: set[Hashable], shows: Mapping[str, set[Hashable]],
                       hidden: frozenset[str] | set[str], parents: Callable[[str], Sequence[str]]) -> list[str]:
    """The candidates less the indexed pages another indexed candidate makes redundant: one that
    shows every needed item it shows and links to every candidate page it links to (the lowest
    path kept among equals: the hundreds of stock pages that each link to one bulletin archive and
    show nothing needed are one entry); and the unindexed pages showing nothing needed whose links
    an indexed candidate all has (another stock's uncrawled page linking to the same archive).
    Replacing such a page by the other in any answer keeps the answer's size and validity, so the
    minimum is unchanged."""
    children: dict[str, set[str]] = {}
    for page in candidates:
        if page in hidden:
            for parent in parents(page):
                children.setdefault(parent, set()).add(page)
    profile = {page: (frozenset(shows.get(page, set()) & needed), frozenset(children.get(page, ())))
               for page in candidates if page not in hidden}
    # Pages with the same profile: the lowest path stands for them all.
    kept: dict[tuple[frozenset, frozenset], str] = {}
    for page in sorted(profile):
        kept.setdefault(profile[page], page)
    distinct = sorted(kept.items(), key=lambda entry: (-len(entry[0][0]) - len(entry[0][1]), entry[1]))
    survivors: list[tuple[tuple[frozenset, frozenset], str]] = []
    for (items, links), page in distinct:  # larger profiles first: a dominator is seen before what it covers
        if any(items <= other[0] and links <= other[1] for other, _ in survivors):
            continue
        survivors.append(((items, links), page))
    indexed = {page for _, page in survivors}
    # An unindexed page showing nothing needed is only a step of a walk; an indexed page linking to
    # every candidate it links to is a cheaper step (one read, reachable at once).
    routes = [links for (_, links), _ in survivors]
    return [page for page in candidates
            if page in indexed or (page in hidden and (
                shows.get(page, set()) & needed
                or not any(children.get(page, set()) <= links for links in routes)))]


def _counting_bound(needed: set[Hashable], shows: Mapping[str, set[Hashable]]) -> int:
    """A lower bound without the program: the needed items over the most any one page shows."""
    widest = max((len(items & needed) for items in shows.values()), default=0)
    return math.ceil(len(needed) / widest) if widest else 0


def _solve(needed: set[Hashable], shows: Mapping[str, set[Hashable]], hidden: frozenset[str] | set[str],
           parents: Callable[[str], Sequence[str]], candidates: list[str], upper: Sequence[str],
           time_limit_s: float) -> Effort:
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_array

    index = {page: i for i, page in enumerate(candidates)}
    n = len(candidates)
    # Links between candidates into hidden pages, and the root's link into every indexed candidate.
    edges: list[tuple[int, int]] = []  # (source, target); source -1 is the root
    for page in candidates:
        target = index[page]
        if page not in hidden:
            edges.append((-1, target))
            continue
        for parent in parents(page):
            source = index.get(parent)
            if source is not None and source != target:
                edges.append((source, target))
    m = len(edges)
    # Variables: x (n binaries), then f (m flows).
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    lower: list[float] = []
    upper_bounds: list[float] = []
    row = 0
    items = sorted(needed, key=repr)
    for item in items:  # each needed item shown by a page read
        for page in candidates:
            if item in shows.get(page, ()):
                rows.append(row)
                cols.append(index[page])
                vals.append(1.0)
        lower.append(1.0)
        upper_bounds.append(np.inf)
        row += 1
    incoming: list[list[int]] = [[] for _ in range(n)]
    outgoing: list[list[int]] = [[] for _ in range(n)]
    for e, (source, target) in enumerate(edges):
        incoming[target].append(e)
        if source >= 0:
            outgoing[source].append(e)
    for v in range(n):  # flow in minus flow out equals x_v: each page read keeps one unit
        for e in incoming[v]:
            rows.append(row)
            cols.append(n + e)
            vals.append(1.0)
        for e in outgoing[v]:
            rows.append(row)
            cols.append(n + e)
            vals.append(-1.0)
        rows.append(row)
        cols.append(v)
        vals.append(-1.0)
        lower.append(0.0)
        upper_bounds.append(0.0)
        row += 1
    for e, (source, target) in enumerate(edges):  # flow only out of and into pages read
        for end in (source, target):
            if end < 0:
                continue
            rows.append(row)
            cols.append(n + e)
            vals.append(1.0)
            rows.append(row)
            cols.append(end)
            vals.append(-float(n))
            lower.append(-np.inf)
            upper_bounds.append(0.0)
            row += 1
    matrix = coo_array((vals, (rows, cols)), shape=(row, n + m)).tocsr()
    cost = np.concatenate([np.ones(n), np.zeros(m)])
    integrality = np.concatenate([np.ones(n), np.zeros(m)])
    result = milp(cost, constraints=LinearConstraint(matrix, lower, upper_bounds), integrality=integrality,
                  bounds=Bounds(np.zeros(n + m), np.concatenate([np.ones(n), np.full(m, float(n))])),
                  options={"time_limit": time_limit_s, "presolve": True})
    if result.x is None or not result.success:
        dual = getattr(result, "mip_dual_bound", None)
        proven = math.ceil(dual - 1e-6) if dual is not None and math.isfinite(dual) else _counting_bound(needed, shows)
        return Effort(min(proven, len(upper)), tuple(upper), False)
    chosen = {candidates[v] for v in range(n) if result.x[v] > 0.5}
    reads = len(chosen)
    if reads >= len(upper):  # the greedy answer was already a smallest one: keep its order
        return Effort(len(upper), tuple(upper), True)
    return Effort(reads, _reading_order(chosen, hidden, parents), True)


def _reading_order(chosen: set[str], hidden: frozenset[str] | set[str],
                   parents: Callable[[str], Sequence[str]]) -> tuple[str, ...]:
    """The chosen pages in an order a reader can open them: indexed pages first, then each hidden
    page once a page linking to it has been read (ties by path)."""
    order: list[str] = []
    read: set[str] = set()
    waiting = set(chosen)
    while waiting:
        ready = sorted(page for page in waiting
                       if page not in hidden or any(parent in read for parent in parents(page)))
        if not ready:  # cannot happen for a solution of the program; keep every page listed
            ready = sorted(waiting)
        page = ready[0]
        order.append(page)
        read.add(page)
        waiting.discard(page)
    return tuple(order)
