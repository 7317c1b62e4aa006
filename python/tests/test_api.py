"""The Python API against the command line: the same report bytes, the same canonical lines,
the same messages."""

from __future__ import annotations

import json
import math
import shutil
import threading
import time

import pytest

import prefix_exec
from conftest import EXAMPLE, ROOT, wheel_cli


def cli_json(*args: str, cli=None, cwd=None) -> bytes:
    """`prefix-exec score ARGS --json - --quiet`'s stdout (the wheel's command by default)."""
    argv = ["score", *args, "--json", "-", "--quiet"]
    if cli is None:
        r = wheel_cli(*argv, cwd=cwd)
    else:
        import subprocess

        r = subprocess.run([cli, *argv], capture_output=True, cwd=cwd, timeout=600)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


def test_no_rust_toolchain_on_path():
    # The wheel runs without Rust: scripts/python.sh takes cargo and rustc off PATH.
    assert shutil.which("cargo") is None
    assert shutil.which("rustc") is None


def test_version():
    assert prefix_exec.__version__
    out = wheel_cli("--version").stdout.decode()
    assert out.strip() == f"prefix-exec {prefix_exec.__version__}"


def test_score_is_byte_identical_to_the_cli():
    report = prefix_exec.score(str(EXAMPLE), bootstrap=500, seed=3)
    assert report.to_json().encode() == cli_json(str(EXAMPLE), "--bootstrap", "500", "--seed", "3")
    d = report.to_dict()
    assert d["schema"] == "prefix-exec/report/v1"
    assert report.conditions == d["conditions"] and len(report.conditions) > 1
    assert report.paired == d.get("paired", [])
    assert report.diagnostics == []


def test_score_matches_the_native_binary(native_cli):
    args = ("--bootstrap", "300", "--seed", "5", "--max-depth", "all")
    report = prefix_exec.score(EXAMPLE, bootstrap=300, seed=5, max_depth="all")
    assert report.to_json().encode() == cli_json(str(EXAMPLE), *args, cli=native_cli)


def test_default_bootstrap_and_threads_do_not_change_the_report():
    a = prefix_exec.score(EXAMPLE)
    b = prefix_exec.score(EXAMPLE, threads=1)
    assert a.to_json() == b.to_json()
    assert a.to_json().encode() == cli_json(str(EXAMPLE))


def test_options_are_the_cli_flags():
    pair = ("Dual-Loop", "ReAct")
    report = prefix_exec.score(EXAMPLE, bootstrap=200, pair=pair, level=0.9)
    expected = cli_json(
        str(EXAMPLE), "--bootstrap", "200", "--pair", "Dual-Loop,ReAct", "--level", "0.9"
    )
    assert report.to_json().encode() == expected
    with pytest.raises(prefix_exec.PrefixExecError, match="--no-such-flag"):
        prefix_exec.score(EXAMPLE, no_such_flag=3)
    with pytest.raises(prefix_exec.PrefixExecError, match="--max-depth"):
        prefix_exec.score(EXAMPLE, max_depth="deep")


def test_in_memory_input():
    text = EXAMPLE.read_text()
    from_path = prefix_exec.score(EXAMPLE, bootstrap=100)
    for given in (text, text.encode(), [text.encode()]):
        r = prefix_exec.score(given, bootstrap=100)
        assert r.conditions == from_path.conditions


def test_bad_input_raises_with_the_line_located_message(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"dataset": "d", "task_id": "t"}\nnot json\n')
    with pytest.raises(prefix_exec.PrefixExecError) as e:
        prefix_exec.score(bad)
    message = str(e.value)
    assert f"{bad}:1: " in message and f"{bad}:2: " in message
    assert message.endswith("no valid rollout was read; nothing to score")
    # The CLI says the same on stderr, and exits with 1.
    r = wheel_cli("score", str(bad))
    assert r.returncode == 1
    for line in message.splitlines():
        assert line in r.stderr.decode()
    with pytest.raises(prefix_exec.PrefixExecError, match=r"<memory 1>:2: "):
        prefix_exec.score(b'{"dataset": "d"}\n{oops\n')


