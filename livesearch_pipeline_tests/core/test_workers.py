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


OWNER = """
import os, sys, time
from livesearch_pipeline.core import workers

def pids(_):
    return os.getpid(), os.getppid()

if __name__ == "__main__":
    with workers.worker_pool(2, sys.argv[1]) as pool:
        found = set()
        while len(found) < 2:  # both workers answered
            found |= set(pool.map(pids, range(8)))
        print(" ".join(f"{pid}:{parent}" for pid, parent in sorted(found)), flush=True)
        time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("start_method", ["fork", "forkserver"])
def test_workers_end_with_their_owner_when_it_is_killed(tmp_path, start_method: str) -> None:
    """Issue 38, finding 9: a site build (forkserver) or a Dagster step (fork) killed with SIGKILL left its
    workers (and the forkserver) running for good, reparented to pid 1."""
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "owner.py"
    script.write_text(OWNER, encoding="utf-8")
    owner = subprocess.Popen([sys.executable, str(script), start_method], stdout=subprocess.PIPE, text=True)
    try:
        line = owner.stdout.readline().split()
        workers_ = [int(item.split(":")[0]) for item in line]
        parents = {int(item.split(":")[1]) for item in line}
        assert len(workers_) == 2 and all(_alive(pid) for pid in workers_)
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    helpers = [*workers_, *(parents - {owner.pid})]  # the forkserver, for a forkserver pool
    deadline = time.monotonic() + 60  # a bound on the wait, not a measurement: they end at once
    while any(_alive(pid) for pid in helpers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in helpers if _alive(pid)] == []
