"""Machine-translation engines through deep-translator, made safe to run unattended.

deep-translator (1.11.4) is a thin client: it passes no timeout to `requests`, its
`translate_batch` sends one request per text and stops at the first error (losing what
was already translated), it reports HTTP failures with inconsistent exception types that
often drop the status code, and some of its messages and request URLs carry the API key.
This module keeps deep-translator's request building and response parsing and wraps
every HTTP call it makes:

- a deadline on every call: `requests` gets (connect, read) timeouts and the body is read
  in chunks against a wall-clock deadline; no threads are started, so nothing is left
  hanging when a call is abandoned;
- retries with exponential backoff on HTTP 408/429/5xx, timeouts and connection errors
  (bounded attempts, deterministic jitter, `Retry-After` honoured, injectable `sleep`);
- a minimum interval between requests per engine (a rate limit);
- classification from what really happened on the wire (status code, transport error),
  not from deep-translator's exceptions; an unparseable answer fails that text without
  a retry; refused credentials (401/403/456) stop the batch instead of failing every text;
- per-text results from a batch: successes are kept, failures carry a reason;
- API keys read only from the environment, sent in a header or request body (never in a
  URL), and kept out of reprs, reasons and log records.

The wrapping works by swapping the `requests` name inside deep-translator's engine
modules for a stand-in, only while at least one guarded call runs (reference-counted,
thread-safe). The stand-in routes a call to the guard of the calling context
(a ContextVar); a call from anywhere else passes straight through to `requests`.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit

import requests

from schemas.config import ENGINES, Language
from common.errors import InputError

log = logging.getLogger(__name__)

# Environment variables holding each engine's key; None: the engine needs no key.
KEY_ENV = {
    "google": None,
    "mymemory": None,
    "deepl": "DEEPL_API_KEY",
    "microsoft": "MICROSOFT_TRANSLATOR_KEY",
    "libre": "LIBRETRANSLATE_API_KEY",
}
KEY_REQUIRED = {"deepl", "microsoft"}  # a self-hosted LibreTranslate may run without keys
# Seconds between two requests to the same engine, unless configured otherwise. The free
# Google and MyMemory endpoints are shared public services: be gentle. A self-hosted
# LibreTranslate is the user's own.
DEFAULT_MIN_INTERVAL = {"google": 1.0, "mymemory": 1.0, "deepl": 0.2, "microsoft": 0.2, "libre": 0.0}
MAX_RESPONSE_BYTES = 4 << 20  # a translation answer is small; anything bigger is not one
RETRY_STATUS = frozenset({408, 429}) | frozenset(range(500, 600))
FATAL_STATUS = {401: "credentials refused", 403: "credentials refused", 456: "quota exceeded"}


# --- public records ------------------------------------------------------------------------------


class Secret:
    """An API key. Its repr and str never show the value; it refuses to be pickled."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __reduce__(self):
        raise TypeError("an API key is not picklable")


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff: attempt n (1-based) that failed waits about
    base_delay * 2**(n-1), capped at max_delay, shortened by up to `jitter` (a fraction)
    by a hash of (seed, text, attempt), so two runs wait the same and texts spread out.
    A server's Retry-After (seconds) is waited at least, up to max_delay."""

    max_attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 60.0
    jitter: float = 0.5
    seed: int = 0

    def __post_init__(self):
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.base_delay < 0 or self.max_delay < 0 or not 0 <= self.jitter <= 1:
            raise ValueError("delays must be >= 0 and jitter within [0, 1]")

    def delay(self, attempt: int, key: str = "", retry_after: float | None = None) -> float:
        exp = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        digest = hashlib.sha256(f"{self.seed}\0{key}\0{attempt}".encode()).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        d = exp * (1 - self.jitter * u)
        if retry_after:
            d = max(d, min(retry_after, self.max_delay))
        return d


@dataclass(frozen=True)
class TextResult:
    """The outcome for one text: a translation, or the reason there is none.

    `attempts` counts calls to the engine for this text (0: never sent)."""

    text: str
    translation: str | None = None
    error: str | None = None
    attempts: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None


