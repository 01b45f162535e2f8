"""A real browser for the project's tests: headless Chromium (Debian's package), driven over the
DevTools protocol on a pipe (``--remote-debugging-pipe``: no port, no extra Python package), and
offline: every host name but 127.0.0.1 resolves to nothing.

    with browser_or_skip() as browser:
        page = browser.open(path)             # waits for the load event
        page.settle()                         # lets timers, late loads and events run
        page.console, page.requests           # every console error / exception, every request made
        page.evaluate("document.title")       # a JavaScript expression's value
        page.dom()                            # the document as scripts left it
        page.screenshot(png_path)             # the viewport, or full_page=True

``browser_or_skip()`` skips a test with what to install where there is no Chromium, and fails it
on CI (``.ci/run`` installs it) unless ``$AUTOGRADER_NO_CHROMIUM`` says why it could not.
``Listener`` is an HTTP server on 127.0.0.1 that records every path asked of it, from any frame
or process of the browser: point a hostile page's payloads at it to see what ran or loaded.
"""
import base64
import http.server
import json
import os
import selectors
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL = "apt-get install chromium (Debian's package; .ci/run installs it on CI)"


# Offline and quiet: no background services, no component or safe-browsing downloads, and no host
# but 127.0.0.1 (where a test's Listener waits) resolves.
OFFLINE = ("--disable-background-networking", "--disable-component-update", "--disable-quic",
           "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")


def find_chromium():
    for name in (os.environ.get("CHROMIUM"), *NAMES):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def browser_or_skip():
    """A started Browser, or skip the test saying what to install (fail it on CI, where
    ``.ci/run`` installs Chromium, unless it said why it could not)."""
    if find_chromium():
        return Browser()
    why = os.environ.get("AUTOGRADER_NO_CHROMIUM")
    if os.environ.get("CI") and not why:
        pytest.fail(f"no Chromium on CI: .ci/run installs it ({INSTALL})")
    pytest.skip(f"no Chromium here ({why or INSTALL}): the page is not checked in a browser")


class BrowserError(Exception):
    pass


