"""tasks/translation/engines.py driving deep-translator's real LibreTranslator against a fake
LibreTranslate server on 127.0.0.1 (no other network): retries, deadlines, garbage,
gates, keys, rate limit, and a run killed mid-way then resumed."""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
import typer
from typer.testing import CliRunner

from mmedbench.cli_translate import tmx_export, tmx_import, translate
from schemas.config import load_registry
from common.errors import InputError
from tasks.translation.engines import Engine, RetryPolicy, Secret, open_engine
from tasks.translation.memory import TranslationMemory
from tasks.translation.tm_store import TMStore, read_entries, translate_texts

ROOT = Path(__file__).resolve().parents[3]
REGISTRY = load_registry(ROOT / "configs" / "languages.toml")
EN, FR = REGISTRY["en"], REGISTRY["fr"]
SECRET = "sk-test-7f3a9c1e-do-not-log"

# Short medical terms (under six words: the gates skip language ID, as for concept names).
FRENCH = {
    "Chronic kidney disease": "Maladie rénale chronique",
    "Heart failure": "Insuffisance cardiaque",
    "Type 2 diabetes": "Diabète de type 2",
    "High blood pressure": "Hypertension artérielle",
    "Acute myocardial infarction": "Infarctus aigu du myocarde",
    "Iron deficiency anemia": "Anémie ferriprive",
    "Lung cancer": "Cancer du poumon",
    "Migraine with aura": "Migraine avec aura",
    "Atrial fibrillation": "Fibrillation atriale",
    "Pulmonary embolism": "Embolie pulmonaire",
}
TERMS = list(FRENCH)
SLOW_SECONDS = 10.0  # how long a "slow" answer would take; the stop event cuts it short


class FakeLibre:
    """A LibreTranslate-compatible /translate endpoint. `script[text]` lists the action
    for each successive request for that text (the last one repeats): ok, echo, 429,
    500, 403, garbage, badjson, nulltext, slow."""

    def __init__(self):
        self.script: dict[str, list[str]] = {}
        self.requests: Counter = Counter()  # requests received per text
        self.answered: Counter = Counter()  # translations returned per text
        self.keys: list[str | None] = []
        self.paths: list[str] = []
        self.arrivals: list[float] = []
        self.hang_after: int | None = None  # hold the request after this many answers
        self.hung = threading.Event()
        self.stop = threading.Event()
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                fake.handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> "FakeLibre":
        self.thread.start()
        return self

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def handle(self, h: BaseHTTPRequestHandler) -> None:
        body = h.rfile.read(int(h.headers.get("Content-Length") or 0)).decode("utf-8")
        if "json" in (h.headers.get("Content-Type") or ""):
            fields = json.loads(body or "{}")
        else:  # form fields, or query parameters as deep-translator sends them
            fields = {k: v[0] for k, v in {**parse_qs(urlsplit(h.path).query), **parse_qs(body)}.items()}
        q, target = fields.get("q", ""), fields.get("target", "")
        with self.lock:
            self.paths.append(h.path)
            self.keys.append(fields.get("api_key"))
            self.arrivals.append(time.monotonic())
            n = self.requests[q]
            self.requests[q] += 1
            hang = self.hang_after is not None and sum(self.answered.values()) >= self.hang_after
        if hang:
            self.hung.set()
            self.stop.wait(20)  # until the test kills the client and stops the server
            return self._send(h, 503, b"{}")
        steps = self.script.get(q, ["ok"])
        action = steps[min(n, len(steps) - 1)]
        if action == "slow":
            self.stop.wait(SLOW_SECONDS)
            action = "ok"
        if action in ("ok", "echo"):
            text = q if action == "echo" else FRENCH.get(q, f"traduction : {q}")
            with self.lock:
                self.answered[q] += 1
            return self._send(h, 200, json.dumps({"translatedText": text}).encode())
        if action == "429":
            return self._send(h, 429, b'{"error": "Slowdown"}', {"Retry-After": "2"})
        if action in ("500", "403"):
            return self._send(h, int(action), b'{"error": "nope"}')
        if action == "garbage":
            return self._send(h, 200, b"<html><body>Bad gateway?</body", {"Content-Type": "text/html"})
        if action == "badjson":
            return self._send(h, 200, b'{"error": "no translatedText here"}')
        if action == "nulltext":
            return self._send(h, 200, b'{"translatedText": null}')
        raise AssertionError(f"unknown action {action}")

    @staticmethod
    def _send(h, status: int, body: bytes, headers: dict | None = None) -> None:
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
        except OSError:  # the client gave up (deadline) or was killed
            pass


