"""Issue 30, finding 14: the one redaction function (core/redaction.py) and the gaps the red team found.

Each case is a text that kept part of a secret before; after `redact`, none of it is left and the
text around it is unchanged. The same function serves the alert payload (checked here through
`Alert.body`) and the Tushare forwarder (test_tushare.py, test_dataapi_hardening30.py).
"""

from __future__ import annotations

import json
import urllib.parse

import pytest

from livesearch_pipeline.core.redaction import REDACTED, redact, spellings
from livesearch_pipeline.defs.ops.alerts import Alert, secret_values

PASSPHRASE = "correct horse battery staple"
ENV_SECRET = "p@ss/w0rd:9&x y"


@pytest.mark.parametrize(("text", "left", "kept"), [
    # a multi-word password, quoted: the whole value goes, not only its first word
    (f'connect failed: password="{PASSPHRASE}" host=db', ["horse", "battery", "staple", "correct"], "host=db"),
    (f"connect failed: password='{PASSPHRASE}' host=db", ["horse", "battery", "staple", "correct"], "host=db"),
    (f'config {json.dumps({"password": PASSPHRASE, "user": "ops"})}', ["horse", "battery", "staple"], '"user": "ops"'),
    # JSON inside JSON inside JSON: escaped quotes around the name and the value
    (f"payload {json.dumps(json.dumps({'db_password': PASSPHRASE, 'n': 1}))}", ["horse", "staple"], "n"),
    (f"payload {json.dumps(json.dumps(json.dumps({'api_key': 'k-77 88 99', 'n': 1})))}", ["77", "88", "99"], "n"),
    # a bearer token with characters outside base64
    ("upstream said 401 to Authorization: Bearer abc$def!ghi%jk&l (retry)", ["abc", "def!", "ghi"], "(retry)"),
    ("Authorization: Basic dXNlcjpw$YXNz!", ["dXNlcjpw", "YXNz"], "Authorization: Basic"),
    # a key-like parameter inside an URL-encoded URL (a redirect target)
    ("GET /login?next=https%3A%2F%2Fapi.example%2Fq%3Fapikey%3Ds3cr3t%2Bv4lue%26date%3D20261127",
     ["s3cr3t", "v4lue"], "%26date%3D20261127"),
])
def test_each_gap_is_closed(text, left, kept):
    out = redact(text)
    for word in left:
        assert word not in out, out
    assert kept in out and REDACTED in out


@pytest.mark.parametrize("form", [
    ENV_SECRET,
    urllib.parse.quote(ENV_SECRET, safe=""),  # p%40ss%2Fw0rd%3A9%26x%20y
    urllib.parse.quote_plus(ENV_SECRET),  # p%40ss%2Fw0rd%3A9%26x+y
    json.dumps(ENV_SECRET)[1:-1],
    json.dumps(json.dumps(ENV_SECRET))[1:-1],
])
def test_a_known_secret_goes_in_every_spelling(form):
    assert form in spellings(ENV_SECRET) or form == json.dumps(json.dumps(ENV_SECRET))[1:-1]
    secrets = secret_values(environ={"LIVESEARCH_PG_PASSWORD": ENV_SECRET})
    out = redact(f"dsn postgresql://db/x?sslmode=require&x={form} failed", secrets)
    assert "w0rd" not in out and "p%40ss" not in out and "failed" in out


def test_the_alert_payload_goes_through_the_same_function():
    message = (f'password="{PASSPHRASE}"; Bearer abc$def!ghi; '
               f"{json.dumps(json.dumps({'password': PASSPHRASE}))}; {urllib.parse.quote(ENV_SECRET, safe='')}")
    alert = Alert(kind="run_failure", job="daily_refresh", partition="2026-11-27", step="s", message=message)
    body = json.dumps(alert.body(secret_values(environ={"X_SECRET": ENV_SECRET})))
    for word in ("horse", "battery", "staple", "abc$def", "w0rd"):
        assert word not in body, body


def test_ordinary_text_is_left_alone():
    text = "daily 600519.SH close=1712.35 token count 3; the tokens: 5; passed 12 checks"
    assert redact(text) == text
