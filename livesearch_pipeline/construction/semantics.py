"""Semantic rules of enumeration (issue 20): quantities a professional would reject.

The mechanical filters of stage 4 drop what cannot be asked (identifiers, constants, echoes);
these rules drop what should not be asked although it can be computed:

- an aggregate over a window of a field that is not a traded value of its own: a copy of another
  record's value (`derived`: the previous close) or a rule-set limit (`bound`: the limit-up and
  limit-down prices);
- a sum over a window of a balance or level (`stock`, `level`): sixty daily margin balances, or
  sixty closes, add up to nothing anyone measures;
- an aggregate of a session's extreme other than its own extreme (`daily_high`: only the highest
  high of the window, or its day; `daily_low` likewise) and any aggregate of a vendor's
  bookkeeping number (`artefact`: the count of price ticks);
- the day of a window's extreme answered with a derived, bound or artefact field of that day
  (the extreme's own record, or another tool's record on the day the extreme resolves)
  ("the previous close on the day it closed highest");
- a label question whose answer the entity's name gives away (the industry 建工 of 渺珩建工);
- (issue 28) any window aggregate of a session's opening print (`session_open`: no open-to-open
  change, no average opening ask) and any change of an FX ask or bid (kind `fx`): nobody asks
  those;
- (issue 28) a selection pinned on a person by name and position in a management table (two or
  more label keys in `where`: "the shares held for the name 暨舒桐 for the position 总经理"):
  the same person is listed under several posts and the question reads as nonsense;
- (issue 28, executed in core/extract.py) a ratio or percentage over a non-positive base (a
  payout ratio against a loss per share): the outcome is empty "not meaningful:", counted as
  `semantic_nonpositive_base` by enumeration and `dynamics_not_meaningful` by the replay;
- (issue 28) an adjusted return whose adjustment factor is constant over its window is a plain
  return in disguise: enumeration executes it without its `times` join too (`plain_twin`) and
  drops it when both answers agree (`semantic_adjustment_constant`).

Units are not a rule here: a count the tool reports in lots (A-share `vol`) is converted by the
answer format's scale (lots × 100 = shares, construction/formats.py), so the question asks for
what the format states.

What a field *is* comes from the reviewed field lexicon (`quantity` of each entry, or its kind's
default; dataservice/lexicon.yaml), never from a list of names here. Each rule returns the
filter name its rejection is counted under in the enumeration filters table.
"""

from __future__ import annotations

import re
import unicodedata

from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.lexicon import Lexicon, load_lexicon
from livesearch_pipeline.core.models import Program

# Aggregates a session's extreme keeps its meaning under (the window's extreme, or its day).
EXTREME_AGGREGATES = {"daily_high": frozenset({"max", "argmax"}), "daily_low": frozenset({"min", "argmin"})}
# Quantities that are no traded value of their own: never an aggregate, nor the answer on the
# day of a window's extreme.
NOT_TRADED = frozenset({"derived", "bound", "artefact"})
# Quantities no window aggregate may read: those, and a session's opening print (its value on a
# given day, the day of an extreme included, is a fair question; its change or mean is not).
NO_AGGREGATE = NOT_TRADED | {"session_open"}
# Aggregates that are a change over the window (core.program.CHANGE_AGGREGATES).
CHANGES = frozenset({"change", "pct_change"})
# Quantities that never add up over a window.
NO_SUM = frozenset({"stock", "level"})

_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[a-z0-9]+")
# English words that name nothing about an entity by themselves.
_STOP_WORDS = frozenset({"and", "the", "of", "co", "ltd", "inc", "group", "holdings", "corp", "company", "limited"})


def quantity_of(lexicon: Lexicon, tool: str, field: str) -> str | None:
    entry = lexicon.entry(tool, field)
    return None if entry is None else entry.quantity_of


def aggregate_reason(tool: str, field: str, aggregate: str | None, lexicon: Lexicon | None = None) -> str | None:
    """The filter name that rejects `aggregate` over `field` of `tool`, or None when it is sound."""
    if aggregate is None:
        return None
    entry = (lexicon or load_lexicon()).entry(tool, field)
    quantity = None if entry is None else entry.quantity_of
    if entry is not None and entry.kind == "fx" and aggregate in CHANGES:
        return "semantic_change_of_fx_quote"
    if quantity is None:
        return None
    if quantity in NO_AGGREGATE:
        return f"semantic_aggregate_of_{quantity}"
    if aggregate == "sum" and quantity in NO_SUM:
        return f"semantic_sum_of_{quantity}"
    allowed = EXTREME_AGGREGATES.get(quantity)
    if allowed is not None and aggregate not in allowed:
        return "semantic_aggregate_of_daily_extreme"
    return None