@pytest.fixture(autouse=True)
def _no_proxy_for_localhost(monkeypatch):
    """A CI proxy setting must not route 127.0.0.1 anywhere: these tests never leave the machine."""
    for var in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def server():
    fake = FakeLibre().start()
    yield fake
    fake.close()
    assert not fake.thread.is_alive()


@pytest.fixture
def sleeps():
    return []


@pytest.fixture
def engine(server, sleeps, monkeypatch):
    monkeypatch.delenv("LIBRETRANSLATE_API_KEY", raising=False)
    eng = open_engine("libre", server.url, timeout=0.3, retry=RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=5),
                      sleep=sleeps.append)
    yield eng
    eng.close()


def _store_fixture(tmp_path):
    return TMStore(tmp_path / "memory.jsonl")


# --- single texts and batches ----------------------------------------------------------------


def test_success_through_the_real_libre_client(engine, server):
    import deep_translator.libre

    results = engine.translate_batch(TERMS[:3], EN, FR)
    assert [r.translation for r in results] == [FRENCH[t] for t in TERMS[:3]]
    assert all(r.ok and r.attempts == 1 for r in results)
    assert server.requests == Counter({t: 1 for t in TERMS[:3]})
    # the text travelled in the form body, not in the URL
    assert all(p == "/translate" for p in server.paths)
    # the stand-in for `requests` is gone once the call returns
    assert deep_translator.libre.requests is requests


def test_429_is_retried_with_retry_after(engine, server, sleeps):
    server.script["Heart failure"] = ["429", "ok"]
    r = engine.translate("Heart failure", EN, FR)
    assert r.ok and r.translation == "Insuffisance cardiaque" and r.attempts == 2
    assert server.requests["Heart failure"] == 2
    assert sleeps == [2.0]  # the server's Retry-After beats the 0.01 s backoff


def test_timeout_is_a_deadline_and_is_retried(engine, server):
    server.script["Lung cancer"] = ["slow"]  # every answer takes 10 s; the deadline is 0.3 s
    server.script["Heart failure"] = ["slow", "ok"]
    before = {t for t in threading.enumerate() if "process_request" not in t.name}
    results = engine.translate_batch(["Lung cancer", "Heart failure", "Type 2 diabetes"], EN, FR)
    assert results[0].error == "timeout (gave up after 3 attempts)" and results[0].attempts == 3
    assert results[1].ok and results[1].attempts == 2
    assert results[2].translation == "Diabète de type 2"
    assert server.requests["Lung cancer"] == 3
    # the client gave up at its deadline: no slow answer (10 s each) had been sent yet
    assert server.answered["Lung cancer"] == 0 and server.answered["Heart failure"] == 1
    after = {t for t in threading.enumerate() if "process_request" not in t.name}
    assert after <= before  # no client-side thread left behind


def test_500_retried_then_recorded_while_other_texts_succeed(engine, server, sleeps):
    server.script["Heart failure"] = ["500"]
    results = engine.translate_batch(["Lung cancer", "Heart failure", "Type 2 diabetes"], EN, FR)
    assert [r.ok for r in results] == [True, False, True]
    assert results[1].error == "HTTP 500 (gave up after 3 attempts)"
    assert server.requests["Heart failure"] == 3
    assert server.answered == Counter({"Lung cancer": 1, "Type 2 diabetes": 1})
    # exponential backoff, shortened by at most half (jitter), deterministic
    assert len(sleeps) == 2 and 0.005 <= sleeps[0] <= 0.01 and 0.01 <= sleeps[1] <= 0.02
    assert sleeps == [RetryPolicy(base_delay=0.01).delay(i, _sha("Heart failure")) for i in (1, 2)]


