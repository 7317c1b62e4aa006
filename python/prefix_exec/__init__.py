"""Prefix executability for tool-using LLM agents, from Python.

The same Rust core as the ``prefix-exec`` command line and the browser app, compiled into this
package: :func:`score` gives the ``prefix-exec/report/v1`` report, byte-identical to
``prefix-exec score --json`` for the same input and settings; :func:`convert` gives canonical
rollouts. The ``prefix-exec`` command installed with the package is the CLI, plus ``view``, a
local viewer (the web app on 127.0.0.1 with your files preloaded).

>>> import prefix_exec
>>> report = prefix_exec.score("runs/", bootstrap=2000, seed=7)   # doctest: +SKIP
>>> report.to_pandas()                                            # doctest: +SKIP
>>> report.ranks()                                                # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _native
from ._native import PrefixExecError

__all__ = ["score", "search", "convert", "convert_jsonl", "Report", "PrefixExecError", "__version__"]
__version__: str = _native.__version__

#: What :func:`score` and :func:`convert` read: a path (file or folder), in-memory JSONL (``bytes``,
#: or a ``str`` holding a newline or starting with ``{``), or a sequence of these.
Input = Union[str, bytes, bytearray, memoryview, "os.PathLike[str]"]
Inputs = Union[Input, Sequence[Input]]


def _inputs(paths: Inputs) -> List[Union[str, Tuple[str, bytes]]]:
    """Paths as ``str``; in-memory data as ``(name, bytes)``, named ``<memory N>``."""
    if isinstance(paths, (str, bytes, bytearray, memoryview, os.PathLike)):
        paths = [paths]
    out: List[Union[str, Tuple[str, bytes]]] = []
    memory = 0
    for p in paths:
        if isinstance(p, (bytes, bytearray, memoryview)):
            memory += 1
            out.append((f"<memory {memory}>", bytes(p)))
        elif isinstance(p, str) and ("\n" in p or p.lstrip().startswith(("{", "["))):
            # No file name holds a newline or starts with a JSON value's first character: text.
            memory += 1
            out.append((f"<memory {memory}>", p.encode("utf-8")))
        elif isinstance(p, (str, os.PathLike)):
            out.append(os.fspath(p))
        else:
            raise TypeError(f"expected a path, bytes or str, got {type(p).__name__}: {p!r}"[:200])
    if not out:
        raise PrefixExecError("no input: give at least one file, folder or JSONL text")
    return out


def _flags(options: Dict[str, Any]) -> List[str]:
    """Keyword options as the CLI's flags: ``max_depth="all"`` → ``--max-depth all``,
    ``no_schema_checks=True`` → ``--no-schema-checks``, a list repeats its flag, ``pair=("A", "B")``
    → ``--pair A,B``, ``compare=(model_a, method_a, model_b, method_b)`` → ``--compare`` and four
    values, ``fields={"success": "evaluation.utility"}`` → ``--field success=evaluation.utility``.
    Unknown names fail as the CLI fails on an unknown flag."""
    flags: List[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if key == "fields" and isinstance(value, dict):
            for name, path in value.items():
                flags += ["--field", f"{name}={path}"]
        elif value is True:
            flags.append(flag)
        elif key == "pair":
            pairs = [value] if isinstance(value, str) or _is_names(value, 2) else value
            for p in pairs:
                flags += [flag, p if isinstance(p, str) else ",".join(p)]
        elif key == "compare":
            for c in [value] if _is_names(value, 4) else value:
                flags.append(flag)
                flags += [str(v) for v in c]
        elif isinstance(value, (list, tuple)):
            for v in value:
                flags += [flag, str(v)]
        else:
            flags += [flag, str(value)]
    return flags


def _is_names(value: Any, n: int) -> bool:
    return (
        isinstance(value, (list, tuple))
        and len(value) == n
        and all(isinstance(v, str) for v in value)
    )


def _warn(diagnostics: Sequence[str]) -> None:
    # What the CLI prints to stderr about the input (bad lines, which do not stop scoring,
    # skipped records, self-checks that failed): one warning, and Report.diagnostics.
    if diagnostics:
        warnings.warn(
            "prefix-exec: about the input:\n" + "\n".join(diagnostics),
            stacklevel=3,
        )


class Report:
    """A ``prefix-exec/report/v1`` report.

    :meth:`to_json` is byte-identical to ``prefix-exec score --json`` for the same input and
    settings; :attr:`conditions` and :attr:`paired` are its parts as plain Python objects.
    """

    __slots__ = ("_native", "_dict")

    def __init__(self, native: "_native.NativeReport") -> None:
        self._native = native
        self._dict: Optional[Dict[str, Any]] = None

    def to_json(self) -> str:
        """The report JSON, exactly as ``prefix-exec score --json`` writes it."""
        return self._native.json

    def to_dict(self) -> Dict[str, Any]:
        """The report JSON as Python objects (a fresh copy each call)."""
        return json.loads(self._native.json)

    def _data(self) -> Dict[str, Any]:
        if self._dict is None:
            self._dict = json.loads(self._native.json)
        return self._dict

    @property
    def conditions(self) -> List[Dict[str, Any]]:
        """One dict per (dataset, model, method): the metrics, their intervals, PEC, labels."""
        return self._data()["conditions"]

    @property
    def paired(self) -> List[Dict[str, Any]]:
        """Paired comparisons (methods, models, or any two conditions) with bootstrap deltas."""
        return self._data().get("paired", [])

    @property
    def notes(self) -> List[str]:
        """The report's notes (what the CLI prints as ``prefix-exec: note: …``)."""
        return self._data().get("notes", [])

    @property
    def diagnostics(self) -> List[str]:
        """Input problems (line-located), as the CLI prints them to stderr; empty when clean."""
        return list(self._native.diagnostics)

    @property
    def checks(self) -> List[str]:
        """Self-checks that passed, as ``file: message``: figures the files state themselves (an
        Inspect log's aggregate success rate, a ToolSandbox summary's mean similarity),
        recomputed from their rows and found equal. Confirmations, not problems: a check that
        fails is among :attr:`diagnostics`."""
        return [f"{c['file']}: {c['message']}" for c in self._data().get("checks", [])]

    @property
    def rank_tables(self) -> List[Dict[str, Any]]:
        """The report's ``ranks`` entries as plain dicts (see :meth:`ranks`)."""
        return self._data().get("ranks", [])

    @property
    def rank_divergences(self) -> List[Dict[str, Any]]:
        """The report's ``rank_divergence`` entries as plain dicts (see :meth:`rank_divergence`)."""
        return self._data().get("rank_divergence", [])

    @property
    def failure_cluster_list(self) -> List[Dict[str, Any]]:
        """The report's ``failure_clusters`` entries as plain dicts (see :meth:`failure_clusters`)."""
        return self._data().get("failure_clusters", [])

    def failure_clusters(self) -> "Any":
        """Every rollout that is not fully executable, grouped by its first rejected call's
        (label, tool, normalised message) per dataset, as a tidy ``pandas.DataFrame``: one row per
        (cluster, condition with rollouts in it), the rows of ``prefix-exec score --clusters``.
        Columns: ``dataset``, ``label``, ``tool`` (None for crashes and no-tool rollouts),
        ``pattern`` (the normalised message, ``crash: …``, ``no call``, ``(no message)``),
        ``total`` (the cluster's rollouts), ``model``, ``method``, ``n`` (the condition's rollouts
        in the cluster), ``share`` (``n`` over the condition's failures, its RR-Eligible). A
        condition's ``n`` add up to its RR-Eligible. Needs pandas."""
        pd = _pandas("failure_clusters")
        failures = {
            (c["dataset"], c["model"], c["method"]): c["rr_eligible"] for c in self.conditions
        }
        rows = []
        for k in self.failure_cluster_list:
            for c in k["conditions"]:
                of = failures.get((k["dataset"], c["model"], c["method"]), 0)
                rows.append(
                    {
                        "dataset": k["dataset"],
                        "label": k["label"],
                        "tool": k["tool"],
                        "pattern": k["pattern"],
                        "total": k["total"],
                        "model": c["model"],
                        "method": c["method"],
                        "n": c["n"],
                        "share": c["n"] / of if of else float("nan"),
                    }
                )
        columns = ["dataset", "label", "tool", "pattern", "total", "model", "method", "n", "share"]
        return pd.DataFrame(rows, columns=columns)

    def to_text(self, decimals: int = 2, layout: Optional[str] = None) -> str:
        """What ``prefix-exec score`` prints: the main table, then the Ranks sections
        (``layout``: "paper" or "leaderboard"; default as the CLI chooses)."""
        return self._native.text(decimals, layout)

    def to_csv(self, decimals: int = 2, layout: Optional[str] = None) -> str:
        """The main table as CSV, as the app's CSV export writes it (values and interval ends at
        full precision, block maxima flagged at ``decimals`` places, then each ranking metric's
        rank and rank interval: ``ter_rank``, ``ter_rank_lo``, ``ter_rank_hi``, …; layout as
        :meth:`to_text`)."""
        return self._native.csv(decimals, layout)

    def to_latex(
        self,
        decimals: int = 2,
        intervals: bool = True,
        layout: Optional[str] = None,
        rank: str = "final_success",
    ) -> str:
        """The main table as a LaTeX ``booktabs`` tabular, as the app's LaTeX export writes it
        (bold block maxima; intervals in brackets unless ``intervals=False``), with a last column
        of each condition's rank within its dataset by ``rank`` ("final_success", "ter" or
        "auc_pec") and its simultaneous rank interval."""
        return self._native.latex(decimals, intervals, layout, rank)

    def ranks(self) -> "Any":
        """The ranks as a tidy ``pandas.DataFrame``: one row per (dataset, metric, condition),
        metrics ``final_success``, ``ter``, ``auc_pec``, for every dataset of two or more
        conditions. Columns: ``dataset``, ``metric``, ``model``, ``method``, ``value`` (the point
        estimate), ``rank`` (ties share the best rank), ``rank_lo`` / ``rank_hi`` (the
        simultaneous rank interval: every interval of a dataset and metric holds at once with
        probability about ``level``), ``top`` (``rank_lo`` is 1: tied with #1), ``level``,
        ``critical_value``. Without the bootstrap the interval columns are missing values (and
        ``top`` is False). Needs pandas."""
        pd = _pandas("ranks")
        rows = []
        for t in self.rank_tables:
            for c in t["conditions"]:
                rows.append(
                    {
                        "dataset": t["dataset"],
                        "metric": t["metric"],
                        "model": c["model"],
                        "method": c["method"],
                        "value": c["value"],
                        "rank": c["rank"],
                        "rank_lo": c["rank_lo"],
                        "rank_hi": c["rank_hi"],
                        "top": c["rank_lo"] == 1,
                        "level": t["level"],
                        "critical_value": t["critical_value"],
                    }
                )
        columns = [
            "dataset", "metric", "model", "method", "value", "rank", "rank_lo", "rank_hi", "top",
            "level", "critical_value",
        ]  # fmt: skip
        df = pd.DataFrame(rows, columns=columns)
        for col in ("rank_lo", "rank_hi"):
            df[col] = df[col].astype("Int64")
        df["critical_value"] = df["critical_value"].astype("float64")
        return df

    def rank_divergence(self, pairs: bool = False) -> "Any":
        """Where final success and a prefix metric rank a dataset's conditions differently, as a
        ``pandas.DataFrame``. By default one row per (dataset, prefix metric): ``dataset``,
        ``a`` ("final_success"), ``b`` ("ter" or "auc_pec"), ``kendall_tau_b`` with
        ``kendall_tau_b_lo`` / ``kendall_tau_b_hi`` (its percentile interval over the
        resamples), ``discordant`` (pairs ordered oppositely) and ``significant`` (those where
        each condition certainly ranks above the other on the metric it leads). With
        ``pairs=True`` one row per discordant pair: ``dataset``, ``a``, ``b``,
        ``ahead_on_a_model``, ``ahead_on_a_method``, ``ahead_on_b_model``,
        ``ahead_on_b_method``, ``significant``. Needs pandas."""
        pd = _pandas("rank_divergence")
        rows = []
        for d in self.rank_divergences:
            tau = d["kendall_tau_b"]
            ci = tau["ci"] or (None, None)
            discordant = d["discordant"]
            if pairs:
                for p in discordant:
                    other = p.get("ahead_on_" + d["b"]) or (None, None)
                    rows.append(
                        {
                            "dataset": d["dataset"],
                            "a": d["a"],
                            "b": d["b"],
                            "ahead_on_a_model": p["ahead_on_success"][0],
                            "ahead_on_a_method": p["ahead_on_success"][1],
                            "ahead_on_b_model": other[0],
                            "ahead_on_b_method": other[1],
                            "significant": p["significant"],
                        }
                    )
            else:
                rows.append(
                    {
                        "dataset": d["dataset"],
                        "a": d["a"],
                        "b": d["b"],
                        "kendall_tau_b": tau["value"],
                        "kendall_tau_b_lo": ci[0],
                        "kendall_tau_b_hi": ci[1],
                        "discordant": len(discordant),
                        "significant": sum(1 for p in discordant if p["significant"]),
                    }
                )
        if pairs:
            columns = [
                "dataset", "a", "b", "ahead_on_a_model", "ahead_on_a_method", "ahead_on_b_model",
                "ahead_on_b_method", "significant",
            ]  # fmt: skip
        else:
            columns = [
                "dataset", "a", "b", "kendall_tau_b", "kendall_tau_b_lo", "kendall_tau_b_hi",
                "discordant", "significant",
            ]  # fmt: skip
        df = pd.DataFrame(rows, columns=columns)
        if not pairs:
            for col in ("kendall_tau_b", "kendall_tau_b_lo", "kendall_tau_b_hi"):
                df[col] = df[col].astype("float64")
        return df

    def to_pandas(self) -> "Any":
        """A tidy ``pandas.DataFrame``: one row per condition; for each estimate a value column
        and ``_lo`` / ``_hi`` interval columns (``ter``, ``ter_lo``, ``ter_hi``, …), PEC by depth
        (``pec_1``, ``pec_1_lo``, …), counts, costs (``cost_<name>``), and first-failure label
        counts (``label_<name>``; ``label_source_<source>`` where the labels came from).
        Needs pandas (``pip install pandas``)."""
        pd = _pandas("to_pandas")
        df = pd.DataFrame([_flat_condition(c) for c in self.conditions])
        # Label counts are listed only where non-zero: a missing one is 0. Grouped at the end.
        labels = sorted(
            (c for c in df.columns if c.startswith("label_")),
            key=lambda c: (c.startswith("label_source_"), c),
        )
        if labels:
            df[labels] = df[labels].fillna(0).astype("int64")
            df = df[[c for c in df.columns if c not in labels] + labels]
        return df

    def __repr__(self) -> str:
        c = self.conditions
        datasets = sorted({x["dataset"] for x in c})
        return (
            f"<prefix_exec.Report: {len(c)} conditions, {sum(x['n'] for x in c)} rollouts, "
            f"datasets {', '.join(datasets)}>"
        )


