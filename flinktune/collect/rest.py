"""A small JSON client for Flink's REST API (standard library only), with retries and backoff.

Transient failures (connection reset or refused, timeouts, HTTP 429 and 5xx) are retried with
exponential backoff; anything else (404, 400, a reply that is not JSON) fails at once with a
`CollectError` whose message names the URL and what went wrong.
"""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flinktune.errors import CollectError

_TRANSIENT_HTTP = frozenset({408, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """``attempts`` tries in all; waits ``initial_backoff_s`` doubling up to ``max_backoff_s``."""

    attempts: int = 4
    initial_backoff_s: float = 0.5
    max_backoff_s: float = 5.0
    timeout_s: float = 10.0

    def backoff_s(self, failed_attempts: int) -> float:
        return min(self.max_backoff_s, self.initial_backoff_s * (2 ** (failed_attempts - 1)))


class HttpStatusError(CollectError):
    """Flink answered with an HTTP error status; ``status`` and Flink's own ``errors`` text are kept."""

    def __init__(self, message: str, *, status: int, detail: str) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail


def normalise_base_url(url: str) -> str:
    """Check the URL is http(s)://host[:port][/prefix] and drop a trailing slash."""
    parsed = urllib.parse.urlsplit(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise CollectError(f"--url {url!r} is not an http(s) URL such as http://127.0.0.1:8081")
    try:
        _ = parsed.port
    except ValueError:
        raise CollectError(f"--url {url!r} has an invalid port") from None
    return url.strip().rstrip("/")


def _flink_error_text(body: bytes) -> str:
    try:
        errors = json.loads(body.decode("utf-8", "replace")).get("errors")
    except (ValueError, AttributeError):
        return ""
    if isinstance(errors, list) and errors:
        # Flink puts a Java stack trace into errors[1] on 500s; the first line of each entry is enough.
        return "; ".join(str(e).strip().splitlines()[0] for e in errors if str(e).strip())[:300]
    return ""


def _reason(error: BaseException) -> str:
    if isinstance(error, urllib.error.URLError):
        inner = error.reason
        if isinstance(inner, ConnectionRefusedError):
            return "connection refused"
        if isinstance(inner, socket.gaierror):
            return "host name does not resolve"
        if isinstance(inner, TimeoutError | socket.timeout):
            return "timed out"
        return str(inner)
    if isinstance(error, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(error, ConnectionResetError):
        return "connection reset"
    return f"{type(error).__name__}: {error}"


class FlinkRestClient:
    """GET JSON from one Flink REST endpoint base URL (e.g. ``http://127.0.0.1:8081``)."""

    def __init__(
        self,
        base_url: str,
        *,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = normalise_base_url(base_url)
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        # No proxies: a collector pointed at a loopback REST API must talk to it directly.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self.requests = 0
        self.retries = 0

    def url_for(self, path: str, query: dict[str, str] | None = None) -> str:
        url = f"{self.base_url}/{path.lstrip('/')}"
        if query:
            url += "?" + urllib.parse.urlencode(query, safe=",")
        return url

    def get_json(self, path: str, query: dict[str, str] | None = None) -> Any:
        url = self.url_for(path, query)
        failed = 0
        while True:
            self.requests += 1
            try:
                return self._get_once(url)
            except HttpStatusError as error:
                if error.status not in _TRANSIENT_HTTP:
                    raise
                last: CollectError = error
            except (urllib.error.URLError, OSError) as error:
                last = CollectError(f"cannot reach Flink's REST API at {url}: {_reason(error)}")
            failed += 1
            if failed >= self.retry.attempts:
                raise CollectError(f"{last.message} (gave up after {failed} attempts)")
            self.retries += 1
            self._sleep(self.retry.backoff_s(failed))

    def _get_once(self, url: str) -> Any:
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        try:
            with self._opener.open(request, timeout=self.retry.timeout_s) as response:
                body = response.read()
        except urllib.error.HTTPError as error:
            try:
                detail = _flink_error_text(error.read())
            except OSError:
                detail = ""
            message = f"GET {url} answered HTTP {error.code}"
            raise HttpStatusError(
                f"{message}: {detail}" if detail else message,
                status=error.code,
                detail=detail,
            ) from None
        try:
            return json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise CollectError(f"GET {url} did not answer JSON: is this Flink's REST API?") from None
