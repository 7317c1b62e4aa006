"""The wheel's `prefix-exec` command: the native binary's subcommands, output and exit codes."""

from __future__ import annotations

import json
import subprocess

from conftest import EXAMPLE, run, wheel_cli


def test_help_lists_the_subcommands_and_view():
    r = wheel_cli("--help")
    assert r.returncode == 0
    out = r.stdout.decode()
    for sub in ("score", "convert", "site", "view"):
        assert sub in out


def test_same_output_and_exit_codes_as_the_native_binary(native_cli, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("nope\n")
    cases = [
        ["score", str(EXAMPLE), "--bootstrap", "200", "--quiet"],
        [
            "score",
            str(EXAMPLE),
            "--bootstrap",
            "200",
            "--json",
            "-",
            "--quiet",
            "--layout",
            "paper",
        ],
        ["convert", str(EXAMPLE), "-o", "-", "--quiet"],
        ["score", str(bad)],
        ["score", "--bootstrap", "x", str(EXAMPLE)],
        ["score", str(tmp_path / "missing.jsonl")],
        ["score", "--help"],
        ["--version"],
    ]
    for args in cases:
        ours, native = wheel_cli(*args), run([native_cli, *args])
        assert (ours.returncode, ours.stdout, ours.stderr) == (
            native.returncode,
            native.stdout,
            native.stderr,
        ), args


def test_exit_codes():
    assert wheel_cli("score", "--no-such-flag", str(EXAMPLE)).returncode == 2
    assert wheel_cli().returncode == 2


def test_site_from_the_installed_wheel(tmp_path):
    # Run from an empty folder: no source tree to find an app in; the wheel's own app is used.
    out = tmp_path / "site"
    r = wheel_cli(
        "site", str(EXAMPLE), "-o", str(out), "--bootstrap", "100", "--title", "T", cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr.decode()
    assert (out / "index.html").is_file() and (out / "worker-loader.js").is_file()
    assert b"prefix-exec-site" in (out / "index.html").read_bytes()
    manifest = json.loads((out / "report.json").read_text())
    assert manifest["title"] == "T"
    assert (out / "data" / "rollouts.jsonl").is_file()


def test_console_script_is_the_package_s():
    r = subprocess.run([wheel_cli.__globals__["PREFIX_EXEC"], "--version"], capture_output=True)
    assert r.returncode == 0