@pytest.mark.parametrize("action, reason", [
    ("garbage", "bad response: not JSON"),
    ("badjson", "bad response: unexpected structure"),
    ("nulltext", "bad response: no translation text"),
])
def test_garbage_answer_fails_that_text_without_retry(engine, server, sleeps, action, reason):
    server.script["Heart failure"] = [action, "ok"]
    results = engine.translate_batch(["Heart failure", "Lung cancer"], EN, FR)
    assert results[0].error == reason and results[0].attempts == 1
    assert server.requests["Heart failure"] == 1 and sleeps == []
    assert results[1].translation == "Cancer du poumon"


def test_wrong_language_answer_is_rejected_by_the_gates(engine, server, tmp_path):
    sentence = "The patient has chronic kidney disease and needs dialysis three times a week."
    server.script[sentence] = ["echo"]  # the server answers in English for a French target
    with _store_fixture(tmp_path) as store:
        counts = translate_texts(store, engine, [sentence, "Heart failure"], "en", "fr", REGISTRY)
        assert counts.accepted == 1 and counts.rejected == 1
        assert counts.rejected_by_reason == Counter({"copy": 1, "langid": 1})
    entries = read_entries(tmp_path / "memory.jsonl")
    assert [e.source for e in entries] == ["Heart failure"]  # the echo never reaches the memory
    rejected = [json.loads(line) for line in (tmp_path / "memory.rejected.jsonl").read_text().splitlines()]
    assert rejected[0]["source"] == sentence and "langid: detected en, expected fr" in rejected[0]["reasons"]


def test_rate_limit_uses_the_injected_clock_and_sleep(server):
    now = [100.0]
    slept = []

    def fake_sleep(s):
        slept.append(s)
        now[0] += s

    eng = open_engine("libre", server.url, environ={}, min_interval=0.5, clock=lambda: now[0], sleep=fake_sleep)
    with eng:
        eng.translate_batch(TERMS[:3], EN, FR)
    assert slept == [0.5, 0.5]


# --- keys ------------------------------------------------------------------------------------


def test_api_key_reaches_the_server_but_nothing_else(server, tmp_path, monkeypatch, caplog, sleeps):
    monkeypatch.setenv("LIBRETRANSLATE_API_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    logging.getLogger("urllib3").setLevel(logging.DEBUG)
    server.script["Pulmonary embolism"] = ["403"]  # deep-translator puts the key in this error's message
    eng = open_engine("libre", server.url, timeout=1.0, retry=RetryPolicy(max_attempts=2, base_delay=0.01), sleep=sleeps.append)
    texts = ["Heart failure", "Lung cancer", "Pulmonary embolism", "Atrial fibrillation"]
    with eng, _store_fixture(tmp_path) as store:
        counts = translate_texts(store, eng, texts, "en", "fr", REGISTRY)
        results_repr = repr(eng) + repr(eng._key) + str(eng._key) + counts.summary()
    assert server.keys == [SECRET, SECRET, SECRET]  # received, in the body...
    assert not any(SECRET in p for p in server.paths)  # ...never in a URL
    # credentials refused: the rest of the batch is not sent, and the reason carries no key
    assert counts.failed_by_reason == Counter({"HTTP 403 (credentials refused)": 1,
                                               "not sent: HTTP 403 (credentials refused) earlier": 1})
    assert "Atrial fibrillation" not in server.requests
    assert caplog.records, "urllib3 debug logging was captured"
    for where in (caplog.text, results_repr, (tmp_path / "memory.jsonl").read_text()):
        assert SECRET not in where
    assert "api_key=<set>" in repr(eng)
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(Secret(SECRET))


def test_log_records_are_redacted_even_if_a_key_reaches_a_url(server, monkeypatch, caplog):
    """Defence in depth: were a client to put the key in a URL (deep-translator does, for
    LibreTranslate and DeepL), urllib3's debug line is redacted, encoded forms included."""
    odd_key = "sk/test+key=7f3a 9c"
    monkeypatch.setattr(Engine, "_rewrite", lambda self, method, kw: (method, kw))
    caplog.set_level(logging.DEBUG)
    logging.getLogger("urllib3").setLevel(logging.DEBUG)
    with open_engine("libre", server.url, environ={"LIBRETRANSLATE_API_KEY": odd_key}) as eng:
        assert eng.translate("Heart failure", EN, FR).ok
    assert server.keys == [odd_key] and "api_key=" in server.paths[0]  # it did travel in the URL
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("urllib3")]
    assert any("/translate?" in line for line in lines)
    from urllib.parse import quote, quote_plus

    for form in (odd_key, quote(odd_key, safe=""), quote_plus(odd_key)):
        assert form not in caplog.text


