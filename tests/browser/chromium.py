"""A small Chrome DevTools Protocol client over one websocket (websocket-client), enough to open a
file in headless Chromium with the network cut off, watch the console and every request, move
the mouse and take screenshots. The browser runs in a fresh profile and is stopped by its PID.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

# name -> (render ms, file bytes) of the pages the tests opened; conftest prints them at the end.
RENDER_TIMES: dict[str, tuple[float, int]] = {}

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--hide-scrollbars",
    "--no-default-browser-check",
    # Belt and braces on top of the page's own CSP and the offline emulation: no name resolves and
    # every proxied request goes to a closed local port.
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
)


def find_chromium() -> str | None:
    env = os.environ.get("FLINKTUNE_CHROMIUM")
    for cand in ((env,) if env else ()) + CHROMIUM_CANDIDATES:
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    return shutil.which("chromium")


class CdpError(RuntimeError):
    pass


class Browser:
    """One headless Chromium and one page (a flattened CDP session on the browser socket)."""

    def __init__(self, binary: str, width: int = 1280, height: int = 900, timeout_s: float = 30.0) -> None:
        import websocket

        self.profile = tempfile.mkdtemp(prefix="flinktune-chromium-")
        self.proc = subprocess.Popen(
            [
                binary,
                *FLAGS,
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            # Chromium's own temp folder (org.chromium.Chromium.*, its singleton socket) goes
            # inside the profile, which close() removes; in /tmp it outlived every run.
            env={**os.environ, "TMPDIR": self.profile},
        )
        self.pid = self.proc.pid
        self.events: list[dict[str, Any]] = []
        self._id = 0
        try:
            url = self._devtools_url(timeout_s)
            self.ws = websocket.create_connection(url, timeout=timeout_s, suppress_origin=True)
            target = self.call("Target.createTarget", url="about:blank")["targetId"]
            self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.call(f"{domain}.enable", session=True)
            self.call(
                "Network.emulateNetworkConditions",
                session=True,
                offline=True,
                latency=0,
                downloadThroughput=-1,
                uploadThroughput=-1,
            )
            self.call(
                "Emulation.setDeviceMetricsOverride",
                session=True,
                width=width,
                height=height,
                deviceScaleFactor=1,
                mobile=False,
            )
        except BaseException:
            self.close()
            raise

    def _devtools_url(self, timeout_s: float) -> str:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + timeout_s
        seen = []
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline().decode("utf-8", "replace")
            if not line:
                if self.proc.poll() is not None:
                    break
                continue
            seen.append(line.strip())
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                return m.group(1)
        raise CdpError("chromium did not start: " + " | ".join(seen[-5:]))

    def call(
        self, method: str, session: bool = False, timeout_s: float = 30.0, **params: Any
    ) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise CdpError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)
        raise CdpError(f"{method}: no answer in {timeout_s} s")

    def wait_event(self, method: str, timeout_s: float = 30.0) -> dict[str, Any]:
        for i, ev in enumerate(self.events):
            if ev["method"] == method:
                return self.events.pop(i)
        deadline = time.monotonic() + timeout_s
        self.ws.settimeout(timeout_s)
        while time.monotonic() < deadline:
            ev = json.loads(self.ws.recv())
            if ev.get("method") == method:
                return ev
            if "method" in ev:
                self.events.append(ev)
        raise CdpError(f"no {method} in {timeout_s} s")

    def evaluate(self, expression: str, await_promise: bool = False) -> Any:
        res = self.call(
            "Runtime.evaluate",
            session=True,
            expression=expression,
            returnByValue=True,
            awaitPromise=await_promise,
        )
        if "exceptionDetails" in res:
            raise CdpError(f"{expression[:60]}: {res['exceptionDetails'].get('text')}")
        return res["result"].get("value")

    def open(self, path: Path) -> float:
        """Navigate to a file; return ms from navigation start until two frames after load."""
        self.events.clear()
        self.call("Page.navigate", session=True, url=path.resolve().as_uri())
        self.wait_event("Page.loadEventFired")
        return float(
            self.evaluate(
                "new Promise(r => requestAnimationFrame(() =>"
                " requestAnimationFrame(() => r(performance.now()))))",
                await_promise=True,
            )
        )

    def console_errors(self) -> list[str]:
        out = []
        for ev in self.events:
            p = ev.get("params", {})
            if ev["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif ev["method"] == "Runtime.exceptionThrown":
                out.append(str(p.get("exceptionDetails", {}).get("text")))
            elif ev["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(p["entry"].get("text", ""))
        return out

    def requests(self) -> list[str]:
        return [
            ev["params"]["request"]["url"]
            for ev in self.events
            if ev["method"] == "Network.requestWillBeSent"
        ]

    def hover(self, selector: str) -> None:
        """Scroll the element into view and move the mouse to its centre."""
        # Two frames after scrolling, so the page's scroll handler has run before the mouse moves.
        box = self.evaluate(
            f"new Promise(done => {{ const e = document.querySelector({json.dumps(selector)});"
            " e.scrollIntoView({block: 'center'});"
            " requestAnimationFrame(() => requestAnimationFrame(() => {"
            " const r = e.getBoundingClientRect();"
            " done([r.left + r.width / 2, r.top + r.height / 2]); })); })",
            await_promise=True,
        )
        self.call("Input.dispatchMouseEvent", session=True, type="mouseMoved", x=box[0], y=box[1])

    def screenshot(self, full_page: bool = False) -> bytes:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            w, h = self.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
            )
            params.update(
                captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": w, "height": h, "scale": 1}
            )
        return base64.b64decode(
            self.call("Page.captureScreenshot", session=True, timeout_s=60, **params)["data"]
        )

    def close(self) -> None:
        try:
            ws = getattr(self, "ws", None)
            if ws is not None:
                ws.close()
        finally:
            if self.proc.poll() is None:
                # Chromium forks helpers into its own session (start_new_session): stop the group.
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.pid, signal.SIGTERM)
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(self.pid, signal.SIGKILL)
                    self.proc.wait(timeout=10)
            if self.proc.stderr is not None:
                self.proc.stderr.close()
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def png_stats(data: bytes) -> tuple[int, int, int, float]:
    """(width, height, distinct colours, share of the most common colour) of a PNG."""
    import io

    from PIL import Image

    img = Image.open(io.BytesIO(data)).convert("RGB")
    colours = img.getcolors(maxcolors=1 << 24) or []
    top = max(c for c, _ in colours) if colours else 0
    return img.width, img.height, len(colours), top / (img.width * img.height)
