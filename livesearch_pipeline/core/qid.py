"""Question identity (DESIGN §4.5) and template signatures (stage 2 of the pool filter).

`compute_qid` hashes everything that defines a question's meaning: the tools, the entity, the
fixed arguments, the relative date specs and the extractor. Concrete dates never enter it
because programs hold only relative specs, so a question keeps its qid across re-datings.
Fixed arguments ARE part of the identity, literal values included: a program that pins an
argument to a constant asks a different question from one that does not.

Models are dumped with every field, defaults included, so the hash covers the full meaning of
the program; a model change that adds a field therefore changes qids, and `load_pool` reports
such a pool as not matching its qids rather than silently re-identifying questions.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any, Iterable

from pydantic import BaseModel

from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.models import Program

SIGNATURE_ENTITY = "<entity>"
SIGNATURE_MATCH_VALUE = "<value>"
SIGNATURE_SERIES = "<series>"


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json", exclude_defaults=False)
    if isinstance(obj, (dt.date, dt.datetime)):
        return obj.isoformat()
    raise TypeError(f"canonical_json cannot encode {type(obj).__name__} {obj!r}")


def canonical_json(obj: Any) -> str:
    """One canonical JSON text for `obj`: sorted keys, no spaces, UTF-8 kept, no NaN/Infinity."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_jsonable
    )


def qid_set_hash(qids: Iterable[str]) -> str:
    """sha256 of the sorted, de-duplicated qids joined by "\\n": the identity of a benchmark day."""
    return hashlib.sha256("\n".join(sorted(set(qids))).encode("utf-8")).hexdigest()


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def compute_qid(program: Program, entity: str) -> str:
    """`ls-` + 16 hex digits of the program's and entity's canonical hash."""
    return "ls-" + _sha256(canonical_json({"entity": entity, "program": program}))[:16]


def _strip_ref(ref: dict[str, Any], entity_params: dict[str, str | None],
               series_keys: dict[str, tuple[str, ...]]) -> None:
    select = ref["select"]
    if select["mode"] == "match":
        select["value"] = SIGNATURE_MATCH_VALUE
    entity_param = entity_params.get(ref["call"])
    if entity_param and entity_param in select["where"]:
        select["where"][entity_param] = SIGNATURE_ENTITY
    # The series a program pins (a currency pair, an exchange, a holder) plays the entity's part:
    # the same template over another series is the same template.
    for key in series_keys.get(ref["call"], ()):
        if key in select["where"]:
            select["where"][key] = SIGNATURE_SERIES


def compute_signature(program: Program, catalog: Catalog) -> str:
    """`sig-` + 12 hex digits of the program with entities, series and match values blanked.

    The same template instantiated for another entity (or another series: currency pair,
    exchange, holder, constituent...) has the same signature. Raises ValueError for a tool the catalog does not know.
    """
    shape = program.model_dump(mode="json", exclude_defaults=False)
    entity_params: dict[str, str | None] = {}
    series_keys: dict[str, tuple[str, ...]] = {}
    for call in shape["calls"]:
        meta = catalog.get(call["tool"])
        if meta is None:
            raise ValueError(f"call {call['id']!r}: tool {call['tool']!r} is not in the catalog")
        entity_params[call["id"]] = meta.entity_param
        series_keys[call["id"]] = tuple(meta.series_keys)
        if meta.entity_param and meta.entity_param in call["args"]:
            call["args"][meta.entity_param] = SIGNATURE_ENTITY
    for call in shape["calls"]:
        for ref in call["refs"].values():
            _strip_ref(ref, entity_params, series_keys)
    _strip_ref(shape["extract"], entity_params, series_keys)
    step = shape["extract"]["combine"]
    while step is not None:  # every step of a combine chain
        _strip_ref(step["other"], entity_params, series_keys)
        step = step.get("then")
    pick = shape["extract"].get("pick")
    if pick is not None:  # the instruments a pick compares play the entity's part
        for other in pick["others"]:
            _strip_ref(other, entity_params, series_keys)
        pick["labels"] = [SIGNATURE_ENTITY] * len(pick["labels"])
    return "sig-" + _sha256(canonical_json(shape))[:12]