@pytest.mark.parametrize("name, var", [("deepl", "DEEPL_API_KEY"), ("microsoft", "MICROSOFT_TRANSLATOR_KEY")])
def test_missing_required_key_is_a_one_line_input_error(name, var):
    with pytest.raises(InputError) as exc:
        open_engine(name, environ={})
    msg = str(exc.value)
    assert var in msg and "\n" not in msg


def test_engines_are_built_without_network_and_keep_keys_private():
    env = {"DEEPL_API_KEY": SECRET, "MICROSOFT_TRANSLATOR_KEY": SECRET}
    for name in ("google", "mymemory", "deepl", "microsoft"):
        eng = open_engine(name, environ=env)
        eng._translator(EN, FR)  # Microsoft's constructor would fetch its language list: not ours
        assert SECRET not in repr(eng) and eng.name == name
    with pytest.raises(InputError, match="unknown engine"):
        open_engine("babelfish", environ={})
    with pytest.raises(InputError, match="needs the base URL"):
        open_engine("libre", environ={})
    with pytest.raises(InputError, match="only the libre engine"):
        open_engine("google", "http://localhost:5000", environ={})


def test_deepl_key_moves_to_a_header(server):
    """DeepL's client puts the key in the query string; the wrapper sends it as a header."""
    eng = open_engine("deepl", environ={"DEEPL_API_KEY": SECRET})
    method, kw = eng._rewrite("GET", {"params": {"auth_key": SECRET, "text": "x", "source_lang": "en", "target_lang": "fr"}})
    assert method == "POST" and kw["headers"] == {"Authorization": f"DeepL-Auth-Key {SECRET}"}
    assert "auth_key" not in kw["data"] and "params" not in kw


def test_jitter_is_deterministic_and_bounded():
    p = RetryPolicy(base_delay=1.0, max_delay=8.0, jitter=0.5, seed=7)
    d = [p.delay(a, "k") for a in range(1, 7)]
    assert d == [p.delay(a, "k") for a in range(1, 7)]
    assert all(0.5 * min(8, 2 ** (a - 1)) <= x <= min(8, 2 ** (a - 1)) for a, x in zip(range(1, 7), d))
    assert p.delay(1, "k") != p.delay(1, "other text")  # texts do not retry in lockstep
    assert p.delay(1, "k", retry_after=30) == 8.0  # Retry-After is honoured up to max_delay


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


# --- killed mid-way, then resumed --------------------------------------------------------------

CHILD = """
import sys, typer
from mmedbench.cli_translate import translate
sys.argv = ["mmedbench-translate"] + sys.argv[1:]
typer.run(translate)
"""


def test_killed_run_resumes_without_loss_or_resend(server, tmp_path, engine):
    texts = TERMS[:8]
    infile = tmp_path / "terms.txt"
    infile.write_text("\n".join(texts) + "\n", encoding="utf-8")
    memory = tmp_path / "memory.jsonl"
    server.hang_after = 5  # the 6th request is held until the client is killed
    env = {k: v for k, v in os.environ.items() if k != "LIBRETRANSLATE_API_KEY"}
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, "--engine", "libre", "--url", server.url, "--source", "en", "--target", "fr",
         "--memory", str(memory), "--config", str(ROOT / "configs" / "sample.toml"), "--min-interval", "0", str(infile)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        hung = server.hung.wait(30)
    finally:
        proc.kill()  # SIGKILL: no cleanup, no finally blocks, no flush in the child
        _, err = proc.communicate(timeout=10)
    assert hung, err.decode()
    assert proc.returncode != 0
    saved = read_entries(memory)
    assert [e.source for e in saved] == texts[:5]  # every answered text was on disk before the kill

    server.hang_after = None
    with TMStore(memory) as store:
        counts = translate_texts(store, engine, texts, "en", "fr", REGISTRY)
    assert (counts.reused, counts.sent, counts.accepted, counts.failed) == (5, 3, 3, 0)
    assert all(server.answered[t] == 1 for t in texts), server.answered  # nothing translated twice
    interrupted = texts[5]
    assert server.requests[interrupted] == 2  # sent, never answered (killed), sent again
    assert all(server.requests[t] == 1 for t in texts if t != interrupted)
    tm = TranslationMemory.from_files([memory])
    assert len(tm) == 8 and tm.lookup(texts[7], "en", "fr").target == FRENCH[texts[7]]


