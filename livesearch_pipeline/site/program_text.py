"""A gold program and its matching rule in words, for a question's page (the JSON stays beside it).

Each call reads as `c1 = daily(ts_code=600519.SH, end_date=the last XSHG session on or before D)`,
then the extractor as the selection, the field, the aggregate, any combine step and the format.
Only the program language of core/models.py is read: no code runs.
"""

from __future__ import annotations

from livesearch_pipeline.core.models import Combine, DateSpec, Format, MatchRule, Program, ValueRef


def date_text(spec: DateSpec) -> str:
    if spec.sessions_back is not None:
        if spec.sessions_back == 0:
            return f"the last {spec.calendar} session on or before D"
        return f"{spec.sessions_back} {spec.calendar} session(s) before the last one on or before D"
    if spec.days_back is not None:
        rolled = f", rolled back to a {spec.calendar} session" if spec.calendar else ""
        return f"D minus {spec.days_back} day(s){rolled}"
    which = "the most recent completed" if spec.periods_back == 0 else f"{spec.periods_back} before the most recent completed"
    return f"the {spec.edge} of {which} {spec.period}"


def _selection_text(ref: ValueRef) -> str:
    select = ref.select
    where = "".join(f", {k} = {v}" for k, v in sorted(select.where.items()))
    if select.mode == "latest":
        text = f"the record with the latest {select.key}"
        if select.where_first:
            text = f"the record with the latest {select.key} among those" + "".join(
                f" with {k} = {v}" for k, v in sorted(select.where.items()))
        if select.years_back:
            text += f", then the same series {select.years_back} year(s) earlier"
    elif select.mode == "snapshot":
        text = f"the record whose {select.key} is {date_text(select.anchor)}"
    elif select.mode == "match":
        text = f"the records whose {select.key} is {select.value}"
    elif select.mode == "minute":
        text = f"the {select.time} bar of {date_text(select.anchor)}"
    else:
        text = f"every record (by {select.key})"
    return text + where


def ref_text(ref: ValueRef) -> str:
    what = f"{ref.field} of {_selection_text(ref)} in {ref.call}.{ref.path}"
    if ref.times is not None:
        what += f", each times {ref.times.field} of {ref.times.call} on the same {ref.select.key}"
    if ref.aggregate is not None:
        of = f" (answering with {ref.arg_field})" if ref.arg_field else ""
        what = f"{ref.aggregate} of {what}{of}"
    return what


def _combine_lines(combine: Combine | None) -> list[str]:
    return [f"then {step.op}{f' over {step.years} year(s)' if step.years else ''} with {ref_text(step.other)}"
            for step in (combine.chain() if combine else [])]


def format_text(fmt: Format) -> str:
    parts = [fmt.kind]
    if fmt.decimals is not None:
        parts.append(f"{fmt.decimals} decimal(s)")
    if fmt.scale != 1.0:
        parts.append(f"scaled by {fmt.scale:g}")
    if fmt.unit:
        parts.append(f"in {fmt.unit}")
    if fmt.out_fmt:
        parts.append(f"written {fmt.out_fmt}")
    return ", ".join(parts)


def program_lines(program: Program) -> list[str]:
    lines = []
    for call in program.calls:
        args = [f"{k}={v}" for k, v in sorted(call.args.items())]
        args += [f"{k}=<{date_text(spec)}>" for k, spec in sorted(call.dates.items())]
        args += [f"{k}=<{ref_text(ref)}>" for k, ref in sorted(call.refs.items())]
        lines.append(f"{call.id} = {call.tool}({', '.join(args)})")
    extract = program.extract
    lines.append(f"answer = {ref_text(extract)}")
    lines += _combine_lines(extract.combine)
    lines.append(f"formatted as {format_text(extract.format)}")
    return lines


def rule_text(rule: MatchRule) -> str:
    if rule.rule == "exact":
        text = "exact: equal after normalisation"
    elif rule.rule == "approx":
        bounds = []
        if rule.abs_tol is not None:
            bounds.append(f"within ±{rule.abs_tol:g}")
        if rule.rel_tol is not None:
            bounds.append(f"within {rule.rel_tol:.2%} relative")
        text = "approx: " + (" or ".join(bounds) if bounds else f"equal at {rule.decimals} decimal(s)")
    else:
        text = "semantic: the same name or period (deterministic comparison, then the judge)"
    if rule.unit:
        text += f"; unit {rule.unit}"
    return text + "; a sign mismatch always fails"