def test_some_bad_lines_warn_and_score_the_rest(tmp_path):
    lines = EXAMPLE.read_text().splitlines()[:50]
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join(lines[:10] + ["{broken"] + lines[10:]) + "\n")
    with pytest.warns(UserWarning, match=r"mixed\.jsonl:11: "):
        report = prefix_exec.score(mixed, bootstrap=0)
    assert sum(c["n"] for c in report.conditions) == 50
    assert any(":11: " in d for d in report.diagnostics)


def test_missing_file_raises_the_cli_message(tmp_path):
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(prefix_exec.PrefixExecError, match="cannot open .*nope.jsonl"):
        prefix_exec.score(missing)
    r = wheel_cli("score", str(missing))
    assert r.returncode == 2 and b"cannot open" in r.stderr


def test_to_pandas_equals_the_json():
    pd = pytest.importorskip("pandas")
    report = prefix_exec.score(EXAMPLE, bootstrap=200)
    df = report.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert len(df) == len(report.conditions)
    for (_, row), c in zip(df.iterrows(), report.conditions):
        assert (row["dataset"], row["model"], row["method"], row["n"]) == (
            c["dataset"],
            c["model"],
            c["method"],
            c["n"],
        )
        for m in ("ter", "mean_fed", "auc_pec", "final_success", "rr"):
            same(row[m], c[m]["value"])
            lo, hi = c[m]["ci"] or (None, None)
            same(row[m + "_lo"], lo)
            same(row[m + "_hi"], hi)
        for p in c["pec"]:
            same(row[f"pec_{p['k']}"], p["value"])
            same(row[f"pec_{p['k']}_lo"], (p["ci"] or (None, None))[0])
        assert row["rr_eligible"] == c["rr_eligible"]
        labels = {
            k[len("label_") :]: v
            for k, v in row.items()
            if k.startswith("label_") and not k.startswith("label_source_") and v
        }
        assert labels == {k: v for k, v in c["first_failure_labels"].items() if v}


def same(a, b):
    if b is None:
        assert a is None or (isinstance(a, float) and math.isnan(a))
    else:
        assert a == b


def test_ranks_and_rank_divergence_are_the_json():
    pd = pytest.importorskip("pandas")
    report = prefix_exec.score(EXAMPLE, bootstrap=300)
    tables = report.to_dict()["ranks"]
    assert tables == report.rank_tables
    ranks = report.ranks()
    assert isinstance(ranks, pd.DataFrame)
    assert list(ranks.columns) == [
        "dataset", "metric", "model", "method", "value", "rank", "rank_lo", "rank_hi", "top",
        "level", "critical_value",
    ]  # fmt: skip
    entries = [(t, c) for t in tables for c in t["conditions"]]
    assert len(ranks) == len(entries) == 3 * len(report.conditions)
    for (_, row), (t, c) in zip(ranks.iterrows(), entries):
        assert (row["dataset"], row["metric"], row["model"], row["method"]) == (
            t["dataset"],
            t["metric"],
            c["model"],
            c["method"],
        )
        assert (row["value"], row["rank"], row["rank_lo"], row["rank_hi"]) == (
            c["value"],
            c["rank"],
            c["rank_lo"],
            c["rank_hi"],
        )
        assert row["rank_lo"] <= row["rank"] <= row["rank_hi"]
        assert row["top"] == (c["rank_lo"] == 1)
        assert (row["level"], row["critical_value"]) == (t["level"], t["critical_value"])
    # The synthetic grid has the paper's split: Plan-Conditioned ReAct leads on final success and
    # trails on TER and AUC-PEC, certainly so.
    divergence = report.rank_divergence()
    assert list(divergence.columns) == [
        "dataset", "a", "b", "kendall_tau_b", "kendall_tau_b_lo", "kendall_tau_b_hi",
        "discordant", "significant",
    ]  # fmt: skip
    assert len(divergence) == len(report.rank_divergences) == 6
    for (_, row), d in zip(divergence.iterrows(), report.rank_divergences):
        assert (row["dataset"], row["a"], row["b"]) == (d["dataset"], d["a"], d["b"])
        assert row["kendall_tau_b"] == d["kendall_tau_b"]["value"]
        assert [row["kendall_tau_b_lo"], row["kendall_tau_b_hi"]] == d["kendall_tau_b"]["ci"]
        assert row["discordant"] == len(d["discordant"])
    pairs = report.rank_divergence(pairs=True)
    assert len(pairs) == divergence["discordant"].sum()
    assert pairs["significant"].sum() == divergence["significant"].sum() > 0
    flips = pairs[(pairs["dataset"] == "bfcl-v3") & pairs["significant"]]
    assert len(flips) > 0 and (flips["ahead_on_a_method"] == "Plan-Cond. ReAct").all()
    # Without the bootstrap: point ranks only.
    off = prefix_exec.score(EXAMPLE, bootstrap=0)
    point = off.ranks()
    assert list(point["rank"]) == list(ranks["rank"])
    assert point["rank_lo"].isna().all() and point["critical_value"].isna().all()
    assert not point["top"].any()
    plain = off.rank_divergence()
    assert plain["kendall_tau_b_lo"].isna().all() and (plain["significant"] == 0).all()
    # The exports carry the ranks.
    assert "Rank (Final success)" in report.to_latex()
    assert "Rank (TER)" in report.to_latex(rank="ter")
    with pytest.raises(prefix_exec.PrefixExecError, match="rank"):
        report.to_latex(rank="rr")
    header = report.to_csv().splitlines()[0]
    assert header.endswith(",final_success_rank,final_success_rank_lo,final_success_rank_hi")
    assert "Ranks: bfcl-v3  (12 conditions; simultaneous 95% rank intervals, 66 pairs)" in (
        report.to_text()
    )


