"""The texts of a family candidate: its English and Chinese question (each family's own writers,
looked up in the registry, followed by the sentence of a convention it needs, construction/conventions.py)
and its chain in words for the LLM verbalizer's payload."""

from __future__ import annotations

from livesearch_pipeline.construction.conventions import with_conventions
from livesearch_pipeline.construction.families.base import family_of, nouns
from livesearch_pipeline.construction.families.registry import BY_NAME
from livesearch_pipeline.construction.models import Candidate
from livesearch_pipeline.core.lexicon import Lexicon, load_lexicon


def question_en(c: Candidate, lexicon: Lexicon | None = None) -> str:
    """The English text of a family candidate."""
    lexicon = lexicon or load_lexicon()
    family = family_of(c)
    assert family is not None, f"{c.qid} is not a family candidate"
    name, param = family
    nouns(c, lexicon)  # every family's field has a lexicon reading (LexiconError otherwise)
    found = BY_NAME.get(name)
    if found is None:
        raise ValueError(f"{c.qid}: unknown question family {name!r}")
    return with_conventions(found.question_en(c, name, param, lexicon), c, "en")


def question_zh(c: Candidate, lexicon: Lexicon | None = None) -> str:
    """The Chinese text of a family candidate of the Chinese market."""
    lexicon = lexicon or load_lexicon()
    family = family_of(c)
    assert family is not None, f"{c.qid} is not a family candidate"
    name, param = family
    nouns(c, lexicon)
    found = BY_NAME.get(name)
    if found is None or found.question_zh is None:
        raise ValueError(f"{c.qid}: no Chinese text for question family {name!r}")
    return with_conventions(found.question_zh(c, name, param, lexicon), c, "zh")


def chain_en(c: Candidate) -> list[str]:
    """The steps of a family's program in words, for the LLM verbalizer's payload."""
    steps = []
    for call in c.program.calls:
        refs = ", ".join(f"{name} from {ref.call} ({ref.aggregate or ref.select.mode} {ref.arg_field or ref.field})"
                         for name, ref in call.refs.items())
        steps.append(f"{call.id}: {call.tool}" + (f" with {refs}" if refs else ""))
    ex = c.program.extract
    head = f"answer: {ex.aggregate or ex.select.mode} {ex.field} of {ex.call}"
    if ex.select.years_back:
        head += f" {ex.select.years_back} year(s) before the latest"
    if ex.times is not None:
        head += f" times {ex.times.field} of {ex.times.call}"
    if ex.select.within is not None:
        member = ex.select.within
        head += (f" across the records whose {member.key} is a {member.field} of {member.call} "
                 f"({member.select.mode} {member.select.key})")
    if ex.select.above:
        head += " with " + ", ".join(f"{k} above {v:g}" for k, v in ex.select.above.items())
    if ex.arg_field is not None:
        head += f", answered with the winning record's {ex.arg_field}"
    if ex.pick is not None:
        compared = ", ".join(f"{o.aggregate or o.select.mode} {o.field} of {o.call}" for o in ex.pick.others)
        head += f", against {compared}: the {ex.pick.op} among {', '.join(ex.pick.labels)}"
    if ex.combine is not None:
        for step in ex.combine.chain():
            other = step.other
            where = f" ({', '.join(f'{k}={v}' for k, v in other.select.where.items())})" if other.select.where else ""
            back = f" {other.select.years_back} year(s) before the latest" if other.select.years_back else ""
            head += f", {step.op} with {other.aggregate or other.select.mode} {other.field}{where}{back} of {other.call}"
    return [*steps, head]