# --- the CLI ---------------------------------------------------------------------------------


def _app() -> typer.Typer:
    """The commands as mmedbench/cli.py registers them."""
    app = typer.Typer()
    app.command()(translate)
    app.command("tmx-export")(tmx_export)
    app.command("tmx-import")(tmx_import)
    return app


def test_cli_translate_summary_and_resume(server, tmp_path, monkeypatch):
    monkeypatch.delenv("LIBRETRANSLATE_API_KEY", raising=False)
    infile = tmp_path / "in.txt"
    infile.write_text("Heart failure\r\n\nLung cancer\nHeart failure\n", encoding="utf-8")
    memory = tmp_path / "tm" / "memory.jsonl"
    args = ["translate", "--engine", "libre", "--url", server.url, "--source", "en", "--target", "fr",
            "--memory", str(memory), "--config", str(ROOT / "configs" / "sample.toml"), str(infile)]
    first = CliRunner().invoke(_app(), args)
    assert first.exit_code == 0, first.output
    assert first.stdout.strip().splitlines() == [
        f"translate en->fr with libre: 3 texts: 0 reused, 1 duplicates, 2 sent (2 requests), 2 accepted, "
        f"0 rejected, 0 failed; memory {memory}"]
    second = CliRunner().invoke(_app(), args)
    assert second.exit_code == 0 and "2 reused, 1 duplicates, 0 sent" in second.stdout
    assert sum(server.requests.values()) == 2


def test_cli_failures_exit_1(server, tmp_path, monkeypatch):
    monkeypatch.delenv("LIBRETRANSLATE_API_KEY", raising=False)
    server.script["Lung cancer"] = ["garbage"]
    infile = tmp_path / "in.txt"
    infile.write_text("Lung cancer\nHeart failure\n", encoding="utf-8")
    res = CliRunner().invoke(_app(), ["translate", "--engine", "libre", "--url", server.url, "--source", "en",
                                      "--target", "fr", "--memory", str(tmp_path / "m.jsonl"), "--config",
                                      str(ROOT / "configs" / "sample.toml"), str(infile)])
    assert res.exit_code == 1
    assert "1 accepted" in res.stdout and "1 failed (bad response: not JSON: 1)" in res.stdout


@pytest.mark.parametrize("extra, env, expected", [
    (["--engine", "deepl", "--source", "en", "--target", "fr"], {}, "error: DEEPL_API_KEY: environment variable not set"),
    (["--engine", "libre", "--source", "en", "--target", "fr"], {}, "error: --url: the libre engine needs the base URL"),
    (["--engine", "google", "--source", "en", "--target", "xx"], {}, "error: --target: unknown language code 'xx'"),
    (["--engine", "nope", "--source", "en", "--target", "fr"], {}, "error: --engine: unknown engine 'nope'"),
])
def test_cli_user_errors_are_one_line_exit_2(tmp_path, monkeypatch, extra, env, expected):
    for var in ("DEEPL_API_KEY", "MICROSOFT_TRANSLATOR_KEY", "LIBRETRANSLATE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    infile = tmp_path / "in.txt"
    infile.write_text("Heart failure\n", encoding="utf-8")
    res = CliRunner().invoke(_app(), ["translate", *extra, "--memory", str(tmp_path / "m.jsonl"),
                                      "--config", str(ROOT / "configs" / "sample.toml"), str(infile)])
    assert res.exit_code == 2
    assert res.stderr.startswith(expected) and res.stderr.count("\n") == 1, res.stderr
    assert not (tmp_path / "m.jsonl").exists() or (tmp_path / "m.jsonl").read_bytes() == b""