def _pandas(method: str) -> "Any":
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(f"Report.{method}() needs pandas: pip install pandas") from e
    return pd


def _flat_condition(c: Dict[str, Any]) -> Dict[str, Any]:
    """One condition as a flat row (see :meth:`Report.to_pandas`)."""
    row: Dict[str, Any] = {}
    for key, value in c.items():
        if isinstance(value, dict) and set(value) == {"value", "ci"}:
            row[key] = value["value"]
            ci = value["ci"] or (None, None)
            row[key + "_lo"], row[key + "_hi"] = ci
        elif key == "pec":
            for p in value:
                k = p["k"]
                row[f"pec_{k}"] = p["value"]
                ci = p.get("ci") or (None, None)
                row[f"pec_{k}_lo"], row[f"pec_{k}_hi"] = ci
        elif key == "pass_hat":
            for k, v in enumerate(value, start=1):
                row[f"pass_hat_{k}"] = v
        elif key in ("first_failure_labels", "first_failure_label_sources") and isinstance(
            value, dict
        ):
            prefix = "label_" if key == "first_failure_labels" else "label_source_"
            for name, v in value.items():
                if isinstance(v, (int, float)):
                    row[prefix + name] = v
        elif isinstance(value, dict):
            for name, v in value.items():
                if isinstance(v, (int, float, str)) or v is None:
                    row[f"{'cost' if key == 'cost' else key}_{name}"] = v
        elif isinstance(value, (int, float, str)) or value is None:
            row[key] = value
    return row


