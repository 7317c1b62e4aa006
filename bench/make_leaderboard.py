#!/usr/bin/env python3
"""Builds a ToolSandbox leaderboard folder for bench/leaderboard.sh and the archive benchmarks:
the shared complete run copied under N `agent_model-NN_user_openai/` names, each copy made to
differ in content, not only in bytes, so that no cache or memo answers one copy from another:

- outcomes: each scenario's `similarity` is redrawn for a share of the scenarios (and the
  summary's ALL_CATEGORIES mean recomputed from the rows, as the harness writes it);
- error texts: every `tool_call_exception` names its copy and call (`… [run 3, call 17]`), and a
  share of the accepted calls are made to fail with a drawn error, so first-error depths move;
- arguments: the first string value of each call's parameters gets the copy's suffix;
- with --vary-messages (the search benchmarks): the conversation, every message between the
  agent and the user, gets the copy's suffix too, so that a search index cannot keep one
  copy's messages for all (only the system prompts and the tools' replies stay shared, as they
  are between real agents run on one benchmark).

Every file also ends with copy i's i + 1 trailing newlines, so no two copies share a file's
bytes (a scenario without calls has nothing to vary). Draws are seeded per copy: the same command
always writes the same folder.

    python3 bench/make_leaderboard.py SRC_RUN_DIR OUT_DIR [--copies 15] [--vary-messages]
"""
import argparse
import json
import os
import random
import re
import sys

ERRORS = [
    "ValueError: invalid value for {arg}",
    "PermissionError: wifi is off, cannot reach the server",
    "KeyError: '{arg}'",
    "ConnectionError: cellular service is not enabled",
    "TypeError: expected str, got int for {arg}",
]
FIRST_STRING = re.compile(r"(_parameters = \{'[^']*': ')([^']*)(')")


def vary_summary(data, rng, i):
    s = json.loads(data)
    rows = s.get("per_scenario_results", [])
    for row in rows:
        if rng.random() < 0.3:
            row["similarity"] = 1.0 if rng.random() < 0.5 else round(rng.random(), 4)
    sims = [r["similarity"] for r in rows if isinstance(r.get("similarity"), (int, float))]
    agg = s.get("category_aggregated_results", {}).get("ALL_CATEGORIES")
    if isinstance(agg, dict) and sims:
        agg["similarity"] = sum(sims) / len(sims)
    return json.dumps(s, indent=4).encode()


def vary_context(data, rng, i, messages=False):
    d = json.loads(data)
    rows = d.get("_dbs", {}).get("SANDBOX", [])
    for k, row in enumerate(rows):
        if not isinstance(row, dict):
            continue
        if messages and {row.get("sender"), row.get("recipient")} == {"AGENT", "USER"}:
            if isinstance(row.get("content"), str):
                row["content"] += f" (run {i})"
        if row.get("sender") == "AGENT" and row.get("recipient") == "EXECUTION_ENVIRONMENT":
            content = row.get("content")
            if isinstance(content, str):
                row["content"] = FIRST_STRING.sub(
                    lambda m: f"{m.group(1)}{m.group(2)} r{i}{m.group(3)}", content, count=1
                )
        if row.get("sender") == "EXECUTION_ENVIRONMENT" and row.get("recipient") == "AGENT":
            exc = row.get("tool_call_exception")
            if isinstance(exc, str):
                row["tool_call_exception"] = f"{exc} [run {i}, call {k}]"
            elif exc is None and row.get("openai_tool_call_id") and rng.random() < 0.05:
                arg = f"arg_{rng.randrange(100)}"
                row["tool_call_exception"] = rng.choice(ERRORS).format(arg=arg) + f" [run {i}]"
    # As the harness writes it (the shared run's files are indented by 4): a benchmark on
    # one-line files would measure a path no real run takes (a one-line object's keys are
    # read, and so the whole file parsed, to tell a document from JSONL).
    return json.dumps(d, indent=4).encode()


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("src", help="a ToolSandbox run folder (result_summary.json + trajectories/)")
    p.add_argument("out")
    p.add_argument("--copies", type=int, default=15)
    p.add_argument("--vary-messages", action="store_true")
    a = p.parse_args()
    if not os.path.isfile(os.path.join(a.src, "result_summary.json")):
        print(f"{a.src}: not a ToolSandbox run folder", file=sys.stderr)
        return 2
    stamp = os.path.basename(os.path.normpath(a.src))
    files = bytes_total = 0
    for i in range(a.copies):
        rng = random.Random(i)
        run = os.path.join(a.out, f"agent_model-{i:02d}_user_openai", stamp)
        tail = b"\n" * (i + 1)
        for root, dirs, names in os.walk(a.src):
            dirs.sort()
            rel = os.path.relpath(root, a.src)
            dest = os.path.normpath(os.path.join(run, rel))
            os.makedirs(dest, exist_ok=True)
            for n in sorted(names):
                with open(os.path.join(root, n), "rb") as f:
                    data = f.read()
                if n == "result_summary.json":
                    data = vary_summary(data, rng, i)
                elif n == "execution_context.json":
                    data = vary_context(data, rng, i, a.vary_messages)
                # A file no draw changed (a scenario without calls) must still differ.
                data += tail
                with open(os.path.join(dest, n), "wb") as f:
                    f.write(data)
                files += 1
                bytes_total += len(data)
    print(f"{a.copies} runs, {files} files, {bytes_total / 1e6:.1f} MB in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
