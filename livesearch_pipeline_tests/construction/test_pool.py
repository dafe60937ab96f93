"""Stage 6: the pool filter's caps, solved-signature drop and re-instantiation; pool files."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from livesearch_pipeline.construction.pool import (
    MANIFEST_FILE,
    POOL_FILE,
    PoolPolicy,
    SignatureHistory,
    cap_key,
    select_pool,
    visibility_band,
    write_pool,
)
from livesearch_pipeline.core.models import Question
from livesearch_pipeline.core.qid import compute_qid
from livesearch_pipeline.core.pool import read_manifest
from livesearch_pipeline_tests.construction.builders import question

CREATED = dt.datetime(2026, 11, 27, 8, 0, tzinfo=dt.timezone.utc)


def _group(signature: str, levels, *, tool: str = "bars", tier: str = "T1", prefix: str = "6") -> list[Question]:
    return [question(f"{prefix}{i:05d}.SH", signature=signature, visibility=v, tool=tool, tier=tier)
            for i, v in enumerate(levels)]


def test_cap_per_signature_spreads_over_visibility():
    group = _group("sig-a", [0, 0, 5, 5, 10, 10])
    selection = select_pool(group, {}, PoolPolicy(max_per_signature=3, max_per_tool=50))
    assert len(selection.questions) == 3 and selection.capped_by_signature == 3
    assert sorted(q.visibility for q in selection.questions) == [0, 5, 10]
    assert [q.qid for q in selection.questions] == sorted(q.qid for q in selection.questions)


def test_cap_per_tool_keeps_every_signature_of_the_tool():
    questions = [*_group("sig-a", [1, 2, 3], prefix="6"), *_group("sig-b", [1, 2, 3], prefix="0", tier="T3"),
                 *_group("sig-c", [1, 2], tool="other", prefix="3")]
    selection = select_pool(questions, {}, PoolPolicy(max_per_signature=3, max_per_tool=4))
    by_tool = {}
    for q in selection.questions:
        by_tool.setdefault(q.program.calls[0].tool, []).append(q.signature)
    assert len(by_tool["bars"]) == 4 and set(by_tool["bars"]) == {"sig-a", "sig-b"}
    assert len(by_tool["other"]) == 2
    assert selection.capped_by_tool == 2 and selection.capped_by_signature == 0


def test_signatures_every_evaluated_agent_solved_are_dropped():
    questions = [*_group("sig-solved", [1, 5]), *_group("sig-open", [1, 5], prefix="0"),
                 *_group("sig-unseen", [2], prefix="3")]
    history = {
        "sig-solved": SignatureHistory(agents_evaluated=3, agents_solved=3, served_qids=frozenset()),
        "sig-open": SignatureHistory(agents_evaluated=3, agents_solved=2, served_qids=frozenset()),
        "sig-never-built": SignatureHistory(agents_evaluated=1, agents_solved=1, served_qids=frozenset()),
    }
    selection = select_pool(questions, history)
    assert selection.dropped_solved_signatures == ["sig-solved"]
    assert {q.signature for q in selection.questions} == {"sig-open", "sig-unseen"}


def test_no_agent_evaluated_drops_nothing():
    questions = _group("sig-a", [1])
    history = {"sig-a": SignatureHistory(agents_evaluated=0, agents_solved=0, served_qids=frozenset())}
    assert [q.qid for q in select_pool(questions, history).questions] == [questions[0].qid]


def test_reinstantiation_uses_fresh_entities_of_the_served_band():
    group = _group("sig-a", [1, 2, 3, 0, 5, 9, 10])
    served = group[0]
    history = {"sig-a": SignatureHistory(agents_evaluated=2, agents_solved=1, served_qids=frozenset({served.qid}))}
    selection = select_pool(group, history, PoolPolicy(max_per_signature=2))
    assert len(selection.questions) == 2 and selection.reinstantiated == 2
    assert served.qid not in {q.qid for q in selection.questions}
    assert all(visibility_band(q.visibility) == visibility_band(served.visibility) for q in selection.questions)
    assert {q.entity for q in selection.questions} <= {q.entity for q in group[1:4]}


def test_a_signature_short_of_fresh_entities_keeps_its_served_questions():
    """Re-selection never shrinks a signature below its share for want of fresh entities: it takes
    the fresh ones there are and keeps served ones for the rest."""
    group = _group("sig-a", [1, 2, 7, 8])
    served = {group[0].qid, group[2].qid, group[3].qid}  # bands low, high, high; one fresh low question
    history = {"sig-a": SignatureHistory(agents_evaluated=2, agents_solved=1, served_qids=frozenset(served))}
    selection = select_pool(group, history, PoolPolicy(max_per_signature=3))
    assert selection.reinstantiated == 1 and len(selection.questions) == 3
    assert group[1].qid in {q.qid for q in selection.questions}


def test_reinstantiated_questions_record_what_they_derive_from():
    group = _group("sig-a", [1, 2, 3])
    history = {"sig-a": SignatureHistory(agents_evaluated=1, agents_solved=0, served_qids=frozenset({group[0].qid}))}
    selection = select_pool(group, history)
    fresh = [q for q in selection.questions if q.qid != group[0].qid]
    assert fresh and all(q.provenance.derived_from == group[0].qid for q in fresh)
    # Two fresh entities for a share of three: the served question stays, as itself.
    assert [q.provenance.derived_from for q in selection.questions if q.qid == group[0].qid] == [None]


def test_selection_is_reproducible_and_order_independent():
    questions = [*_group("sig-a", list(range(11))), *_group("sig-b", list(range(11)), prefix="0")]
    first = select_pool(questions, {})
    again = select_pool(list(reversed(questions)), {})
    assert [q.qid for q in first.questions] == [q.qid for q in again.questions]


# --------------------------------------------------------------------------- files


def test_write_pool_twice_is_byte_identical(tmp_path):
    questions = [*_group("sig-a", [1, 5]), *_group("sig-b", [3], prefix="0")]
    first = write_pool(tmp_path, questions, data_service="fake-service")
    files = {name: (tmp_path / name).read_bytes() for name in (POOL_FILE, MANIFEST_FILE)}
    second = write_pool(tmp_path, list(reversed(questions)), data_service="fake-service")
    assert second == first
    assert {name: (tmp_path / name).read_bytes() for name in files} == files
    assert read_manifest(tmp_path) == first


def test_write_pool_stamps_version_and_hash(tmp_path):
    import hashlib

    questions = _group("sig-a", [1, 5])
    manifest = write_pool(tmp_path, questions, data_service="fake-service", created_at=CREATED)
    data = (tmp_path / POOL_FILE).read_bytes()
    assert manifest.sha256 == hashlib.sha256(data).hexdigest() and manifest.questions == 2
    lines = [Question.model_validate_json(line) for line in data.decode().splitlines()]
    assert [q.qid for q in lines] == sorted(q.qid for q in questions)
    assert {q.provenance.pool_version for q in lines} == {manifest.version}
    assert json.loads((tmp_path / MANIFEST_FILE).read_text())["created_at"].startswith("2026-11-27T08:00")
    other = tmp_path / "other"
    write_pool(other, questions, data_service="fake-service", created_at=CREATED)
    assert (other / POOL_FILE).read_bytes() == data
    assert (other / MANIFEST_FILE).read_bytes() == (tmp_path / MANIFEST_FILE).read_bytes()


def test_read_manifest_of_an_empty_directory_says_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match="build-pool"):
        read_manifest(tmp_path)


def test_preselect_keeps_only_the_signatures_the_per_tool_cap_can_reach():
    from livesearch_pipeline.construction.pool import preselect
    from livesearch_pipeline_tests.construction.builders import candidate

    rows = [candidate(f"60000{i}.SH", anchor=anchor, aggregate=agg, tier=tier, visibility=i)
            for i in range(3)
            for anchor, agg, tier in (("latest", None, "T1"), ("window:5", "mean", "T3"), ("window:20", "max", "T3"))]
    all_kept = preselect(rows, per_signature=2)
    assert len(all_kept) == 6 and len({c.signature for c in all_kept}) == 3
    capped = preselect(rows, per_signature=2, signatures_per_tool=2)
    # Visiting order is (tier, signature): the T1 signature first, then the smaller T3 signature.
    t3 = sorted({c.signature for c in rows if c.tier == "T3"})
    assert {c.signature for c in capped} == {"sig-latest-None", t3[0]}
    assert len(capped) == 4


def _chain(code: str, *, signature: str, visibility: int, refresh_class: str = "daily") -> Question:
    """A two-call program (bars, then a second tool of the same instrument): a chain of cap key `bars>factor`."""
    q = question(code, signature=signature, visibility=visibility)
    first = q.program.calls[0]
    program = q.program.model_copy(update={"calls": [first, first.model_copy(update={"id": "c2", "tool": "factor"})]})
    return q.model_copy(update={"program": program, "qid": compute_qid(program, code), "refresh_class": refresh_class})


def test_a_chain_is_capped_by_the_chain_caps_and_a_tool_by_the_tool_caps():
    singles = [question(f"6{i:05d}.SH", signature=f"s{i}", visibility=i % 11) for i in range(40)]
    chains = [_chain(f"0{i:05d}.SZ", signature=f"c{i}", visibility=i % 11,
                     refresh_class="weekly" if i % 2 else "daily") for i in range(40)]
    policy = PoolPolicy(max_per_signature=3, max_per_tool=10, max_slow_per_tool=0, max_per_chain=30,
                        max_slow_per_chain=5)
    kept = select_pool(singles + chains, {}, policy).questions
    assert {cap_key(q) for q in chains} == {"bars>factor"}
    kept_chains = [q for q in kept if len(q.program.calls) == 2]
    assert len(kept) - len(kept_chains) == 10
    assert len(kept_chains) == 25 and sum(q.refresh_class == "weekly" for q in kept_chains) == 5