# --- the requests stand-in -----------------------------------------------------------------------

_ACTIVE: ContextVar["_CallGuard | None"] = ContextVar("mmedbench_engine_guard", default=None)
_PATCH_LOCK = threading.Lock()
_PATCH_DEPTH = 0
_PATCHED: list[tuple[Any, Any]] = []
_LOG_FILTER_LOGGERS = ("urllib3.connectionpool", "urllib3.connection", "urllib3.util.retry", "urllib3.response", "root")


class _RequestsShim:
    """Stands in for the `requests` module inside deep-translator's engine modules."""

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def get(self, url, params=None, **kwargs):
        return self.request("GET", url, params=params, **kwargs)

    def post(self, url, data=None, json=None, **kwargs):
        return self.request("POST", url, data=data, json=json, **kwargs)

    def request(self, method, url, **kwargs):
        guard = _ACTIVE.get()
        if guard is None:  # not one of our calls: behave exactly like requests
            return self._real.request(method, url, **kwargs)
        return guard.http(method, url, **kwargs)


class _RedactFilter(logging.Filter):
    """Rewrites a log record that contains the running call's secret."""

    def filter(self, record: logging.LogRecord) -> bool:
        guard = _ACTIVE.get()
        if guard is not None and guard.secrets:
            try:
                msg = record.getMessage()
            except Exception:  # a broken record is the logging module's business
                return True
            clean = _redact(msg, guard.secrets)
            if clean != msg:
                record.msg, record.args = clean, ()
        return True


_REDACT_FILTER = _RedactFilter()


def _install() -> None:
    global _PATCH_DEPTH
    with _PATCH_LOCK:
        if _PATCH_DEPTH == 0:
            from deep_translator import deepl, google, libre, microsoft, mymemory

            shim = _RequestsShim(requests)
            for mod in (google, deepl, microsoft, mymemory, libre):
                _PATCHED.append((mod, mod.requests))
                mod.requests = shim
            for name in _LOG_FILTER_LOGGERS:
                logging.getLogger(None if name == "root" else name).addFilter(_REDACT_FILTER)
        _PATCH_DEPTH += 1


def _uninstall() -> None:
    global _PATCH_DEPTH
    with _PATCH_LOCK:
        _PATCH_DEPTH -= 1
        if _PATCH_DEPTH == 0:
            while _PATCHED:
                mod, original = _PATCHED.pop()
                mod.requests = original
            for name in _LOG_FILTER_LOGGERS:
                logging.getLogger(None if name == "root" else name).removeFilter(_REDACT_FILTER)


def _secret_forms(key: str) -> list[str]:
    """The key as written, and as it looks percent-encoded in a URL or form body."""
    return sorted({key, quote(key, safe=""), quote_plus(key)}, key=len, reverse=True)


def _redact(text: str, secrets: Iterable[str]) -> str:
    for s in secrets:
        if s:
            text = text.replace(s, "***")
    return text


class _Failure(requests.exceptions.RequestException):
    """Raised inside a guarded HTTP call; the guard has recorded what happened."""


class _RateLimiter:
    def __init__(self, min_interval: float, clock: Callable[[], float], sleep: Callable[[float], None]):
        self.min_interval, self._clock, self._sleep = min_interval, clock, sleep
        self._next: float | None = None
        self._lock = threading.Lock()

    def wait(self) -> None:
        with self._lock:
            now = self._clock()
            if self._next is not None and now < self._next:
                self._sleep(self._next - now)
                now = self._next
            self._next = now + self.min_interval


