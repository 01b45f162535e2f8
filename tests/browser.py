"""A real browser for the tests: headless Chromium, offline, and a listener for what a page asks for.

``chromium()`` finds the browser ($CHROMIUM, else chromium, chromium-browser, google-chrome on
PATH) or skips the test with what to install (and fails it under CI, where .ci/run installs
Debian's chromium). ``dump_dom(page)`` loads a file or URL, lets its scripts and timers run,
and returns the DOM as it then is. Every host name but 127.0.0.1 resolves to nothing, so a page
can reach no network. ``Listener`` is an HTTP server on 127.0.0.1 that records every path
requested from it: point a page's scripts and resources at it to see what loaded or ran.
"""
import http.server
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Offline, and quiet: no background services, no component or safe-browsing downloads.
FLAGS = ("--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-sync",
         "--disable-background-networking", "--disable-component-update", "--disable-quic",
         "--disable-extensions", "--mute-audio", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")


def chromium():
    """The browser's path, or skip (fail under CI) saying how to get one."""
    found = os.environ.get("CHROMIUM") or next(filter(None, map(shutil.which, NAMES)), None)
    if not found:
        message = "no Chromium to render pages in: install Debian's chromium (apt-get install chromium; .ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def dump_dom(page, budget_ms=3000, timeout=120):
    """The DOM of ``page`` (a path or a URL) once its scripts, timers and loads have had
    ``budget_ms`` of virtual time; raises if the browser fails."""
    url = Path(page).resolve().as_uri() if "://" not in str(page) else str(page)
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        # As root Chromium refuses its own sandbox; the page is still offline and throwaway.
        sandbox = ["--no-sandbox"] if os.geteuid() == 0 else []
        done = subprocess.run([chromium(), *FLAGS, *sandbox, f"--user-data-dir={profile}",
                               f"--virtual-time-budget={budget_ms}", "--dump-dom", url],
                              capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0 or "<html" not in done.stdout:
        raise RuntimeError(f"chromium failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


class Listener:
    """``with Listener() as seen:`` an HTTP server on 127.0.0.1:``seen.port``; ``seen.paths`` lists
    every path requested (any method), in order."""

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
