"""Open a local HTML file in headless Chromium, as a person would, and report what happened.

Chromium is driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: file
descriptors 3 and 4, JSON messages ended by a NUL byte), so there is no port, no network and
no client library. Every host name resolves to nothing (`--host-resolver-rules`), so a page that
tried to fetch anything from the network logs an error. What comes back:

* the console: `console.error` calls, uncaught exceptions, and the browser's own log entries of
  level error (failed resource loads, blocked content); the other messages are kept too, to
  show when a check fails;
* the value of a JavaScript expression evaluated after the load event (the page's checks);
* a PNG screenshot of the whole page.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageVisit:
    console_errors: list[str] = field(default_factory=list)
    console_messages: list[str] = field(default_factory=list)  # every entry, for failure output
    value: Any = None
    screenshot: bytes = b""
    width: int = 0
    height: int = 0


class BrowserError(RuntimeError):
    pass


class _Pipe:
    """One DevTools session over the browser's pipe."""

    def __init__(self, write_fd: int, read_fd: int, deadline: float) -> None:
        self.write_fd, self.read_fd, self.deadline = write_fd, read_fd, deadline
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> int:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            written = os.write(self.write_fd, data)
            data = data[written:]
        return self.next_id

    def receive(self) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("chromium did not answer in time")
            ready, _, _ = select.select([self.read_fd], [], [], left)
            if ready:
                chunk = os.read(self.read_fd, 1 << 20)
                if not chunk:
                    raise BrowserError("chromium closed the DevTools pipe")
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        wanted = self.send(method, params, session)
        while True:
            message = self.receive()
            if message.get("id") == wanted:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, method: str) -> None:
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self.receive())


def _describe(event: dict[str, Any]) -> tuple[str, bool] | None:
    """(text, is_error) for a console-like event; None for other events."""
    method, params = event.get("method"), event.get("params", {})
    if method == "Runtime.consoleAPICalled":
        args = " ".join(
            str(a.get("value", a.get("description", ""))) for a in params.get("args", [])
        )
        kind = params.get("type", "log")
        return f"console.{kind}: {args}", kind in ("error", "assert")
    if method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails", {})
        text = details.get("exception", {}).get("description") or details.get("text", "")
        return f"uncaught exception: {text}", True
    if method == "Log.entryAdded":
        entry = params.get("entry", {})
        level = entry.get("level", "info")
        where = f" ({entry['url']})" if entry.get("url") else ""
        text = f"{entry.get('source', 'log')} {level}: {entry.get('text', '')}{where}"
        return text, level == "error"
    return None


def visit(
    page: Path, expression: str, *, chromium: str, width: int = 1280, timeout: float = 60.0
) -> PageVisit:
    """Load `page` (a local file), evaluate `expression` after the load event (its value must be
    JSON-serializable; a Promise is awaited), and take a full-page screenshot."""
    to_browser_read, to_browser_write = os.pipe()
    from_browser_read, from_browser_write = os.pipe()
    profile = tempfile.mkdtemp(prefix="kw-chromium-")
    arguments = [
        "--headless",
        "--no-sandbox",  # containers and root: the sandbox needs namespaces they lack
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # any network fetch fails, and is logged
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        "--remote-debugging-pipe",
        "about:blank",
    ]
    # The protocol wants the pipe on descriptors 3 (to the browser) and 4 (from it); bash moves
    # them there (dash's redirections take single-digit descriptors only).
    launcher = f'exec 3<&{to_browser_read} 4>&{from_browser_write}; exec "$0" "$@"'
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(
        ["bash", "-c", launcher, chromium, *arguments],
        pass_fds=(to_browser_read, from_browser_write),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    os.close(to_browser_read)
    os.close(from_browser_write)
    result = PageVisit()
    pipe = _Pipe(to_browser_write, from_browser_read, time.monotonic() + timeout)
    try:
        target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log"):
            pipe.call(f"{domain}.enable", None, session)
        pipe.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session,
        )
        navigated = pipe.call("Page.navigate", {"url": page.resolve().as_uri()}, session)
        if navigated.get("errorText"):
            raise BrowserError(f"cannot open {page}: {navigated['errorText']}")
        pipe.wait_for("Page.loadEventFired")
        evaluated = pipe.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session,
        )
        if "exceptionDetails" in evaluated:
            raise BrowserError(f"the check script failed: {evaluated['exceptionDetails']}")
        result.value = evaluated.get("result", {}).get("value")
        metrics = pipe.call("Page.getLayoutMetrics", None, session)
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        result.width, result.height = int(size["width"]), int(size["height"])
        shot = pipe.call(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True, "fromSurface": True},
            session,
        )
        result.screenshot = base64.b64decode(shot["data"])
        # Console entries raised during the checks and the screenshot arrive as events too.
        pipe.call("Runtime.evaluate", {"expression": "0"}, session)
        for event in pipe.events:
            described = _describe(event)
            if described:
                text, is_error = described
                result.console_messages.append(text)
                if is_error:
                    result.console_errors.append(text)
        try:
            pipe.send("Browser.close")
            process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
    except BrowserError as exc:
        log.seek(0)
        tail = log.read()[-3000:].decode("utf-8", "replace")
        raise BrowserError(f"{exc}\n--- chromium output ---\n{tail}") from None
    finally:
        if process.poll() is None:  # stuck: end it and its own children (its process group)
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
        os.close(to_browser_write)
        os.close(from_browser_read)
        log.close()
        shutil.rmtree(profile, ignore_errors=True)
    return result