class _CallGuard:
    """Watches the HTTP calls deep-translator makes for one attempt at one text."""

    def __init__(self, engine: "Engine"):
        self.engine = engine
        self.secrets = _secret_forms(engine._key.reveal()) if engine._key else []
        self.requests = 0
        self.status: int | None = None
        self.retry_after: float | None = None
        self.failure: tuple[str, str] | None = None  # (kind, reason); kind: retry | final | fatal

    def http(self, method: str, url: str, **kwargs):
        eng = self.engine
        eng._limiter.wait()
        method, kwargs = eng._rewrite(method.upper(), kwargs)
        kwargs["timeout"] = (eng.timeout, eng.timeout)
        kwargs["stream"] = True
        if self.secrets:  # a redirect must not carry a key header to another host
            kwargs["allow_redirects"] = False
        self.requests += 1
        self.status, self.retry_after, self.failure = None, None, None
        deadline = time.monotonic() + eng.timeout
        resp = None
        try:
            resp = eng._session.request(method, url, **kwargs)
            self.status = resp.status_code
            self.retry_after = _retry_after(resp.headers.get("Retry-After"))
            chunks, size = [], 0
            for chunk in resp.iter_content(chunk_size=65536):
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    self.failure = ("final", f"bad response: larger than {MAX_RESPONSE_BYTES} bytes")
                    raise _Failure()
                if time.monotonic() > deadline:
                    self.failure = ("retry", "timeout")
                    raise _Failure()
            resp._content = b"".join(chunks)  # what .text / .json() read from now on
            resp._content_consumed = True
            return resp
        except _Failure:
            resp.close()
            raise
        except requests.exceptions.Timeout:
            self.failure = ("retry", "timeout")
            raise
        except (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError) as exc:
            from urllib3.exceptions import ReadTimeoutError

            timed_out = any(isinstance(a, ReadTimeoutError) for a in exc.args)
            self.failure = ("retry", "timeout" if timed_out else "connection error")
            if resp is not None:
                resp.close()
            raise
        except requests.exceptions.RequestException as exc:
            self.failure = ("final", f"request error: {type(exc).__name__}")
            if resp is not None:
                resp.close()
            raise


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None  # an HTTP date: the backoff schedule applies


# --- engines -------------------------------------------------------------------------------------


def _check_url(url: str | None) -> str:
    if not url:
        raise InputError("--url", "the libre engine needs the base URL of a LibreTranslate server (e.g. http://localhost:5000)")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError("--url", f"expected an http(s) URL with a host, got {url!r}")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise InputError("--url", "the URL must not carry credentials, a query or a fragment (the key goes in LIBRETRANSLATE_API_KEY)")
    return url if url.endswith("/") else url + "/"