def test_tables_are_the_cli_s(tmp_path):
    report = prefix_exec.score(EXAMPLE, bootstrap=200)
    r = wheel_cli(
        "score", str(EXAMPLE), "--bootstrap", "200", "--quiet", "--json", str(tmp_path / "r.json")
    )
    assert report.to_text().encode() == r.stdout
    csv = report.to_csv()
    assert csv.startswith("block,dataset,model,method,n,crashed,ter,ter_lo,ter_hi,ter_max")
    assert csv.count("\n") == len(report.conditions) + 1
    assert report.to_csv(layout="leaderboard") != csv
    assert "\\begin{tabular}" in report.to_latex()
    assert report.to_latex(intervals=False) != report.to_latex()
    assert report.to_text(layout="leaderboard") != report.to_text()
    with pytest.raises(prefix_exec.PrefixExecError, match="layout"):
        report.to_text(layout="wide")
    assert "Dual-Loop" in repr(report) or "conditions" in repr(report)


def test_convert_is_the_cli_s(released):
    tau = released / "tau-bench" / "gpt-4o-airline.json"
    r = wheel_cli("convert", str(tau), "-o", "-", "--quiet")
    assert r.returncode == 0
    assert prefix_exec.convert_jsonl(tau).encode() == r.stdout
    rollouts = prefix_exec.convert(tau)
    assert len(rollouts) == sum(
        1 for line in r.stdout.splitlines() if not line.startswith(b'{"tools"')
    )
    assert {"dataset", "task_id", "model", "method", "success", "steps"} <= set(rollouts[0])
    # Canonical rollouts score like the released file.
    text = "\n".join(json.dumps(x) for x in rollouts)
    assert (
        prefix_exec.score(text, bootstrap=0).conditions
        == prefix_exec.score(tau, bootstrap=0).conditions
    )


