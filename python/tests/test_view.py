"""`prefix-exec view`: serves the packaged app and exactly the given files."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import urllib.parse
from pathlib import Path

import pytest

from conftest import EXAMPLE, PREFIX_EXEC


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """A folder with a nested run, a non-JSON file, a hidden file and a symlink out of it."""
    run = tmp_path / "run"
    (run / "trajectories" / "s1").mkdir(parents=True)
    (run / "result_summary.json").write_text('{"x": 1}')
    (run / "trajectories" / "s1" / "execution_context.json").write_text('{"y": 2}')
    (run / "notes.txt").write_text("not served")
    (run / ".hidden.json").write_text("{}")
    secret = tmp_path / "secret.json"
    secret.write_text('{"secret": true}')
    os.symlink(secret, run / "escape.json")
    return run


@pytest.fixture
def view(runs: Path):
    proc = subprocess.Popen(
        [PREFIX_EXEC, "view", "--no-browser", str(EXAMPLE), str(runs)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line, line + proc.stderr.read()
        url = line.split()[line.split().index("at") + 1]
        yield urllib.parse.urlsplit(url), url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def get(parts, path: str, host: str = None):
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    headers = {"Host": host} if host else {}
    conn.request("GET", path, headers=headers)
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, r.getheader("Content-Type"), body


def test_serves_the_app_and_the_given_files(view, runs):
    parts, url = view
    assert parts.hostname == "127.0.0.1"
    assert urllib.parse.parse_qs(parts.query)["files"] == ["/_view/files.json"]
    status, ctype, body = get(parts, "/")
    assert status == 200 and ctype.startswith("text/html") and b"prefix-exec" in body
    status, ctype, body = get(parts, "/worker-loader.js")
    assert status == 200 and "javascript" in ctype
    status, _, body = get(parts, "/_view/files.json")
    listing = json.loads(body)
    names = [f["name"] for f in listing]
    # Named as `prefix-exec score` names them: the path given, then the path inside a folder.
    assert names == [
        str(EXAMPLE),
        f"{runs}/result_summary.json",
        f"{runs}/trajectories/s1/execution_context.json",
    ]
    assert [f["url"] for f in listing] == [
        "/_view/files/0/synthetic-grid.jsonl",
        "/_view/files/1/result_summary.json",
        "/_view/files/2/execution_context.json",
    ]
    status, _, body = get(parts, listing[0]["url"])
    assert status == 200 and body == EXAMPLE.read_bytes()
    status, _, body = get(parts, listing[2]["url"])
    assert status == 200 and body == (runs / "trajectories/s1/execution_context.json").read_bytes()


@pytest.mark.parametrize(
    "path",
    [
        "/_view/files/1/notes.txt",  # in a given folder, but not a rollout file
        "/_view/files/1/.hidden.json",
        "/_view/files/1/escape.json",  # a symlink out of the folder
        "/_view/files/0/result_summary.json",  # a listed file under another index
        "/_view/files/1/run/result_summary.json",
        "/_view/files/9/x.json",
        "/_view/files/1/../../secret.json",
        "/_view/files/1/%2e%2e/secret.json",
        "/_view/files/1/..%2fsecret.json",
        "/../secret.json",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/etc/passwd",
    ],
)
def test_refuses_everything_else(view, path):
    parts, _ = view
    status, _, body = get(parts, path)
    assert status in (403, 404), (path, status)
    assert b"secret" not in body


def test_refuses_other_hosts(view):
    parts, _ = view
    status, _, _ = get(parts, "/_view/files.json", host="evil.example:80")
    assert status == 403
    status, _, _ = get(parts, "/", host=f"localhost:{parts.port}")
    assert status == 200


def test_missing_input_fails_clearly(tmp_path):
    r = subprocess.run(
        [PREFIX_EXEC, "view", "--no-browser", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode != 0 and "cannot open" in r.stderr