def score(
    paths: Inputs,
    *,
    bootstrap: int = 10000,
    seed: int = 0,
    threads: Optional[int] = None,
    **options: Any,
) -> Report:
    """Scores rollouts: the report of ``prefix-exec score`` for the same input and settings.

    ``paths``: files and folders of any supported format (folders are read recursively, as by the
    CLI), or in-memory JSONL as ``bytes`` / ``str``; one or a list. ``bootstrap`` resamples
    (0: no bootstrap intervals), ``seed`` of the resampler, ``threads`` (default: every core; the
    report is the same for any number). Other options are the CLI's flags of ``score``, with
    underscores: ``level=0.9``, ``max_depth="all"``, ``pair=("Dual-Loop", "ReAct")``,
    ``compare=(model_a, method_a, model_b, method_b)``, ``exclude_termination=[...]``,
    ``no_schema_checks=True``, ``label_rules="rules.json"``, ``dataset=…``, ``model=…``; for
    message transcripts ``fields={"success": "evaluation.utility", "threshold": 0.5}`` (the
    field mapping, ``--field``), ``mapping="fields.json"``, ``reject_rules="rules.json"``, …

    Lines that cannot be read are skipped, as by the CLI, and reported as a warning and in
    :attr:`Report.diagnostics`. Raises :class:`PrefixExecError` with the CLI's message when no
    valid rollout was read, a file cannot be opened or an option is wrong. The GIL is released
    while reading and scoring.
    """
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise PrefixExecError(f"threads must be a positive integer, got {threads!r}")
    flags = _flags({"bootstrap": bootstrap, "seed": seed, **options})
    native = _native.score(_inputs(paths), flags, threads)
    report = Report(native)
    _warn(report.diagnostics)
    return report