RELEASED_SETS = [
    "tau-bench/gpt-4o-airline.json",
    "tau2-bench",
    "bfcl/gpt-oss-20b-vllm",
    "bfcl/gorilla-pr1308-glyphh-ada-1.1",
    "toolsandbox/agent_openai",
    "inspect",
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("rel", RELEASED_SETS)
def test_released_runs_are_byte_identical(released, rel):
    path = released / rel
    if not path.exists():
        pytest.skip(f"{path} not found")
    report = prefix_exec.score(path, bootstrap=500, seed=1)
    assert report.to_json().encode() == cli_json(str(path), "--bootstrap", "500", "--seed", "1")


def test_released_runs_without_rollouts_raise_the_cli_s_message(released):
    # The BFCL data release holds questions and answers, no model's results: nothing to score.
    path = released / "bfcl" / "gorilla-data-v4-26ad99e"
    with pytest.raises(prefix_exec.PrefixExecError) as e:
        prefix_exec.score(path, bootstrap=0)
    r = wheel_cli("score", str(path), "--bootstrap", "0")
    assert r.returncode == 1
    stderr = r.stderr.decode()
    for line in str(e.value).splitlines():
        assert line in stderr


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_released_runs_match_the_native_binary(released, native_cli):
    paths = [released / "tau-bench" / "gpt-4o-airline.json", released / "bfcl" / "gpt-oss-20b-vllm"]
    args = [str(p) for p in paths]
    report = prefix_exec.score(paths, bootstrap=300)
    assert report.to_json().encode() == cli_json(*args, "--bootstrap", "300", cli=native_cli)


def test_the_gil_is_released_while_scoring():
    done = threading.Event()
    result = {}

    def work():
        result["report"] = prefix_exec.score(EXAMPLE, bootstrap=4000, threads=1)
        done.set()

    t = threading.Thread(target=work)
    start = time.perf_counter()
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    elapsed = time.perf_counter() - start
    assert "report" in result
    # Had the GIL been held, this thread would not have run at all while scoring took time.
    assert elapsed < 0.05 or ticks >= 10, (elapsed, ticks)


def test_python_dash_m(tmp_path):
    import subprocess
    import sys

    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "prefix_exec",
            "score",
            str(EXAMPLE),
            "--bootstrap",
            "100",
            "--json",
            "-",
            "--quiet",
        ],
        capture_output=True,
        timeout=600,
    )
    assert r.returncode == 0
    assert r.stdout == cli_json(str(EXAMPLE), "--bootstrap", "100")


TRANSCRIPT = """{"task_id": "t1", "model": "m", "pass": false, "score": 0.5, "messages": [
 {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}]},
 {"role": "tool", "tool_call_id": "c1", "content": "Error: nope"}]}
"""


def test_transcripts_with_a_field_mapping(tmp_path):
    path = tmp_path / "m_t1.json"
    path.write_text(TRANSCRIPT)
    detected = prefix_exec.score(path, bootstrap=0)
    assert detected.conditions[0]["final_success"]["value"] == 0.0
    assert detected.to_dict()["inputs"][0]["mapping"]["success"] == "pass"
    mapped = prefix_exec.score(path, bootstrap=0, fields={"success": "score", "threshold": 0.5})
    assert mapped.conditions[0]["final_success"]["value"] == 1.0
    expected = cli_json(str(path), "--bootstrap", "0", "--field", "success=score", "--field", "threshold=0.5")
    assert mapped.to_json().encode() == expected


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_released_transcripts_are_byte_identical(released):
    path = released / "generic"
    if not path.exists():
        pytest.skip(f"{path} not found")
    report = prefix_exec.score(path, bootstrap=200, fields={"success": "pass"})
    assert report.to_json().encode() == cli_json(
        str(path), "--bootstrap", "200", "--field", "success=pass"
    )


REPO = ROOT / "tests" / "fixtures" / "repo"


def test_a_results_repository_reads_right():
    """Two runs of one model are two conditions unless merge_runs=True; a model named by its
    Hugging Face cache path reads as the model, the path kept; single-turn BFCL is skipped."""
    r = prefix_exec.score(REPO, bootstrap=0)
    rows = [(c["dataset"], c["model"], c["method"], c["n"]) for c in r.conditions]
    assert ("toolsandbox", "acme/tiny-1", "default (run 2025-01-02 03:04:05)", 7) in rows
    assert ("toolsandbox", "acme/tiny-1", "default (run 2025-01-02 23:04:05)", 7) in rows
    qwen = next(c for c in r.conditions if c["model"] == "Qwen/Qwen3-32B")
    assert "models--Qwen--Qwen3-32B" in qwen["model_path"]
    assert not any(c["dataset"] in ("bfcl/simple", "bfcl/irrelevance") for c in r.conditions)
    merged = prefix_exec.score(REPO, bootstrap=0, merge_runs=True)
    sandbox = [(c["method"], c["n"]) for c in merged.conditions if c["dataset"] == "toolsandbox"]
    assert sandbox == [("default", 14)]
    # Each run's summary agrees with its rows: two checks passed, neither among the problems.
    assert len(r.checks) == 2, r.checks
    assert all("self-check: the mean similarity" in c and "matches" in c for c in r.checks)
    assert not any("self-check" in d for d in r.diagnostics)