def program_reason(program: Program, lexicon: Lexicon | None = None) -> str | None:
    """The first semantic rule a program's window aggregates break, or None.

    Reads the extractor and the other side of a `combine`, each on the tool of the call it reads.
    """
    lexicon = lexicon or load_lexicon()
    tools = {c.id: c.tool for c in program.calls}
    extract = program.extract
    # A minute-bar series read other than at a named minute: its `latest` record is the session's
    # last minute, whose open, high or volume is not the session's ("its opening price on the day
    # it closed highest" answered with the 16:00 bar's open). Minute questions name their bar.
    for ref in [r for _, r in extract.refs()] + [r for c in program.calls for r in c.refs.values()]:
        if "%H" in ref.select.key_fmt and ref.select.mode != "minute":
            return "semantic_minute_bar_read_as_the_session"
    reads = [(extract.call, extract.field, extract.aggregate)]
    if extract.combine is not None:
        other = extract.combine.other
        reads.append((other.call, other.field, other.aggregate))
    for call, field, aggregate in reads:
        tool = tools.get(call)
        if tool is None or field is None:
            continue
        reason = aggregate_reason(tool, field, aggregate, lexicon)
        if reason is not None:
            return reason
    # The day of a window's extreme answers with a field of that day's record: a copy or a rule-set
    # limit of it ("the previous close on the day it closed highest") is not a figure anyone asks,
    # whether the record is the extreme's own (`arg_field`) or another tool's record on the day a
    # reference resolves by argmax/argmin (a two-call program dated by the highest close).
    on_extreme_day: list[tuple[str, str]] = []
    if extract.aggregate in ("argmax", "argmin") and extract.arg_field is not None:
        on_extreme_day.append((extract.call, extract.arg_field))
    # A reference without `arg_field` resolves the extreme's time key (its day); one with it
    # resolves another field of that record (a fund's top holding), not a day.
    dated_by_extreme = {c.id for c in program.calls
                        if any(ref.aggregate in ("argmax", "argmin") and ref.arg_field is None
                               for ref in c.refs.values())}
    on_extreme_day += [(ref.call, ref.field) for _, ref in extract.refs()
                       if ref.call in dated_by_extreme and ref.aggregate is None and ref.field is not None]
    # The extreme's own quantity read back on its day ("its closing price on the day it closed
    # highest") is the window's extreme itself: one call with one aggregate, dressed as two steps.
    extremes_dating_the_read = {ref.field for c in program.calls if c.id == extract.call for ref in c.refs.values()
                                if ref.aggregate in ("argmax", "argmin") and ref.arg_field is None}
    if ((extract.aggregate is None and extract.field in extremes_dating_the_read)
            or (extract.aggregate in ("argmax", "argmin") and extract.arg_field == extract.field)):
        return "semantic_extreme_read_back"
    for call, field in on_extreme_day:
        tool = tools.get(call)
        quantity = quantity_of(lexicon, tool, field) if tool is not None else None
        if quantity in NOT_TRADED:
            return f"semantic_arg_field_of_{quantity}"
    return None


def selection_reason(program: Program, catalog: Catalog) -> str | None:
    """The filter name that rejects a selection no one would ask for, or None: a `where` that pins
    a person by name and position (two or more label fields of a management table's record)."""
    tools = {c.id: c.tool for c in program.calls}
    for _, ref in program.extract.refs():
        where = ref.select.where
        tool = catalog.get(tools.get(ref.call, ""))
        if tool is None or len(where) < 2:
            continue
        labels = [k for k in where if (f := tool.field(k)) is not None and f.role == "label"]
        if len(labels) >= 2:
            return "semantic_select_on_person_and_position"
    return None


def plain_twin(program: Program) -> Program | None:
    """The program without its `times` join (the unadjusted return), or None when it has none."""
    if program.extract.times is None:
        return None
    return program.model_copy(update={"extract": program.extract.model_copy(update={"times": None})})


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().strip()


def name_gives_away(entity_name: str | None, answer: str | None) -> bool:
    """Whether a text answer can be read off the entity's name.

    The answer appears in the name (industry 建工 in 渺珩建工, "Bank" in "... Bank"), the name in
    the answer, or, for a Chinese name, its last two characters (the business word of a short name:
    建工, 银行, 债券) appear in the answer (债券型 for 珂瑭稳健回报债券). An English answer gives
    itself away when each of its words of four letters or more is a word of the name.
    """
    if not entity_name or not answer:
        return False
    name, value = _fold(entity_name), _fold(answer)
    if not value or not name:
        return False
    if value in name or name in value:
        return True
    tail = "".join(_CJK.findall(name))[-2:]
    if len(tail) == 2 and tail in value:
        return True
    words = [w for w in _WORD.findall(value) if len(w) >= 4 and w not in _STOP_WORDS]
    return bool(words) and set(words) <= set(_WORD.findall(name))


def answer_reason(program: Program, entity_name: str | None, answer: str | None) -> str | None:
    """The filter name that rejects an executed candidate for its answer, or None."""
    if program.extract.format.kind == "text" and name_gives_away(entity_name, answer):
        return "semantic_label_in_name"
    return None
