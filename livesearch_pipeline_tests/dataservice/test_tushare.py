"""The Tushare Pro forwarder against a fake Tushare HTTP server on 127.0.0.1.

The fake enforces a per-minute quota on a virtual clock shared with the client's limiter, so
minutes of rate limiting run in no real time (the limiter's sleep advances the virtual clock).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import pytest
from mcp import Client

from livesearch_pipeline.core.catalog import Catalog
from livesearch_pipeline.core.client import ToolCallError
from livesearch_pipeline.core.executor import ExecutorConfig, execute_programs
from livesearch_pipeline.dataservice.client import McpToolClient
from livesearch_pipeline.dataservice.quota import RETRY_META_KEY, QuotaLimiter, RateLimitedError, error_from_retry_meta
from livesearch_pipeline.dataservice.server import ForwardingService, build_server
from livesearch_pipeline.dataservice.tushare import QUOTA_WINDOW_S, TushareClient
from livesearch_pipeline_tests.core.test_executor import latest_close, question
from livesearch_pipeline_tests.dataservice.toy_service import TOY_SPECS

TOKEN = "tok-5f1e9c0d4b7a2e83"
# A token whose repr, ascii() and JSON spellings all differ from the raw text.
TRICKY_TOKEN = "tok'\"\\é-7c2b90aa41d3e5f6"
FULL = ["ts_code", "trade_date", "close", "pre_close"]
ROWS = [["600001.SH", "20260109", 10.0, 19.6], ["600001.SH", "20260108", 19.6, 19.5]]
# Tushare's default columns include some the reference surface does not list.
DEFAULT_FIELDS = [*FULL, "vol"]
PER_MINUTE_MSG = "抱歉，您每分钟最多访问该接口10次"


class FakeClock:
    """Virtual time: `sleep` moves it forward to the sleeper's wake-up time, never back.

    Time stands still while a request is on its way to the fake provider (`in_flight`), so the
    provider sees the time the request was admitted at, as it would in real time."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        self.in_flight = 0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        target = self.now + seconds
        while self.in_flight:
            await anyio.sleep(0.001)
        self.now = max(self.now, target)
        await anyio.sleep(0)


