"""The frontend benchmark's page harness: the built bundle, the harness page and each run's data
served as static files on 127.0.0.1, and the headless chromium they are opened in.

The harness page (frontend_harness.html) hosts the widget's ESM bundle outside Jupyter behind the
shared minimal model (js/toolkit/model.js); `Server.put_state` / `put_stream` / `put_page` write what a
page loads from /data/.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import shutil
import threading
import time
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent
STATIC = ROOT / "logprob_viz" / "views" / "static"
HARNESS = HERE / "frontend_harness.html"
MODEL_JS = ROOT / "js" / "toolkit" / "model.js"  # the harness's model object, shared with the standalone page
# A page's own load keeps the browser busy for a while after its scripts ran (the new tab, its
# compositor, the first frames): a view rendered within milliseconds of the load waited on that
# (1k: 67 ms, against 44 ms a second later, the same build and the same main-thread CPU, 36 ms). A
# notebook renders a view long after its page loaded, so every page (ours, and CircuitsVis's, which
# renders from a timer of the same length) waits this long before the timed render.
PAGE_SETTLE_MS = 1000
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class Server:
    """Static files on 127.0.0.1: the harness, the built bundle, the states and peer pages."""

    def __init__(self, root: Path, before: Path | None = None):
        """`before`: a folder with an earlier build's widget.js and widget.css, served as /before."""
        self.root = root
        (root / "static").mkdir()
        (root / "data").mkdir()
        for name in ("widget.js", "widget.css"):
            if (STATIC / name).is_file():
                shutil.copy2(STATIC / name, root / "static" / name)  # keeps the build time
        if before is not None:
            (root / "before").mkdir()
            for name in ("widget.js", "widget.css"):
                if not (before / name).is_file():
                    raise SystemExit(f"--before {before}: no {name} there (copy an earlier build's "
                                     "logprob_viz/views/static/widget.js and widget.css into it)")
                shutil.copy2(before / name, root / "before" / name)
            # its own copy of the harness, whose stylesheet is that build's from the start
            page = HARNESS.read_text().replace('href="/static/widget.css"', 'href="/before/widget.css"')
            (root / "before" / "index.html").write_text(page)
        shutil.copy2(MODEL_JS, root / "static" / "model.js")
        (root / "index.html").write_bytes(HARNESS.read_bytes())

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def end_headers(self):
                self.send_header("Cache-Control", "no-store")
                super().end_headers()

        Quiet.extensions_map = {**Quiet.extensions_map, ".js": "text/javascript"}
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def put_state(self, name: str, state, paths, buffers) -> None:
        meta = {"state": state, "buffer_paths": paths, "buffer_lengths": [len(b) for b in buffers]}
        (self.root / "data" / f"{name}.json").write_text(json.dumps(meta))
        (self.root / "data" / f"{name}.bin").write_bytes(b"".join(buffers))

    def put_stream(self, name: str, messages) -> None:
        """Custom messages (content, buffers) as the kernel sends them, one JSON and one blob."""
        meta = [{"msg": m, "buffer_lengths": [len(b) for b in bufs]} for m, bufs in messages]
        (self.root / "data" / f"{name}.json").write_text(json.dumps(meta))
        (self.root / "data" / f"{name}.bin").write_bytes(b"".join(bytes(b) for _, bufs in messages for b in bufs))

    def put_page(self, name: str, html: str) -> None:
        (self.root / "data" / f"{name}.html").write_text(html, encoding="utf-8")

    def close(self):
        self.httpd.shutdown()


def launch(playwright):
    """A headless chromium (Debian's; playwright cannot download browsers here)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


COPIED = "logprob_viz/views/static/widget.js (copied at start)"


def bundle_id(js: Path = STATIC / "widget.js", label: str = COPIED) -> str:
    if not js.is_file():
        return "missing"
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(js.stat().st_mtime))
    digest = hashlib.sha256(js.read_bytes()).hexdigest()[:12]
    return f"{label} sha256 {digest}, built {stamp}"
