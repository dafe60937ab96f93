"""core/locks.py: the lock file's holder record and the refusal that repeats it never hold a
credential of the holder's command line (issue 38, finding 14)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from livesearch_pipeline.core.locks import WriterLockedError, writer_lock

HOLD = """
import sys
from pathlib import Path
from livesearch_pipeline.core.locks import writer_lock
with writer_lock(Path(sys.argv[1]), "run folder"):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_the_lock_never_records_a_credential_of_the_command_line(tmp_path: Path) -> None:
    lock = tmp_path / ".writer.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(lock), "--searxng-url",
                               "http://user:secret@127.0.0.1:8888", "--token=hunter2hunter2"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        record = lock.read_text(encoding="utf-8")
        assert "secret" not in record and "hunter2" not in record and "127.0.0.1:8888" in record
        with pytest.raises(WriterLockedError) as refused:
            with writer_lock(lock, "run folder"):
                pass
        assert "secret" not in str(refused.value) and "hunter2" not in str(refused.value)
        assert f"pid {holder.pid}" in str(refused.value)
    finally:
        holder.communicate("\n", timeout=30)


def test_a_record_written_before_redaction_is_redacted_when_repeated(tmp_path: Path) -> None:
    from livesearch_pipeline.core.locks import describe_holder

    lock = tmp_path / ".writer.lock"
    lock.write_text('{"pid": 1, "host": "h", "since": "2026-12-04T00:00:00+00:00", '
                    '"command": "livesearch agent run --searxng-url http://user:secret@host:8888"}', encoding="utf-8")
    assert "secret" not in describe_holder(lock) and "host:8888" in describe_holder(lock)
