#!/usr/bin/env python3
"""Writes the small files of the hostile corpus (tests/hostile/*). Run from anywhere:

    python3 tests/hostile/generate.py

The files are committed; this script documents how each was made and remakes them byte for byte.
The big cases (50 MB line, 10,000-deep nesting, 100,000 steps, 20,000 conditions) are generated
in memory by tests/hostile.rs, not stored.
"""
import json
import os
import struct
import zipfile
import zlib
import io

HERE = os.path.dirname(os.path.abspath(__file__))


def line(task, success=True, steps=None, **extra):
    row = {"dataset": "d", "task_id": task, "model": "m", "method": "a", "success": success,
           "steps": steps if steps is not None else [{"tool": "x", "ok": True}]}
    row.update(extra)
    return json.dumps(row, separators=(",", ":"))


GOOD = [
    line("t1"),
    line("t2", False, [{"tool": "x", "ok": True}, {"tool": "y", "ok": False, "label": "state"}]),
    line("t3", True, [{"tool": "x", "error": "No such file"}, {"tool": "x", "ok": True}]),
    line("t4", False, [], label="information"),
]


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def lines(rows):
    return "".join(r + "\n" for r in rows)


write("empty.jsonl", b"")
write("blank-only.jsonl", "\n\n   \n\t\n\r\n")
write("good.jsonl", lines(GOOD))
write("bom.jsonl", b"\xef\xbb\xbf" + lines(GOOD).encode())
write("crlf.jsonl", lines(GOOD).replace("\n", "\r\n"))
# The third line holds a byte that is not UTF-8 inside a string.
bad_utf8 = line("t-bad", True, [{"tool": "xBAD", "ok": True}]).encode().replace(b"BAD", b"\xff")
write("invalid-utf8.jsonl", b"".join(l + b"\n" for l in [GOOD[0].encode(), GOOD[1].encode(), bad_utf8,
                                                          GOOD[2].encode(), GOOD[3].encode()]))
# Numbers JSON does not have (NaN, Infinity) and one no double holds (1e400), in every numeric
# place, between valid lines.
write("nonfinite.jsonl", lines([
    GOOD[0],
    '{"dataset":"d","task_id":"n1","model":"m","method":"a","success":true,"steps":[],"cost":{"tokens":NaN}}',
    GOOD[1],
    '{"dataset":"d","task_id":"n2","model":"m","method":"a","success":true,"steps":[],"cost":{"latency_s":Infinity}}',
    '{"dataset":"d","task_id":"n3","model":"m","method":"a","success":true,"steps":[],"cost":{"usd":1e400}}',
    '{"dataset":"d","task_id":"n4","model":"m","method":"a","success":1e400,"steps":[]}',
    '{"dataset":"d","task_id":-Infinity,"model":"m","method":"a","success":true,"steps":[]}',
    '{"dataset":"d","task_id":"n6","model":"m","method":"a","success":true,"steps":[],"cost":{"tokens":-1e400}}',
    GOOD[2],
    GOOD[3],
]))
# A repeated key makes a line ambiguous: it is refused, never resolved silently.
write("duplicate-keys.jsonl", lines([
    GOOD[0],
    '{"dataset":"d","task_id":"k1","model":"m","method":"a","success":true,"success":false,"steps":[]}',
    '{"dataset":"d","task_id":"k2","model":"m","model":"m2","method":"a","success":true,"steps":[]}',
    '{"dataset":"d","task_id":"k3","model":"m","method":"a","success":true,"steps":[{"tool":"x","ok":true,"ok":false}]}',
    '{"dataset":"d","task_id":"k4","model":"m","method":"a","success":true,"steps":[{"tool":"x","args":{"a":1},"args":{"a":2},"ok":true}]}',
    GOOD[1],
    GOOD[2],
    GOOD[3],
]))
# Every field, one wrong type per line.
wrong = [
    ("dataset", 7), ("dataset", None), ("dataset", ""), ("task_id", [1]), ("task_id", {"a": 1}),
    ("task_id", 1.5), ("task_id", True), ("model", 3), ("model", ["m"]), ("method", {}),
    ("method", False), ("success", "true"), ("success", None), ("success", [True]),
    ("steps", {"tool": "x"}), ("steps", "[]"), ("steps", None), ("steps", 3),
    ("no_tool_ok", "yes"), ("label", 5), ("label", "typo"), ("cost", "cheap"), ("cost", [1]),
    ("cost", {"tokens": "many"}), ("cost", {"usd": -0.5}), ("cost", {"latency_s": True}),
]
rows = [GOOD[0]]
for i, (field, value) in enumerate(wrong):
    row = json.loads(line(f"w{i}"))
    row[field] = value
    rows.append(json.dumps(row, separators=(",", ":")))
step_wrong = [
    7, "step", None, [1], {"tool": "x", "ok": "false"}, {"tool": "x", "ok": 0},
    {"tool": "x", "ok": False, "label": "typo"}, {"tool": "x", "ok": False, "label": 3},
]
for i, step in enumerate(step_wrong):
    rows.append(line(f"s{i}", True, [{"tool": "x", "ok": True}, step]))
rows += [GOOD[1], GOOD[2], GOOD[3]]
rows.append("[1, 2, 3]")
rows.append('"a string"')
rows.append("null")
rows.append("{")
rows.append("not json at all")
write("wrong-types.jsonl", lines(rows))
# success must be true/false or 1/0.
write("bad-success.jsonl", lines([
    GOOD[0],
    line("b1", -1), line("b2", 0.5), line("b3", 2), line("b4", -0.0), line("b5", 1.0000001),
    line("b6", "1"),
    GOOD[1], GOOD[2], GOOD[3],
    line("b7", 1), line("b8", 0),
]))
write("steps-not-array.jsonl", lines([
    GOOD[0],
    line("n1", True, {"0": {"tool": "x", "ok": True}}),
    line("n2", True, "x"),
    line("n3", True, 12),
    '{"dataset":"d","task_id":"n4","model":"m","method":"a","success":true}',
    GOOD[1], GOOD[2], GOOD[3],
]))


# Binary files under a .jsonl name: a real PNG, a real PDF, a real zip (holding JSONL).
def png():
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + bytes([x * 16 % 256, 0, 255 - x * 16 % 256]) * 16 for x in range(16))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def pdf():
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>"]
    out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"
    offsets = []
    for i, o in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return out


def zipped():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        info = zipfile.ZipInfo("runs.jsonl", date_time=(2026, 1, 1, 0, 0, 0))
        z.writestr(info, lines(GOOD))
    return buf.getvalue()


write("image.png.jsonl", png())
write("document.pdf.jsonl", pdf())
write("archive.zip.jsonl", zipped())
write("utf16.jsonl", b"\xff\xfe" + lines(GOOD[:1]).encode("utf-16-le"))
# One file, two formats: canonical lines with BFCL result lines among them. The first line makes
# the file canonical; the BFCL lines are line errors.
write("mixed-lines.jsonl", lines([
    GOOD[0],
    '{"id": "multi_turn_base_0", "result": [[["cd(folder=\'a\')"]]], "inference_log": []}',
    GOOD[1],
    '{"accuracy": 0.5, "correct_count": 1, "total_count": 2}',
    GOOD[2],
    GOOD[3],
]))
