"""The refresh job's multiprocess executor and what its forkserver preloads."""

from __future__ import annotations

import subprocess
import sys

from livesearch_pipeline.defs.refresh.schedules import REFRESH_MAX_CONCURRENT_STEPS, REFRESH_PRELOAD_MODULES


def test_the_job_preloads_the_step_module_in_its_forkserver():
    from livesearch_pipeline.definitions import defs

    executor = defs.resolve_job_def("daily_refresh").executor_def
    assert executor.name == "refresh_multiprocess_executor"
    assert REFRESH_PRELOAD_MODULES == ["livesearch_pipeline.step_preload"]
    assert REFRESH_MAX_CONCURRENT_STEPS == 2


def test_the_preload_module_imports_cleanly_and_starts_nothing():
    """The forkserver skips a preload module that fails to import without a word; importing it
    here fails loudly instead. Forking is only safe from a process with no extra threads; what
    the children inherit is frozen out of their garbage collections."""
    code = ("import gc, threading, sys; import livesearch_pipeline.step_preload; "
            "assert 'livesearch_pipeline.dataservice.tools.quotes_cn' in sys.modules; "
            "assert 'dagster._core.storage.event_log.sqlite' in sys.modules; "
            "assert gc.get_freeze_count() > 100_000, gc.get_freeze_count(); "
            "print(threading.active_count())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
