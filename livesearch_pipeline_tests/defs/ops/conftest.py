"""Fixtures of the ops tests: a webhook receiver on 127.0.0.1 and an ephemeral instance."""

from __future__ import annotations

from typing import Iterator

import dagster as dg
import pytest

from livesearch_pipeline_tests.defs.ops.test_ops_alerts import Webhook


@pytest.fixture
def webhook() -> Iterator[Webhook]:
    hook = Webhook()
    hook.thread.start()
    try:
        yield hook
    finally:
        hook.server.shutdown()
        hook.server.server_close()


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.instance_for_test() as inst:
        yield inst
