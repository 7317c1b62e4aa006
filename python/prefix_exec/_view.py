"""``prefix-exec view RUNS…``: the web app on 127.0.0.1 with the given files preloaded.

A small ``http.server`` serves two things and nothing else:

- the web app packaged with the wheel (``prefix_exec/app``, Trunk's release build), at ``/``;
- an allow-list made when the server starts: the given files, and the ``.json`` / ``.jsonl``
  files inside the given folders (recursively, hidden ones skipped: the files ``prefix-exec
  score`` reads from a folder), each at ``/_view/files/<i>/<file name>``, listed in
  ``/_view/files.json`` as ``[{"name": "<path>", "url": "…"}]``.

Each file's name is its path as ``prefix-exec score`` names it (the path given, joined with the
path inside a given folder), so the app reads it as the CLI does: formats that pair files by
folder, or take a model's name from the folders (a ToolSandbox run), give the same report. The
page is opened at ``/?files=/_view/files.json`` (src/web/site.rs reads that list and adds each
file under its name, as a dropped folder's files are added). A file is served only when its
index and file name match an entry of the list; a path with ``..``, a symlink out of a given
folder (left out of the list, and each file's resolved path checked again when served) or
anything else is 404. Requests
whose ``Host`` is not this server's loopback address are refused (403), so a web page elsewhere
cannot read the files through DNS rebinding.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import posixpath
import shutil
import sys
import threading
import urllib.parse
import webbrowser
from typing import List, Optional, Sequence, Tuple

PREFIX = "/_view/"
LIST = PREFIX + "files.json"

# Python 3.9's mimetypes lacks some of the app's types; a module script and wasm must be right.
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".wasm": "application/wasm",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".jsonl": "application/x-ndjson",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
}


def collect(paths: Sequence[str]) -> List[Tuple[str, str]]:
    """``(name, real path)`` of every file to serve, in the order ``prefix-exec score`` reads
    them and named as it names them: a file by the path given, a folder walked in name order for
    its ``.json``, ``.jsonl``, ``.eval`` and archive files, each named ``<folder as given>/<path
    inside it>``."""
    out: List[Tuple[str, str]] = []
    for given in paths:
        real = os.path.realpath(given)
        if os.path.isdir(real):
            before = len(out)
            _walk(real, real, os.fspath(given), out)
            if len(out) == before:
                raise SystemExit(
                    f"prefix-exec view: the folder {given} holds no .json, .jsonl, .eval or archive file"
                )
        elif os.path.isfile(real):
            out.append((os.fspath(given), real))
        else:
            raise SystemExit(f"prefix-exec view: cannot open {given}: no such file or folder")
    return out


# The names a folder walk reads, as the CLI's and the app's walks do: JSON and JSONL files,
# Inspect .eval logs, archives and compressed files.
_READ = (".json", ".jsonl", ".eval", ".zip", ".tar", ".tgz", ".gz", ".zst", ".tzst")


def _walk(root: str, folder: str, name: str, out: List[Tuple[str, str]]) -> None:
    try:
        entries = sorted(os.listdir(folder))
    except OSError as e:
        raise SystemExit(f"prefix-exec view: cannot read the folder {folder}: {e}") from e
    for entry in entries:
        if entry.startswith("."):
            continue
        path = os.path.join(folder, entry)
        real = os.path.realpath(path)
        # A symlink leading out of the given folder is not served (nor followed).
        if real != root and not real.startswith(root + os.sep):
            continue
        if os.path.isdir(real):
            _walk(root, real, os.path.join(name, entry), out)
        elif os.path.isfile(real) and entry.lower().endswith(_READ):
            out.append((os.path.join(name, entry), real))


def file_list(files: Sequence[Tuple[str, str]]) -> List[dict]:
    """The ``/_view/files.json`` document: each file's name and URL. The URL holds the index
    and the file name only: a name may hold ``..`` or begin with ``/``, which a browser would
    resolve away in a URL's path."""
    return [
        {"name": name, "url": f"{PREFIX}files/{i}/{urllib.parse.quote(_base(name))}"}
        for i, (name, _) in enumerate(files)
    ]


def _base(name: str) -> str:
    return name.rstrip("/").rsplit("/", 1)[-1]


class ViewServer(http.server.ThreadingHTTPServer):
    """The viewer's server; ``app`` is the app's folder, ``files`` the allow-list."""

    daemon_threads = True

    def __init__(self, app: str, files: Sequence[Tuple[str, str]], port: int = 0) -> None:
        self.app = os.path.realpath(app)
        self.files = list(files)
        self.listing = json.dumps(file_list(self.files)).encode()
        super().__init__(("127.0.0.1", port), Handler)

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?files={urllib.parse.quote(LIST, safe='/')}"


