"""Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe):
no client package, no port, nothing downloaded. Chromium is Debian's (`apt-get install
chromium`; .ci/run installs it); where it is absent, browser tests skip with that reason.

The flags are the ones this machine's probe ran it with: without the background-networking
ones Chromium tries Google's hosts at every start."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--remote-debugging-pipe"]


def executable() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _above(fd: int) -> int:
    import fcntl

    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Browser:
    """One page in a fresh profile. send() waits for its answer; events are kept in order."""

    def __init__(self, exe: str, timeout: float = 60.0):
        self.profile = tempfile.mkdtemp(prefix="mmedbench-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # above 9, so that the child's dup2 onto 3 and 4 never overwrites the other end
        to_child_r, from_child_w = (_above(fd) for fd in (to_child_r, from_child_w))

        def fds() -> None:  # Chromium reads commands on fd 3 and writes answers on fd 4
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     preexec_fn=fds, close_fds=False)
        os.close(to_child_r)
        os.close(from_child_w)
        self.timeout, self.events, self._id, self._buf = timeout, [], 0, b""
        targets = self.send("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]

    def _read(self) -> dict:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        got = json.loads(msg)
        if got.get("method") == "Page.javascriptDialogOpening":
            # a dialog blocks the page (and every later call) until answered: dismiss it at
            # once and keep the event, so that a test sees a script ran instead of hanging
            self._id += 1
            os.write(self._to_child, json.dumps({"id": self._id, "method": "Page.handleJavaScriptDialog",
                                                 "params": {"accept": False}, "sessionId": got.get("sessionId")}).encode() + b"\0")
        return got

    def send(self, method: str, session: bool = False, **params) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        while True:
            got = self._read()
            if got.get("id") == self._id:
                if "error" in got:
                    raise RuntimeError(f"{method}: {got['error']}")
                return got.get("result", {})
            self.events.append(got)

    def page(self, method: str, **params) -> dict:
        return self.send(method, session=True, **params)

    def wait_for(self, event: str) -> dict:
        for e in self.events:
            if e.get("method") == event:
                return e
        while True:
            got = self._read()
            self.events.append(got)
            if got.get("method") == event:
                return got

    def evaluate(self, expression: str):
        got = self.page("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in got:
            raise RuntimeError(f"{expression}: {got['exceptionDetails']}")
        return got["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click at the middle of the element (not element.click())."""
        box = self.evaluate(f"(() => {{ const el = document.querySelector({json.dumps(selector)});"
                            " el.scrollIntoView({block: 'center', inline: 'center'});"
                            " const r = el.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            self.page("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def open(self, path: Path) -> None:
        for domain in ("Page.enable", "Network.enable", "Runtime.enable"):
            self.page(domain)
        self.page("Page.navigate", url=Path(path).resolve().as_uri())
        self.wait_for("Page.loadEventFired")

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, OSError, TimeoutError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)