def test_archives_read_as_the_folder_they_hold(tmp_path):
    """A .tar.gz and a .zip of a results repository give the folder's conditions."""
    import tarfile
    import zipfile

    top = REPO / "agent_hard_benchmark-face722e"
    tgz = tmp_path / "repo.tar.gz"
    with tarfile.open(tgz, "w:gz") as t:
        t.add(top, arcname=top.name)
    zf = tmp_path / "repo.zip"
    with zipfile.ZipFile(zf, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(top.rglob("*")):
            if p.is_file():
                z.write(p, p.relative_to(REPO))
    folder = prefix_exec.score(top, bootstrap=200).conditions
    for archive in (tgz, zf):
        assert prefix_exec.score(archive, bootstrap=200).conditions == folder, archive.name


def test_filter_and_common_tasks_are_the_cli_s():
    args = ("--bootstrap", "200", "--seed", "2", "--filter", "trial=1; outcome!=crashed", "--common-tasks")
    report = prefix_exec.score(EXAMPLE, bootstrap=200, seed=2, filter="trial=1; outcome!=crashed", common_tasks=True)
    assert report.to_json().encode() == cli_json(str(EXAMPLE), *args)
    assert report.to_dict()["settings"]["filter"] == "trial=1; outcome!=crashed; common"
    # No filter: no `filter` in the settings (the report of every rollout, unchanged).
    assert "filter" not in prefix_exec.score(EXAMPLE, bootstrap=0).to_dict()["settings"]
    with pytest.raises(prefix_exec.PrefixExecError, match="unknown field"):
        prefix_exec.score(EXAMPLE, bootstrap=0, filter="colour=red")
    with pytest.raises(prefix_exec.PrefixExecError, match="keeps no rollout"):
        prefix_exec.score(EXAMPLE, bootstrap=0, filter="model=nobody")


def test_failure_clusters_are_the_cli_s_csv(tmp_path):
    import io

    import pandas as pd

    out = tmp_path / "clusters.csv"
    cli_json(str(EXAMPLE), "--bootstrap", "0", "--clusters", str(out))
    report = prefix_exec.score(EXAMPLE, bootstrap=0)
    df = report.failure_clusters()
    csv = pd.read_csv(io.StringIO(out.read_text()), keep_default_na=False, na_values=[""])
    assert len(df) == len(csv) > 0
    assert list(df.columns) == list(csv.columns)
    assert list(df["n"]) == list(csv["n"])
    assert list(df["pattern"]) == list(csv["pattern"])
    # Every failure in exactly one cluster: per condition, n adds up to RR-Eligible.
    sums = df.groupby(["dataset", "model", "method"])["n"].sum()
    for c in report.conditions:
        assert sums.get((c["dataset"], c["model"], c["method"]), 0) == c["rr_eligible"]


def test_search_is_the_cli_s():
    args = ["search", str(EXAMPLE), "--query", "a", "--field", "tool", "--json", "--quiet"]
    r = wheel_cli(*args)
    assert r.returncode == 0, r.stderr.decode()
    hits = json.loads(r.stdout)
    df = prefix_exec.search(EXAMPLE, "a", field="tool")
    assert df.attrs["total"] == len(hits) == len(df) > 0
    assert list(df["task_id"]) == [h["task_id"] for h in hits]
    assert list(df["step"]) == [h["step"] for h in hits]
    assert set(df["field"]) == {"tool"}
    page = prefix_exec.search(EXAMPLE, "a", field="tool", offset=2, limit=3)
    assert len(page) == 3 and page.attrs["total"] == len(hits)
    assert list(page["rollout"]) == [h["rollout"] for h in hits[2:5]]
    # In-memory input is read back from memory.
    line = '{"dataset":"d","task_id":"t","model":"m","method":"x","success":false,"steps":[{"tool":"cd","ok":false,"error":"No such dir"}]}\n'
    df = prefix_exec.search(line, "such", field="error")
    assert list(df["text"]) == ["No such dir"] and list(df["step"]) == [1]
    with pytest.raises(prefix_exec.PrefixExecError, match="not a valid regular expression"):
        prefix_exec.search(EXAMPLE, "(a")