class ClockedTushare(TushareClient):
    """A TushareClient whose requests hold the virtual clock while they are in flight."""

    def __init__(self, *args, clock: FakeClock, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._clock = clock

    async def _send(self, name, body):
        self._clock.in_flight += 1
        try:
            return await super()._send(name, body)
        finally:
            self._clock.in_flight -= 1


class FakeTushare(BaseHTTPRequestHandler):
    requests: list[dict] = []
    log: list[tuple[str, float, int]] = []  # (api_name, virtual time, reply code)
    clock: FakeClock | None = None
    per_minute: int | None = None  # the account's quota, per interface and virtual minute
    lock = threading.Lock()

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeTushare.requests.append(body)
        api = body["api_name"]
        if api == "http_500":
            return self._status(503)
        if api == "http_429":
            return self._status(429, {"Retry-After": "7"})
        reply = self._reply(api, body)
        with FakeTushare.lock:
            now = FakeTushare.clock() if FakeTushare.clock else 0.0
            FakeTushare.log.append((api, now, reply["code"]))
        payload = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _reply(self, api: str, body: dict) -> dict:
        token, params = body["token"], body["params"]
        if token not in (TOKEN, TRICKY_TOKEN):
            return {"code": 2002, "msg": f"token {token} invalid", "data": None}
        if params.get("ts_code") == "BAD":
            return {"code": 40001, "msg": "ts_code BAD 不存在", "data": None}
        if api == "rate_limited":
            return {"code": 40203, "msg": PER_MINUTE_MSG, "data": None}
        if api == "daily_quota":
            return {"code": 40203, "msg": "抱歉，您每天最多访问该接口100000次", "data": None}
        # A provider that echoes the request (token included) into what it sends back.
        if api == "echo_token":
            return {"code": 40101, "msg": f"bad request {json.dumps(body)}", "data": None}
        if api == "echo_raw":
            return {"code": 40101, "msg": f"bad request {body!r}", "data": None}
        if api == "echo_row":
            return {"code": 0, "msg": "", "data": {"fields": FULL, "items": [[{"request": body}, token]]}}
        if api == "echo_fields":
            return {"code": 0, "msg": "", "data": {"fields": [token, token], "items": []}}
        if api == "echo_has_more":
            return {"code": 0, "msg": "", "data": {"fields": [], "items": [], "has_more": {"t": token}}}
        if FakeTushare.per_minute is not None:
            with FakeTushare.lock:
                minute = int(FakeTushare.clock() // 60)
                served = sum(1 for a, t, code in FakeTushare.log if a == api and code == 0 and int(t // 60) == minute)
            if served >= FakeTushare.per_minute:
                return {"code": 40203, "msg": PER_MINUTE_MSG, "data": None}
        fields = body["fields"].split(",") if body["fields"] else DEFAULT_FIELDS
        rows = [[*row, 1234.0] for row in ROWS]
        items = [[row[DEFAULT_FIELDS.index(f)] for f in fields] for row in rows][: params.get("limit", 99)]
        return {"code": 0, "msg": "", "data": {"fields": fields, "items": items, "has_more": False}}

    def _status(self, status: int, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # 32 connections arrive at once; the default backlog of 5 resets some


@contextmanager
def fake_tushare(clock: FakeClock | None = None, per_minute: int | None = None) -> Iterator[str]:
    FakeTushare.requests, FakeTushare.log = [], []
    FakeTushare.clock, FakeTushare.per_minute = clock, per_minute
    server = _Server(("127.0.0.1", 0), FakeTushare)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _catalog() -> Catalog:
    return Catalog(service="toy", tools=[s.meta for s in TOY_SPECS])


def _limiter(clock: FakeClock, per_minute: int | None = None) -> QuotaLimiter:
    return QuotaLimiter(per_minute, period_s=QUOTA_WINDOW_S, clock=clock, sleep=clock.sleep)


def _call(url: str, name: str, args: dict, token: str = TOKEN, catalog: Catalog | None = None, clock: FakeClock | None = None, **kwargs):
    clock = clock or FakeClock()
    kwargs.setdefault("limiter", _limiter(clock))

    async def go():
        async with ClockedTushare(token, url=url, catalog=catalog, clock=clock, **kwargs) as client:
            return await client.call_tool(name, args)

    return anyio.run(go)


def _many(url: str, n: int, clock: FakeClock, limiter: QuotaLimiter, **kwargs) -> tuple[list, list]:
    """`n` concurrent distinct calls of one interface; (results, failures)."""
    results, failures = [], []

    async def one(client: TushareClient, i: int) -> None:
        try:
            results.append(await client.call_tool("toy_daily", {"ts_code": f"6{i:05d}.SH"}))
        except ToolCallError as exc:
            failures.append(exc)

    async def go():
        async with ClockedTushare(TOKEN, url=url, limiter=limiter, clock=clock, **kwargs) as client:
            async with anyio.create_task_group() as tg:
                for i in range(n):
                    tg.start_soon(one, client, i)

    anyio.run(go)
    return results, failures


def _per_minute(log: list[tuple[str, float, int]]) -> Counter:
    return Counter(int(t // 60) for _, t, code in log if code == 0)


# --------------------------------------------------------------------------- requests and records


def test_request_shape_and_records():
    args = {"ts_code": "600001.SH", "start_date": "20260101", "limit": 5}
    with fake_tushare() as url:
        content = _call(url, "toy_daily", args, catalog=_catalog())
    # No `fields` asked for, none sent: the provider's own default columns come back, not the
    # synthetic catalog's list.
    assert FakeTushare.requests == [{"api_name": "toy_daily", "token": TOKEN, "params": args, "fields": ""}]
    assert content == {
        "items": [dict(zip(DEFAULT_FIELDS, [*row, 1234.0])) for row in ROWS],
        "total": 2,
        "has_more": False,
    }
    assert args == {"ts_code": "600001.SH", "start_date": "20260101", "limit": 5}  # the caller's dict is untouched


def test_fields_argument_is_forwarded():
    with fake_tushare() as url:
        content = _call(url, "toy_daily", {"ts_code": "600001.SH", "fields": "trade_date,close"}, catalog=_catalog())
    assert FakeTushare.requests[0]["fields"] == "trade_date,close"
    assert "fields" not in FakeTushare.requests[0]["params"]
    assert content["items"][0] == {"trade_date": "20260109", "close": 10.0}


@pytest.mark.parametrize(
    ("name", "token", "transient", "fragment"),
    [
        ("toy_daily", "wrong-token-0000", False, "Tushare error 2002"),
        ("http_500", TOKEN, True, "Tushare HTTP 503"),
        ("daily_quota", TOKEN, False, "a per-day quota: it does not lift within this run"),
    ],
)
def test_errors_are_classified(name, token, transient, fragment):
    with fake_tushare() as url, pytest.raises(ToolCallError) as failure:
        _call(url, name, {}, token=token)
    assert failure.value.transient is transient and fragment in str(failure.value)
    assert not isinstance(failure.value, RateLimitedError)
    assert len(FakeTushare.requests) == 1  # none of these is retried by the client itself


@pytest.mark.parametrize(("name", "retry_after"), [("rate_limited", QUOTA_WINDOW_S), ("http_429", 7.0)])
def test_rate_limit_without_waiting_names_the_wait(name, retry_after):
    """The forwarder's mode: no sleeping, a RateLimitedError the MCP layer passes on."""
    clock = FakeClock()
    limiter = _limiter(clock)
    with fake_tushare() as url, pytest.raises(RateLimitedError) as failure:
        _call(url, name, {}, clock=clock, limiter=limiter, wait_for_quota=False)
    assert failure.value.transient and failure.value.upstream and failure.value.retry_after_s == retry_after
    assert clock.sleeps == []
    # The interface is held for what the error names: the whole window, or the Retry-After.
    assert limiter.try_acquire(name) == pytest.approx(retry_after)


# --------------------------------------------------------------------------- the quota


def test_limiter_counts_a_sliding_window_per_key_and_blocks():
    clock = FakeClock()
    limiter = QuotaLimiter(2, period_s=60.0, clock=clock, sleep=clock.sleep)
    assert [limiter.try_acquire("daily") for _ in range(2)] == [0.0, 0.0]
    assert limiter.try_acquire("daily") == 60.0  # the oldest call ages out after a period
    assert limiter.try_acquire("weekly") == 0.0  # each interface has its own quota
    clock.now += 30
    assert limiter.try_acquire("daily") == 30.0
    clock.now += 30
    assert limiter.try_acquire("daily") == 0.0
    assert limiter.block("weekly", 45.0) is True and limiter.block("weekly", 10.0) is False
    assert limiter.try_acquire("weekly") == 45.0
    assert anyio.run(limiter.acquire, "weekly") == 45.0 and clock.sleeps == [45.0]
    with pytest.raises(ValueError, match="calls_per_period must be >= 1"):
        QuotaLimiter(0)


def test_concurrent_calls_share_the_quota_and_are_never_refused():
    """32 calls at once against a 10-a-minute account: the limiter spaces them over four
    windows, the provider never answers 40203, nothing waits in real time."""
    clock = FakeClock()
    with fake_tushare(clock, per_minute=10) as url:
        results, failures = _many(url, 32, clock, _limiter(clock, per_minute=10))
    assert failures == [] and len(results) == 32
    assert [code for _, _, code in FakeTushare.log] == [0] * 32
    times = sorted(t for _, t, _ in FakeTushare.log)
    assert all(b - a >= QUOTA_WINDOW_S for a, b in zip(times, times[10:]))  # <= 10 in any window
    assert times[-1] - times[0] == pytest.approx(3 * QUOTA_WINDOW_S)


def test_a_40203_holds_the_interface_for_the_next_window():
    """A limiter set above the account's quota: each 40203 pauses every caller of that
    interface for a window instead of hammering; all 32 calls end up answered."""
    clock = FakeClock()
    with fake_tushare(clock, per_minute=10) as url:
        results, failures = _many(url, 32, clock, _limiter(clock, per_minute=30), rate_limit_retries=5)
    assert failures == [] and len(results) == 32
    refused = [t for _, t, code in FakeTushare.log if code == 40203]
    assert refused and max(_per_minute(FakeTushare.log).values()) <= 10
    # After a refusal nothing is sent to the interface until the window has passed.
    for when in refused:
        assert not any(when < t < when + QUOTA_WINDOW_S - 1e-9 for _, t, _ in FakeTushare.log)
    # The old policy (three retries 0.05/0.1/0.2 s apart) made 4 requests per refused call
    # within 0.4 s; now each refused call waits a window per refusal.
    assert len(FakeTushare.log) < 32 + 2 * len(refused)


def test_a_quota_that_never_lifts_fails_after_a_bounded_number_of_windows(caplog):
    clock = FakeClock()
    with fake_tushare(clock) as url, pytest.raises(ToolCallError) as failure:
        _call(url, "rate_limited", {}, clock=clock, limiter=_limiter(clock), rate_limit_retries=2)
    assert failure.value.transient is False
    assert "still refused after waiting out 2 rate-limit window(s)" in failure.value.message
    assert "TUSHARE_CALLS_PER_MINUTE" in failure.value.message
    assert [t - FakeTushare.log[0][1] for _, t, _ in FakeTushare.log] == [0.0, QUOTA_WINDOW_S, 2 * QUOTA_WINDOW_S]
    assert "holding calls to rate_limited for 61 s" in caplog.text


def test_clients_of_one_token_share_one_limiter(monkeypatch):
    monkeypatch.setenv("TUSHARE_CALLS_PER_MINUTE", "120")
    url = "http://127.0.0.1:9/shared-limiter-test"
    first, second = TushareClient(TOKEN, url=url), TushareClient(TOKEN, url=url)
    other = TushareClient("tok-another-account-0000", url=url)
    assert first.limiter is second.limiter and first.limiter is not other.limiter
    assert first.limiter.calls_per_period == 120
    stricter = TushareClient(TOKEN, url=url, calls_per_minute=50)
    assert stricter.limiter is first.limiter and first.limiter.calls_per_period == 50
    monkeypatch.setenv("TUSHARE_CALLS_PER_MINUTE", "lots")
    with pytest.raises(ValueError, match="TUSHARE_CALLS_PER_MINUTE must be a positive whole number"):
        TushareClient(TOKEN, url=url)


def test_queueing_for_quota_does_not_count_against_the_call_timeout():
    """Real time, kept short: a 0.4 s window and a 0.25 s call timeout. The third call queues
    0.8 s for the quota and still succeeds without a retry."""
    limiter = QuotaLimiter(1, period_s=0.4)
    questions = [question(i, latest_close(code)) for i, code in enumerate(("600001.SH", "600002.SH", "600003.SH"), 1)]
    config = ExecutorConfig(max_concurrency=3, retries=0, backoff_s=0.0, call_timeout_s=0.25)

    async def go(url):
        async with TushareClient(TOKEN, url=url, limiter=limiter) as client:
            return await execute_programs(questions, dt.date(2026, 1, 9), client, config)

    with fake_tushare() as url:
        answers, stats = anyio.run(go, url)
    assert [a.status for a in answers] == ["ok"] * 3, [a.error for a in answers]
    assert stats.retries == 0 and stats.wall_time_s >= 0.8


# --------------------------------------------------------------------------- secrets


@pytest.mark.parametrize("token", [TOKEN, TRICKY_TOKEN])
@pytest.mark.parametrize("api", ["echo_token", "echo_raw", "echo_row", "echo_fields", "echo_has_more", "toy_daily"])
def test_token_never_leaks_from_an_echoing_provider(caplog, token, api):
    caplog.set_level(logging.DEBUG)
    args = {"ts_code": "600001.SH"} if api != "toy_daily" else {"ts_code": "600001.SH", "token": token}
    with fake_tushare() as url, pytest.raises(ToolCallError) as failure:
        _call(url, api, args, token=token)
    exc = failure.value
    assert "***" in str(exc) or api == "toy_daily"
    texts = [str(exc), repr(exc), exc.message, repr(exc.args), caplog.text]
    texts += [f"{r.getMessage()} {r.args!r} {r.exc_text}" for r in caplog.records]
    assert all(token not in text for text in texts), texts
    if api == "toy_daily":  # a credential argument is refused before anything is sent
        assert FakeTushare.requests == [] and "credentials are never tool arguments" in exc.message


def test_token_never_leaks_through_the_forwarder_or_the_executor(caplog):
    caplog.set_level(logging.DEBUG)
    base = question(1, latest_close("600001.SH"))
    echoing = base.program.model_copy(update={"calls": [base.program.calls[0].model_copy(update={"tool": "echo_row"})]})

    async def go(url):
        async with TushareClient(TRICKY_TOKEN, url=url, limiter=_limiter(FakeClock())) as tushare:
            service = ForwardingService(tushare, TOY_SPECS)
            service._names += ["echo_row", "echo_token"]  # provider interfaces beyond the toy surface
            results = [await service.handle(api, {"ts_code": "600001.SH"}) for api in ("echo_row", "echo_token")]
            async with McpToolClient(build_server(service), description="in-process") as mcp:
                with pytest.raises(ToolCallError) as through_mcp:
                    await mcp.call_tool("echo_token", {"ts_code": "600001.SH"})
            answers, _ = await execute_programs(
                [base.model_copy(update={"program": echoing})], dt.date(2026, 1, 9), tushare,
                ExecutorConfig(retries=0, call_timeout_s=5.0),
            )
            return results, through_mcp.value, answers

    with fake_tushare() as url:
        results, through_mcp, answers = anyio.run(go, url)
    assert all(r.is_error and "***" in r.content[0].text for r in results)
    assert "***" in through_mcp.message
    assert answers[0].status == "error" and "***" in answers[0].error
    dumps = [r.model_dump_json() for r in results] + [str(through_mcp), answers[0].model_dump_json(), caplog.text]
    assert all(TRICKY_TOKEN not in text and json.dumps(TRICKY_TOKEN)[1:-1] not in text for text in dumps)


def test_token_stays_out_of_reprs(monkeypatch):
    client = TushareClient(TOKEN, url="http://127.0.0.1:1")
    assert TOKEN not in repr(client) and TOKEN not in client.identity and TOKEN not in repr(vars(client))
    with pytest.raises(ToolCallError) as unreachable:
        _call("http://127.0.0.1:1", "toy_daily", {})
    assert unreachable.value.transient and TOKEN not in str(unreachable.value)


def test_missing_token_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("TUSHARE_TOKEN", raising=False)
    with pytest.raises(ValueError, match="TUSHARE_TOKEN"):
        TushareClient()
    monkeypatch.setenv("TUSHARE_TOKEN", TOKEN)
    assert TOKEN not in repr(TushareClient())


def test_unknown_tool_of_the_surface_is_refused():
    with fake_tushare() as url, pytest.raises(ToolCallError, match="not a data tool"):
        _call(url, "no_such_api", {}, catalog=_catalog())
    assert FakeTushare.requests == []


# --------------------------------------------------------------------------- through MCP


def test_forwarder_backs_the_mcp_server():
    async def go(url):
        async with TushareClient(TOKEN, url=url, catalog=_catalog(), limiter=_limiter(FakeClock())) as tushare:
            service = ForwardingService(tushare, TOY_SPECS)
            async with Client(build_server(service)) as client:
                listed = [t.name for t in (await client.list_tools()).tools]
                # Tushare's default columns (with `vol`, not in the reference surface) are accepted.
                ok = await client.call_tool("toy_daily", {"ts_code": "600001.SH", "limit": 1})
                failed = await client.call_tool("toy_daily", {"ts_code": "BAD"})
                return listed, ok, failed

    with fake_tushare() as url:
        listed, ok, failed = anyio.run(go, url)
    assert listed == [s.name for s in TOY_SPECS]
    assert ok.structured_content["items"] == [dict(zip(DEFAULT_FIELDS, [*ROWS[0], 1234.0]))]
    assert failed.is_error and "toy_daily: Tushare error 40001: ts_code BAD 不存在" in failed.content[0].text
    assert failed.meta[RETRY_META_KEY] == {"retryable": False, "reason": None, "retry_after_s": None}
    assert [r["fields"] for r in FakeTushare.requests] == ["", ""]
    assert all(TOKEN not in json.dumps(r["params"]) for r in FakeTushare.requests)


def _forwarder(url: str, clock: FakeClock, per_minute: int | None, catalog: Catalog | None = None) -> ForwardingService:
    tushare = ClockedTushare(TOKEN, url=url, catalog=catalog, limiter=_limiter(clock, per_minute), wait_for_quota=False, clock=clock)
    return ForwardingService(tushare, TOY_SPECS)


@pytest.mark.parametrize(("tool", "reason", "after"), [("rate_limited", "rate_limited", QUOTA_WINDOW_S), ("http_500", "unavailable", None)])
def test_forwarded_failures_are_marked_retryable(tool, reason, after):
    clock = FakeClock()
    with fake_tushare(clock) as url:
        service = _forwarder(url, clock, None)
        service._names.append(tool)  # a provider interface beyond the toy surface
        result = anyio.run(service.handle, tool, {})
    assert result.is_error and result.meta[RETRY_META_KEY] == {"retryable": True, "reason": reason, "retry_after_s": after}
    assert result.structured_content is None


def test_mcp_client_waits_out_the_forwarders_quota():
    """32 concurrent calls through `serve-data --provider tushare`: the forwarder sends at most
    10 a minute and answers the rest "retry after N s" at once; our client holds the tool for
    that long and sends them again. No call fails and Tushare never answers 40203."""
    clock = FakeClock()
    client_limiter = QuotaLimiter(None, clock=clock, sleep=clock.sleep)
    failures: list[ToolCallError] = []

    async def one(client: McpToolClient, i: int) -> None:
        try:
            await client.call_tool("toy_daily", {"ts_code": f"6{i:05d}.SH", "fields": "trade_date,close"})
        except ToolCallError as exc:
            failures.append(exc)

    async def go(url):
        service = _forwarder(url, clock, per_minute=10, catalog=_catalog())
        async with McpToolClient(build_server(service), description="in-process", limiter=client_limiter) as client:
            async with anyio.create_task_group() as tg:
                for i in range(32):
                    tg.start_soon(one, client, i)

    with fake_tushare(clock, per_minute=10) as url:
        anyio.run(go, url)
    assert failures == []
    assert [code for _, _, code in FakeTushare.log] == [0] * 32
    assert max(_per_minute(FakeTushare.log).values()) <= 10
    assert clock.sleeps and all(s <= QUOTA_WINDOW_S for s in clock.sleeps)


def test_mcp_client_gives_up_on_a_provider_that_keeps_refusing():
    clock = FakeClock()

    async def go(url):
        service = _forwarder(url, clock, per_minute=None)
        service._names.append("rate_limited")
        limiter = QuotaLimiter(None, clock=clock, sleep=clock.sleep)
        async with McpToolClient(build_server(service), description="in-process", limiter=limiter, rate_limit_retries=1) as client:
            with pytest.raises(ToolCallError) as failure:
                await client.call_tool("rate_limited", {})
            return failure.value

    with fake_tushare(clock) as url:
        failure = anyio.run(go, url)
    assert failure.transient is False and "still refused after waiting out 1 rate-limit window(s)" in failure.message
    # Two requests reached Tushare, a window apart: the client waited the hold the server named.
    assert [t - FakeTushare.log[0][1] for _, t, _ in FakeTushare.log] == [0.0, QUOTA_WINDOW_S]


@pytest.mark.parametrize(
    ("meta", "kind", "transient", "after"),
    [
        (None, ToolCallError, False, None),
        ({"retryable": False, "reason": None, "retry_after_s": None}, ToolCallError, False, None),
        ({"retryable": True, "reason": "unavailable", "retry_after_s": None}, ToolCallError, True, None),
        ({"retryable": True, "reason": "quota", "retry_after_s": 12.5}, RateLimitedError, True, 12.5),
        ({"retryable": True, "reason": "rate_limited", "retry_after_s": 61}, RateLimitedError, True, 61.0),
    ],
)
def test_the_client_reads_the_retry_marking(meta, kind, transient, after):
    exc = error_from_retry_meta("daily", "boom", meta)
    assert type(exc) is kind and exc.transient is transient and exc.message == "boom"
    assert getattr(exc, "retry_after_s", None) == after


@pytest.mark.parametrize(
    "meta",
    [{"retryable": "yes"}, {"retryable": True, "reason": "tired"}, {"retryable": True, "reason": "quota", "retry_after_s": -1}, ["x"]],
)
def test_a_malformed_retry_marking_is_an_error_that_names_it(meta):
    exc = error_from_retry_meta("daily", "boom", meta)
    assert exc.transient is False and RETRY_META_KEY in exc.message and "boom" in exc.message


# --------------------------------------------------------------------------- the retry policy of metered calls


def test_a_429_is_retried_after_its_retry_after_not_a_whole_window():
    """The policy (dataservice/quota.quota_retrying) waits what the provider names: HTTP 429 with
    Retry-After: 7 is sent again 7 s later, twice, then fails naming the bounded refusals."""
    clock = FakeClock()
    with fake_tushare(clock) as url, pytest.raises(ToolCallError) as failure:
        _call(url, "http_429", {}, clock=clock, limiter=_limiter(clock), rate_limit_retries=2)
    assert failure.value.transient is False
    assert "still refused after waiting out 2 rate-limit window(s)" in failure.value.message
    assert len(FakeTushare.requests) == 3 and clock.sleeps == [7.0, 7.0]


def test_the_quota_policy_gives_up_before_waiting_past_its_limit():
    """`max_wait_s` bounds the waiting: a hold that would end past it is not waited at all."""
    from livesearch_pipeline.dataservice.quota import call_with_quota

    clock = FakeClock()
    limiter = _limiter(clock)
    sent: list[float] = []

    async def send() -> dict:
        sent.append(clock())
        raise RateLimitedError("toy", "busy", retry_after_s=40.0, upstream=True)

    with pytest.raises(ToolCallError) as failure:
        anyio.run(lambda: call_with_quota(limiter, "toy", send, tool="toy", max_rejections=9, max_wait_s=100.0))
    # Sent at 0 and after 40 s and 80 s; a third hold would end at 120 s > 100 s.
    assert [t - sent[0] for t in sent] == [0.0, 40.0, 80.0]
    assert "gave up after waiting 80 s for quota (limit 100 s)" in failure.value.message
    assert failure.value.transient is False


def test_only_rate_limits_are_retried_by_the_quota_policy():
    from livesearch_pipeline.dataservice.quota import call_with_quota

    clock = FakeClock()
    attempts = []

    async def send() -> dict:
        attempts.append(clock())
        raise ToolCallError("toy", "provider down", transient=True)

    with pytest.raises(ToolCallError, match="provider down"):
        anyio.run(lambda: call_with_quota(_limiter(clock), "toy", send, tool="toy"))
    # A transient failure that is not a rate limit is the executor's to retry (core/executor).
    assert len(attempts) == 1 and clock.sleeps == []