class Engine:
    """One MT engine, chosen by name. Use `open_engine` to build one from the environment."""

    def __init__(
        self,
        name: str,
        *,
        url: str | None = None,
        api_key: Secret | None = None,
        timeout: float = 30.0,
        retry: RetryPolicy = RetryPolicy(),
        min_interval: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        if name not in ENGINES:
            raise InputError("--engine", f"unknown engine {name!r} (known: {', '.join(sorted(ENGINES))})")
        if name == "libre":
            url = _check_url(url)
        elif url is not None:
            raise InputError("--url", f"only the libre engine takes a URL, not {name!r}")
        if name in KEY_REQUIRED and api_key is None:
            raise InputError(KEY_ENV[name], f"environment variable not set: the {name} engine needs an API key")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.name, self.url, self.timeout, self.retry = name, url, float(timeout), retry
        self.min_interval = DEFAULT_MIN_INTERVAL[name] if min_interval is None else float(min_interval)
        if self.min_interval < 0:
            raise ValueError("min_interval must be >= 0")
        self._key = api_key
        self._sleep = sleep
        self._limiter = _RateLimiter(self.min_interval, clock, sleep)
        self._session = requests.Session()
        self._translators: dict[tuple[str, str], Any] = {}

    def __repr__(self) -> str:
        key = "set" if self._key else "none"
        where = f", url={self.url!r}" if self.url else ""
        return f"Engine(name={self.name!r}{where}, api_key=<{key}>, timeout={self.timeout}, min_interval={self.min_interval})"

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # language codes -------------------------------------------------------------------------

    def code_for(self, lang: Language) -> str:
        code = lang.engine_codes.get(self.name)
        if not code:
            raise InputError("language registry", f"language {lang.code!r} has no code for engine {self.name!r}",
                             field=f"languages.{lang.code}.engine_codes.{self.name}")
        return code

    def _translator(self, source: Language, target: Language):
        pair = (self.code_for(source), self.code_for(target))
        if pair[0] == pair[1]:
            raise InputError("--target", f"source and target are the same language ({source.code})")
        if pair not in self._translators:
            self._translators[pair] = self._make_translator(*pair)
        return self._translators[pair]

    def _make_translator(self, src: str, tgt: str):
        from deep_translator.exceptions import BaseError

        key = self._key.reveal() if self._key else None
        try:
            if self.name == "google":
                from deep_translator import GoogleTranslator

                return GoogleTranslator(source=src, target=tgt)
            if self.name == "mymemory":
                from deep_translator import MyMemoryTranslator

                return MyMemoryTranslator(source=src, target=tgt)
            if self.name == "deepl":
                from deep_translator import DeeplTranslator

                return DeeplTranslator(source=src, target=tgt, api_key=key, use_free_api=key.endswith(":fx"))
            if self.name == "microsoft":
                return _microsoft_class()(source=src, target=tgt, api_key=key)
            from deep_translator import LibreTranslator

            # deep-translator insists on a key; a self-hosted server may have none, in
            # which case none is sent.
            t = LibreTranslator(source=src, target=tgt, api_key=key or "unused", custom_url=self.url)
            t.api_key = key
            return t
        except BaseError as exc:
            raise InputError("--engine", f"engine {self.name!r} does not support the language pair {src!r} -> {tgt!r} ({type(exc).__name__})") from None

    def _rewrite(self, method: str, kwargs: dict) -> tuple[str, dict]:
        """Keep keys (and texts) out of URLs: URLs end up in logs and exception messages."""
        if self.name == "libre" and method == "POST" and kwargs.get("params") and not kwargs.get("data"):
            kwargs["data"] = kwargs.pop("params")  # LibreTranslate reads form fields like query ones
        elif self.name == "deepl" and kwargs.get("params"):
            params = dict(kwargs.pop("params"))
            key = params.pop("auth_key", None)
            headers = dict(kwargs.get("headers") or {})
            if key:
                headers["Authorization"] = f"DeepL-Auth-Key {key}"
            kwargs["headers"], kwargs["data"], method = headers, params, "POST"
        return method, kwargs

    # translation ----------------------------------------------------------------------------

    def translate(self, text: str, source: Language, target: Language) -> TextResult:
        return next(self.iter_translate([text], source, target))

    def translate_batch(self, texts: Sequence[str], source: Language, target: Language) -> list[TextResult]:
        """One result per text, in order; a failure never loses the other texts' results."""
        return list(self.iter_translate(texts, source, target))

    def iter_translate(self, texts: Iterable[str], source: Language, target: Language) -> Iterator[TextResult]:
        """Yield each text's result as soon as it is known (so a caller can save it at
        once). Language problems raise InputError before anything is sent."""
        translator = self._translator(source, target)
        fatal: str | None = None
        for i, text in enumerate(texts):
            if fatal is not None:
                yield TextResult(text, error=f"not sent: {fatal} earlier")
                continue
            result, kind = self._translate_one(translator, text, i)
            if kind == "fatal":
                fatal = result.error
            yield result

    def _translate_one(self, translator, text: str, index: int) -> tuple[TextResult, str | None]:
        if not isinstance(text, str) or not text.strip():
            return TextResult(text, error="not sent: empty text"), None
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()
        attempt = 0
        while True:
            attempt += 1
            kind, value, retry_after = self._attempt(translator, text)
            if kind == "ok":
                return TextResult(text, translation=value, attempts=attempt), None
            if kind != "retry" or attempt >= self.retry.max_attempts:
                reason = value if kind != "retry" else f"{value} (gave up after {attempt} attempts)"
                log.debug("%s: text #%d failed: %s", self.name, index, reason)
                return TextResult(text, error=reason, attempts=attempt), kind
            delay = self.retry.delay(attempt, key, retry_after)
            log.debug("%s: text #%d: %s; retry %d/%d in %.2fs", self.name, index, value, attempt + 1,
                      self.retry.max_attempts, delay)
            self._sleep(delay)

    def _attempt(self, translator, text: str) -> tuple[str, str, float | None]:
        """One call; returns ("ok", translation, None) or (kind, reason, retry_after)."""
        guard = _CallGuard(self)
        token = _ACTIVE.set(guard)
        _install()
        value: Any = None
        exc: BaseException | None = None
        try:
            value = translator.translate(text)
        except Exception as e:  # deep-translator raises anything; the guard knows what happened
            exc = e
        finally:
            _uninstall()
            _ACTIVE.reset(token)
        return self._classify(guard, value, exc)

    def _classify(self, guard: _CallGuard, value: Any, exc: BaseException | None) -> tuple[str, str, float | None]:
        if guard.failure is not None:
            kind, reason = guard.failure
            return kind, reason, guard.retry_after
        status = guard.status
        if status is not None and not 200 <= status < 300:
            if status in RETRY_STATUS:
                return "retry", f"HTTP {status}", guard.retry_after
            if status in FATAL_STATUS:
                return "fatal", f"HTTP {status} ({FATAL_STATUS[status]})", None
            return "final", f"HTTP {status}", None
        if exc is not None:
            return "final", _redact(_exception_reason(exc, sent=guard.requests > 0), guard.secrets), None
        if not isinstance(value, str) or not value.strip():
            return "final", "bad response: no translation text", None
        if self.name == "mymemory" and value.lstrip().upper().startswith("MYMEMORY WARNING"):
            return "fatal", "quota exceeded (MyMemory warning instead of a translation)", None
        return "ok", value, None


def _exception_reason(exc: BaseException, sent: bool) -> str:
    from deep_translator.exceptions import NotValidLength, NotValidPayload, TranslationNotFound

    if not sent:
        if isinstance(exc, NotValidLength):
            return "not sent: text too long for the engine"
        if isinstance(exc, NotValidPayload):
            return "not sent: invalid text"
        return f"not sent: {type(exc).__name__}"
    if isinstance(exc, json.JSONDecodeError):  # requests' JSONDecodeError is one too
        return "bad response: not JSON"
    if isinstance(exc, TranslationNotFound):
        return "bad response: no translation"
    if isinstance(exc, (KeyError, IndexError, TypeError, AttributeError, StopIteration, ValueError)):
        return "bad response: unexpected structure"
    return f"bad response: {type(exc).__name__}"


_MICROSOFT = None


def _microsoft_class():
    """MicrosoftTranslator fetches its language list over the network (no timeout) when it
    is constructed; our codes come from the registry, so the list is the pair itself."""
    global _MICROSOFT
    if _MICROSOFT is None:
        from deep_translator import MicrosoftTranslator

        class _Microsoft(MicrosoftTranslator):
            def __init__(self, source: str, target: str, **kwargs):
                self._pair_codes = {source: source, target: target}
                super().__init__(source=source, target=target, **kwargs)

            def _get_supported_languages(self):
                return dict(self._pair_codes)

        _MICROSOFT = _Microsoft
    return _MICROSOFT


def open_engine(
    name: str,
    url: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    retry: RetryPolicy = RetryPolicy(),
    min_interval: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Engine:
    """An engine by name, its API key read from the environment (KEY_ENV[name]).

    A missing required key, an unknown engine or a bad URL raises InputError (one line,
    never containing a key)."""
    env = os.environ if environ is None else environ
    if name not in ENGINES:
        raise InputError("--engine", f"unknown engine {name!r} (known: {', '.join(sorted(ENGINES))})")
    var = KEY_ENV[name]
    raw = env.get(var, "").strip() if var else ""
    return Engine(name, url=url, api_key=Secret(raw) if raw else None, timeout=timeout, retry=retry,
                  min_interval=min_interval, sleep=sleep, clock=clock)