class Browser:
    def __init__(self, executable=None, width=1280, height=900, timeout=60):
        self.executable = executable or find_chromium()
        if not self.executable:
            raise BrowserError(f"no Chromium found: {INSTALL}")
        self.width, self.height, self.timeout = width, height, timeout
        self.profile = tempfile.mkdtemp(prefix="browser-profile-")
        to_browser, self._in = os.pipe()       # we write commands; Chromium reads fd 3
        self._out, from_browser = os.pipe()    # Chromium writes replies and events on fd 4

        def fds():  # in the child: the pipe ends on the fds Chromium expects
            high = [os.dup(to_browser), os.dup(from_browser)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        flags = ["--headless", "--remote-debugging-pipe", "--disable-gpu", "--no-first-run",
                 "--no-default-browser-check", "--disable-extensions", *OFFLINE, "--disable-sync",
                 "--disable-default-apps", "--mute-audio", "--hide-scrollbars", "--font-render-hinting=none", f"--user-data-dir={self.profile}",
                 f"--window-size={width},{height}"]
        if os.geteuid() == 0:
            flags.append("--no-sandbox")  # Chromium's own sandbox refuses to run as root
        self.process = subprocess.Popen([self.executable, *flags, "about:blank"], preexec_fn=fds, pass_fds=(3, 4),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE)
        os.close(to_browser)
        os.close(from_browser)
        self._buffer, self._next, self._events = b"", 0, []
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._out, selectors.EVENT_READ)

    # -- the protocol --------------------------------------------------------------------
    def send(self, method, session=None, **params):
        """One command; returns its result (raises BrowserError on a protocol error)."""
        self._next += 1
        message = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._in, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def wait_for(self, method, session=None):
        """The first event ``method`` (of ``session``), waiting for it if it has not come yet."""
        while True:
            for i, event in enumerate(self._events):
                if event.get("method") == method and event.get("sessionId") == session:
                    return self._events.pop(i)
            self._events.append(self._read())

    def events(self, session=None):
        """Every event received so far for ``session`` (a snapshot)."""
        self._drain()
        return [e for e in self._events if e.get("sessionId") == session]

    def _drain(self):
        while self._selector.select(timeout=0.2):
            self._events.append(self._read())

    def _read(self):
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            if not self._selector.select(timeout=max(0.0, deadline - time.monotonic())):
                raise BrowserError(f"Chromium said nothing for {self.timeout} s")
            chunk = os.read(self._out, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium exited: {self.process.stderr.read().decode(errors='replace')[-2000:]}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    # -- pages ---------------------------------------------------------------------------
    def open(self, path_or_url, scripts=True):
        """A new tab showing the page; returns a Page once its load event has fired."""
        url = path_or_url if "://" in str(path_or_url) else Path(path_or_url).resolve().as_uri()
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session)
        self.send("Emulation.setDeviceMetricsOverride", session, width=self.width, height=self.height,
                  deviceScaleFactor=1, mobile=False)
        if not scripts:
            self.send("Emulation.setScriptExecutionDisabled", session, value=True)
        self.send("Page.navigate", session, url=url)
        self.wait_for("Page.loadEventFired", session)
        return Page(self, session, url)

    def close(self):
        try:
            self.send("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._selector.close()
        for fd in (self._in, self._out):
            os.close(fd)
        self.process.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Page:
    def __init__(self, browser, session, url):
        self.browser, self.session, self.url = browser, session, url

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (JSON-like values only)."""
        reply = self.browser.send("Runtime.evaluate", self.session, expression=expression, returnByValue=True,
                                  awaitPromise=True)
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression[:80]}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def settle(self, ms=1500):
        """Let the page's timers, late loads and events (autofocus, toggle, media errors) run for
        ``ms`` of real time."""
        self.browser.send("Runtime.evaluate", self.session, expression=f"new Promise(r => setTimeout(r, {ms}))",
                          awaitPromise=True)
        return self

    def dom(self):
        """The document as the page's scripts left it (the serialized DOM)."""
        return self.evaluate("document.documentElement.outerHTML")

    @property
    def console(self):
        """Console errors and warnings, uncaught exceptions and the browser's own error log
        (a refused resource, a Content-Security-Policy violation) so far, one line each."""
        lines = []
        for event in self.browser.events(self.session):
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params["type"] in ("error", "warning", "assert"):
                lines.append(f"console.{params['type']}: " + " ".join(
                    str(a.get("value", a.get("description", ""))) for a in params["args"]))
            elif method == "Runtime.exceptionThrown":
                lines.append(f"exception: {params['exceptionDetails'].get('exception', {}).get('description')}")
            elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
                lines.append(f"log: {params['entry']['text']} {params['entry'].get('url', '')}")
        return lines

    @property
    def requests(self):
        """The URL of every request the page made so far (the page's own included)."""
        return [e["params"]["request"]["url"] for e in self.browser.events(self.session)
                if e["method"] == "Network.requestWillBeSent"]

    def screenshot(self, path, full_page=False):
        """A PNG of the viewport (or of the whole page); returns its path."""
        params = {"format": "png"}
        if full_page:
            size = self.browser.send("Page.getLayoutMetrics", self.session)["cssContentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1})
        data = self.browser.send("Page.captureScreenshot", self.session, **params)["data"]
        Path(path).write_bytes(base64.b64decode(data))
        return Path(path)


class Listener:
    """``with Listener() as seen:`` an HTTP server on 127.0.0.1:``seen.port``; ``seen.paths`` lists
    every path asked of it (any method), in order."""

    def __enter__(self):
        paths = self.paths = []

        class Record(http.server.BaseHTTPRequestHandler):
            def _record(self):
                paths.append(self.path)
                self.send_response(204)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()

            do_GET = do_POST = do_HEAD = do_OPTIONS = do_PUT = _record

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Record)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()