def search(
    paths: Inputs,
    query: str,
    *,
    field: str = "all",
    condition: Any = None,
    offset: int = 0,
    limit: Optional[int] = None,
    threads: Optional[int] = None,
    **options: Any,
) -> "Any":
    """Searches every rollout for a regular expression: the hits of ``prefix-exec search PATHS
    --query QUERY --json`` as a ``pandas.DataFrame``, one row per (rollout, step, field) that
    matches, in the CLI's order (condition, task, trial, step).

    ``query``: the regex crate's syntax, case-insensitive unless it says ``(?-i)``. ``field``:
    "tool", "args" (call arguments as compact JSON), "error" (the whole reply of a rejected
    call), "message" (the messages in the rollout's source) or "all". ``condition``: a
    (dataset, model, method) or a list of them, to search only those. ``offset`` / ``limit``:
    the page. Other options are ``search``'s (``score``'s import flags with underscores; the
    transcripts' field mapping is ``map_field=[...]``).

    Columns: ``dataset``, ``model``, ``method``, ``task_id``, ``trial`` (1-based, per condition
    and task), ``step`` (1-based; missing for a message), ``field``, ``text`` (a snippet around the
    first match), ``mark_start`` / ``mark_end`` (the match in ``text``, in characters),
    ``matches`` (in the field's whole text), ``rollout`` (the rollout's index). ``attrs``:
    ``total`` (hits in all), ``rollouts`` (searched), ``unreadable`` (rollouts that could not be
    read back, also warned about). Raises :class:`PrefixExecError` for a bad pattern. Needs
    pandas.
    """
    pd = _pandas("search")
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise PrefixExecError(f"threads must be a positive integer, got {threads!r}")
    flags = ["--query", query, "--field", field, "--offset", str(offset)]
    if limit is not None:
        flags += ["--limit", str(limit)]
    if condition is not None:
        conditions = [condition] if _is_names(condition, 3) else condition
        for c in conditions:
            flags += ["--condition", *[str(v) for v in c]]
    flags += _flags(options)
    text, diagnostics = _native.search(_inputs(paths), flags, threads)
    _warn(diagnostics)
    page = json.loads(text)
    rows = [
        {
            "dataset": h["dataset"],
            "model": h["model"],
            "method": h["method"],
            "task_id": h["task_id"],
            "trial": h["trial"],
            "step": h["step"],
            "field": h["field"],
            "text": h["text"],
            "mark_start": h["mark"][0],
            "mark_end": h["mark"][1],
            "matches": h["matches"],
            "rollout": h["rollout"],
        }
        for h in page["hits"]
    ]
    columns = [
        "dataset", "model", "method", "task_id", "trial", "step", "field", "text", "mark_start",
        "mark_end", "matches", "rollout",
    ]  # fmt: skip
    df = pd.DataFrame(rows, columns=columns)
    df["step"] = df["step"].astype("Int64")
    df.attrs["total"] = page["total"]
    df.attrs["rollouts"] = page["rollouts"]
    df.attrs["unreadable"] = page["unreadable_total"]
    return df


def convert_jsonl(paths: Inputs, **options: Any) -> str:
    """The canonical JSONL that ``prefix-exec convert PATHS -o -`` writes (the same bytes).

    Options are ``convert``'s flags with underscores (``model=…``, ``exclude_termination=[…]``…).
    """
    text, diagnostics = _native.convert(_inputs(paths), _flags(options))
    _warn(diagnostics)
    return text


def convert(paths: Inputs, **options: Any) -> List[Dict[str, Any]]:
    """Canonical rollouts (one dict per rollout, in the order ``convert`` writes them) from
    released runs of any supported format. Lines that only declare tools (``{"tools": …}``)
    are left out; :func:`convert_jsonl` keeps them."""
    rollouts = []
    for line in convert_jsonl(paths, **options).splitlines():
        # The CLI's own test for a tools line (it does not count them as rollouts written).
        if not line.startswith('{"tools"'):
            rollouts.append(json.loads(line))
    return rollouts


def app_dir() -> Optional[str]:
    """The web app packaged with this wheel (``prefix_exec/app``), or None when the package was
    built without it."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "app")
    ok = os.path.isfile(os.path.join(here, "index.html"))
    return here if ok else None
