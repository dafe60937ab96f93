"""core/workers.py: forked workers inherit the state a pool is opened with, never pickled, and
the parent forgets it when the pool closes."""

from __future__ import annotations

import os
import threading

import pytest

from livesearch_pipeline.core.workers import default_workers, forked_pool, inherited


def _read_inherited(_: int) -> tuple[int, str, bool]:
    state = inherited()
    return os.getpid(), state["name"], state["lock"].locked()


def test_workers_read_what_the_pool_was_opened_with_without_pickling_it():
    # A lock cannot be pickled: the workers can only have it by fork.
    state = {"name": "replay", "lock": threading.Lock()}
    with forked_pool(2, state) as pool:
        results = list(pool.map(_read_inherited, range(8)))
    assert {(name, locked) for _, name, locked in results} == {("replay", False)}
    assert all(pid != os.getpid() for pid, _, _ in results)


def test_the_parent_forgets_the_state_when_the_pool_closes_also_on_an_error():
    with forked_pool(1, "state") as pool:
        assert pool.submit(inherited).result() == "state"
    with pytest.raises(RuntimeError, match="not in a worker forked by forked_pool"):
        inherited()
    with pytest.raises(ValueError, match="boom"):
        with forked_pool(1, "other"):
            raise ValueError("boom")
    with pytest.raises(RuntimeError, match="not in a worker forked by forked_pool"):
        inherited()


def test_a_second_pool_inside_the_first_is_refused():
    with forked_pool(1, "first"):
        with pytest.raises(RuntimeError, match="already open"):
            with forked_pool(1, "second"):
                pass
        assert inherited() == "first"


def test_default_workers_is_one_per_core_at_most_two():
    assert 1 <= default_workers() <= 2
