#!/usr/bin/env python3
"""Builds a ToolSandbox leaderboard folder for bench/leaderboard.sh: the shared complete run copied
under N `agent_*` names, each copy's files made byte-distinct (copy i ends every file with i + 1
trailing newlines: identical files would be recognised as repeats and read once).

    python3 bench/make_leaderboard.py SRC_RUN_DIR OUT_DIR [--copies 15]
"""
import argparse
import os
import sys


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("src", help="a ToolSandbox run folder (result_summary.json + trajectories/)")
    p.add_argument("out")
    p.add_argument("--copies", type=int, default=15)
    a = p.parse_args()
    if not os.path.isfile(os.path.join(a.src, "result_summary.json")):
        print(f"{a.src}: not a ToolSandbox run folder", file=sys.stderr)
        return 2
    stamp = os.path.basename(os.path.normpath(a.src))
    files = bytes_total = 0
    for i in range(a.copies):
        run = os.path.join(a.out, f"agent_model-{i:02d}_user_openai", stamp)
        tail = b"\n" * (i + 1)
        for root, _dirs, names in os.walk(a.src):
            rel = os.path.relpath(root, a.src)
            dest = os.path.normpath(os.path.join(run, rel))
            os.makedirs(dest, exist_ok=True)
            for n in names:
                with open(os.path.join(root, n), "rb") as f:
                    data = f.read() + tail
                with open(os.path.join(dest, n), "wb") as f:
                    f.write(data)
                files += 1
                bytes_total += len(data)
    print(f"{a.copies} runs, {files} files, {bytes_total / 1e6:.1f} MB in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