class Handler(http.server.BaseHTTPRequestHandler):
    server: ViewServer
    server_version = "prefix-exec-view"
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle's algorithm the body then waits for
    # the client's delayed ACK (about 40 ms a file: 100 s for a run folder of 2,000 files).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        # Quiet: the page makes one request per file. Errors still reach send_error's reply.
        pass

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's naming
        self._serve(head=True)

    def do_GET(self) -> None:  # noqa: N802
        self._serve(head=False)

    def _serve(self, head: bool) -> None:
        host = (self.headers.get("Host") or "").lower()
        if host not in (f"127.0.0.1:{self.server.port}", f"localhost:{self.server.port}"):
            return self._send(403, b"forbidden", "text/plain; charset=utf-8", head)
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        if path == LIST:
            return self._send(200, self.server.listing, "application/json", head)
        if path.startswith(PREFIX):
            return self._serve_given(path[len(PREFIX) :], head)
        self._serve_app(path, head)

    def _serve_given(self, rest: str, head: bool) -> None:
        # files/<i>/<file name>: the i-th allowed file, only under its own file name.
        parts = rest.split("/", 2)
        if len(parts) == 3 and parts[0] == "files" and parts[1].isdigit():
            i = int(parts[1])
            if i < len(self.server.files) and _base(self.server.files[i][0]) == parts[2]:
                real = self.server.files[i][1]
                # Checked again: the file may have been swapped for a symlink since.
                if os.path.realpath(real) == real and os.path.isfile(real):
                    return self._send_file(real, "application/octet-stream", head)
        self._send(404, b"not found", "text/plain; charset=utf-8", head)

    def _serve_app(self, path: str, head: bool) -> None:
        rel = posixpath.normpath("/" + path).lstrip("/")
        if ".." in rel.split("/"):
            return self._send(404, b"not found", "text/plain; charset=utf-8", head)
        full = os.path.realpath(os.path.join(self.server.app, rel))
        if full != self.server.app and not full.startswith(self.server.app + os.sep):
            return self._send(404, b"not found", "text/plain; charset=utf-8", head)
        if os.path.isdir(full):
            full = os.path.join(full, "index.html")
        if not os.path.isfile(full):
            return self._send(404, b"not found", "text/plain; charset=utf-8", head)
        ext = os.path.splitext(full)[1].lower()
        self._send_file(full, TYPES.get(ext, "application/octet-stream"), head)

    def _send_file(self, path: str, content_type: str, head: bool) -> None:
        # Streamed: released runs can be hundreds of megabytes.
        try:
            f = open(path, "rb")
        except OSError:
            return self._send(404, b"not found", "text/plain; charset=utf-8", head)
        with f:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(os.fstat(f.fileno()).st_size))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            if not head:
                shutil.copyfileobj(f, self.wfile, 1 << 20)

    def _send(self, status: int, body: bytes, content_type: str, head: bool) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if not head:
            self.wfile.write(body)


def serve(paths: Sequence[str], app: str, port: int = 0) -> ViewServer:  # pragma: no cover - thin
    """A started :class:`ViewServer` (in a daemon thread) for ``paths``; ``.url`` opens it."""
    server = ViewServer(app, collect(paths), port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(argv: Optional[Sequence[str]] = None) -> int:
    from . import app_dir

    parser = argparse.ArgumentParser(
        prog="prefix-exec view",
        description="Open the prefix-exec web app on 127.0.0.1 with rollout files preloaded. "
        "Only the given files, and the .json/.jsonl files inside the given folders, are served "
        "(read-only, from this process); nothing else on disk is reachable. Ctrl-C stops it.",
    )
    parser.add_argument("runs", nargs="+", metavar="RUNS", help="rollout files or folders")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument(
        "--no-browser", action="store_true", help="print the URL, do not open a browser"
    )
    parser.add_argument(
        "--app", metavar="DIR", help="a built app (Trunk's dist/) instead of the packaged one"
    )
    args = parser.parse_args(argv)
    app = args.app or app_dir()
    if not app or not os.path.isfile(os.path.join(app, "index.html")):
        print(
            "prefix-exec view: this package was built without the web app "
            "(build the wheel with scripts/python.sh, or pass --app DIR)",
            file=sys.stderr,
        )
        return 2
    files = collect(args.runs)
    try:
        server = ViewServer(app, files, args.port)
    except OSError as e:
        print(f"prefix-exec view: cannot listen on 127.0.0.1:{args.port}: {e}", file=sys.stderr)
        return 2
    print(
        f"prefix-exec view: {len(files)} files at {server.url}  (Ctrl-C stops)",
        flush=True,
    )
    if not args.no_browser:
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
