#!/usr/bin/env python3
"""Fit the calibrated answer probability (``src/markdown_memory/search/calibration.py``) and
judge it on the projects left out.

1. *Collect* (``--collect``, else the records of an earlier run are reused): every dev question
   (the shared corpus's 8 projects, corpus2's 5, corpus3's cargo, vault and ja; pydantic is
   reserved for outside judging and left out; the held-out files are never read) is searched
   through ``Engine.search`` at the MCP defaults (``top_k`` 5, ``max_tokens`` 2000), with
   ``minilm`` and keyword-only, over the indexes in ``--db-dir`` (``NAME-EMBEDDER.db``, built
   when absent). Each record holds the ranking's features (``calibration.ANSWER_FEATURES``,
   ``HIT_FEATURES`` of its top candidates), whether the first hit answers, whether a hit
   carrying text answers, each top candidate's label, and what the prompt hook would inject
   (its search, ``hook.gate.asks_docs``, the rendered hits). Negatives (``expect: []``) belong
   to the project of the question before them in their file. The quiet prompts
   (eval/hook-quiet-prompts.jsonl) are searched over the shared corpus for the hook's curve.
   ``--ranker`` (``rrf`` | ``learned``) names the ranking searched and calibrated; each has its
   file (``calibration.data_path``). Keep one ``--db-dir`` per ranker: the record caches are
   the ranking's answers.
2. *Leave one project out*: for each project, the three models are fitted on the others and
   predict it; the left-out predictions give the expected calibration error (10 equal-width
   bins), the reliability diagram (``--png``) and the bars: ``high`` = the lowest p_first whose
   answers' first hits are right >= 85% of the time, ``none`` = the p_some below which
   most negatives fall while at most 7% of answerable questions do (at most 0.5), ``hook`` = the lowest
   p_answer at which what the hook injects holds an answering section >= 85% of the time (null
   when no bar reaches it: the hook then injects nothing in that mode, as the issue asks).
3. The shipped models are fitted on every project (fixed iterations, no randomness: rerunning
   gives the same file) and written to ``--out``.

Logistic regression, L2 ``--l2``, by projected gradient descent on standardised features: a
feature listed in ``INCREASING`` / ``DECREASING`` keeps the sign of its weight, so the
probability is monotone in it.

Usage::

    python scripts/calibrate.py --collect --db-dir /work/evaldb/learn-conf \\
        --png docs/calibration-reliability.png --report /tmp/calibration.json
    python scripts/calibrate.py --ranker learned --collect --db-dir /work/evaldb/ranking \\
        --png docs/calibration-reliability-learned.png --report /tmp/calibration-learned.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "scripts"))

from markdown_memory.search import calibration as cal  # noqa: E402

SHARED = next((p for p in (HERE.parent / "shared", Path("/work/shared")) if p.is_dir()), HERE.parent / "shared")
REAL = HERE / "eval" / "real"
#: (index name, corpus, questions file, folders indexed, kind): the written dev sets, then the
#: real users' questions (eval/real; their ``set`` names the project) over the same indexes.
SETS = [
    ("dev", SHARED / "eval-corpus", SHARED / "eval-queries-dev.jsonl", None, "written"),
    ("corpus2", HERE / "eval" / "corpus2", HERE / "eval" / "queries-corpus2-dev.jsonl", None, "written"),
    ("corpus3", HERE / "eval" / "corpus3", HERE / "eval" / "queries-corpus3-dev.jsonl", ["cargo", "vault", "ja"], "written"),
    ("dev", SHARED / "eval-corpus", REAL / "queries-real-shared-a.jsonl", None, "real"),
    ("corpus2", HERE / "eval" / "corpus2", REAL / "queries-real-corpus2.jsonl", None, "real"),
    ("corpus3", HERE / "eval" / "corpus3", REAL / "queries-real-corpus3.jsonl", ["cargo", "vault", "ja"], "real"),
    ("corpus4", HERE / "eval" / "corpus4", REAL / "queries-real-ollama.jsonl", None, "real"),
    ("corpus4", HERE / "eval" / "corpus4", REAL / "queries-real-ruff.jsonl", None, "real"),
]
RESERVED = frozenset({"pydantic"})
EMBEDDERS = ("minilm", "none")
INCREASING, DECREASING = cal.INCREASING, cal.DECREASING
PRECISION = 0.85
#: The share of answerable questions the "none" bar may flag.
NONE_ANSWERABLE = 0.07
BINS = 10


# -- collecting ------------------------------------------------------------------------------
def _correct(path: str, start: int, end: int, expect: Sequence[dict[str, Any]]) -> bool:
    return any(path == e["path"] and start <= int(e["line"]) <= end for e in expect)


def _projects(queries: list[dict[str, Any]]) -> list[str]:
    """The project of each question: its ``set`` when it has one (real questions), else its
    expected path's first folder; a negative without a ``set`` takes the project of the question
    before it in the file (after it, for a file opening with one)."""
    own = [q.get("set") or (q["expect"][0]["path"].lstrip("./").split("/")[0] if q["expect"] else None)
           for q in queries]
    out: list[str] = []
    last = next((p for p in own if p), "?")
    for p in own:
        last = p or last
        out.append(last)
    return out


def collect(db_dir: Path, embedder: str, index: str) -> list[dict[str, Any]]:
    """One record per question of every set over the index named ``index``, searched with
    ``embedder`` (module docstring)."""
    from eval_retrieval import open_engine
    from markdown_memory.evaluation import load_queries, normalised_path
    from markdown_memory.hook import gate, render
    from markdown_memory.models import Freshness, SearchRequest
    from markdown_memory.search import searcher
    from markdown_memory.search.pack import answer_tokens

    seen: list[Any] = []
    original = searcher.rank

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(original(*args, **kwargs))
        return seen[-1]

    searcher.rank = recording  # type: ignore[assignment]
    records: list[dict[str, Any]] = []
    quiet = [json.loads(line) for line in (HERE / "eval" / "hook-quiet-prompts.jsonl").read_text().splitlines()
             if line.strip()]
    try:
        for name, corpus, qpath, folders, kind in SETS:
            if name != index or not qpath.is_file():
                continue
            engine = open_engine(corpus.resolve(), db_dir / f"{name}-{embedder}.db", embedder, folders)
            queries = load_queries(qpath, folders=folders, root=corpus.resolve())
            items = [(q, p) for q, p in zip(queries, _projects(queries), strict=True) if p not in RESERVED]
            if name == "dev" and kind == "written":
                items += [({"id": x["id"], "query": x["prompt"], "expect": []}, "quiet") for x in quiet]
            indexed = engine.indexed_paths()
            for q, project in items:
                expect = [e | {"path": normalised_path(engine.root, e["path"], indexed)} for e in q["expect"]]
                seen.clear()
                ans = engine.search(SearchRequest(q["query"], top_k=5, max_tokens=2000), freshness=Freshness.FLAG)
                est = seen[-1].estimate if seen else cal.Estimate(0.0, 0.0, (), "none")
                cands = seen[-1].candidates if seen else []
                # the hook adds the hits with text, best first, within its 800 tokens
                _text, used = render(engine.root, [h for h in ans.results if h.content is not None], 800)
                records.append({
                    "set": name, "kind": kind, "project": project, "id": q["id"], "embedder": embedder, "negative": not expect,
                    "features": list(est.features), "hit_rows": [list(r) for r in est.hit_rows[:5]],
                    "hit_labels": [_correct(c.row["file_path"], c.row["start_line"], c.row["end_line"], expect)
                                   for c in cands[:5]],
                    "first": bool(ans.results) and _correct(ans.results[0].file_path, ans.results[0].start_line,
                                                            ans.results[0].end_line, expect),
                    "some": any(h.content is not None and _correct(h.file_path, h.start_line, h.end_line, expect)
                                for h in ans.results),
                    "tokens": answer_tokens(ans), "p_shipped": ans.p_answer, "asks": gate.asks_docs(q["query"]),
                    "hook_used": bool(used),
                    "hook_right": any(_correct(h.file_path, h.start_line, h.end_line, expect) for h in used),
                    "hook_p": ans.p_answer,
                })
            engine.close()
    finally:
        searcher.rank = original  # type: ignore[assignment]
    return records


# -- fitting ---------------------------------------------------------------------------------
def fit_logistic(x: np.ndarray, y: np.ndarray, names: Sequence[str], l2: float, steps: int = 3000) -> dict[str, Any]:
    """A logistic model ``{features, mean, scale, coef, bias}`` of rows ``x`` (n, d) and labels
    ``y`` (n,) by projected gradient descent (module docstring); deterministic."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    n, d = z.shape
    w = np.zeros(d)
    prior = float(np.clip(y.mean(), 1e-3, 1 - 1e-3))
    b = math.log(prior / (1 - prior))
    lo = np.array([0.0 if f in INCREASING else -np.inf for f in names])
    hi = np.array([0.0 if f in DECREASING else np.inf for f in names])
    vw, vb = np.zeros(d), 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(z @ w + b, -30, 30)))
        gw = z.T @ (p - y) / n + l2 * w / n
        gb = float((p - y).mean())
        vw = 0.9 * vw + gw
        vb = 0.9 * vb + gb
        w = np.clip(w - 0.1 * vw, lo, hi)
        b -= 0.1 * vb
    return {"features": list(names), "mean": mean.round(6).tolist(), "scale": scale.round(6).tolist(),
            "coef": w.round(6).tolist(), "bias": round(b, 6)}


def predict(model: dict[str, Any], x: np.ndarray) -> np.ndarray:
    z = (x - np.asarray(model["mean"])) / np.asarray(model["scale"])
    out: np.ndarray = 1 / (1 + np.exp(-np.clip(z @ np.asarray(model["coef"]) + model["bias"], -30, 30)))
    return out


def _hit_data(records: Sequence[dict[str, Any]], first: Callable[[dict[str, Any]], float]) -> tuple[np.ndarray, np.ndarray]:
    """Rows and labels of the candidates after the first (their ``first_logit`` recomputed from
    ``first``: the model that will feed them)."""
    rows, labels = [], []
    for r in records:
        logit = first(r)
        for row, lab in zip(r["hit_rows"][1:], r["hit_labels"][1:], strict=False):
            rows.append([logit / 5, *row[1:]])
            labels.append(float(lab))
    if not rows:
        return np.zeros((0, len(cal.HIT_FEATURES))), np.zeros(0)
    return np.array(rows), np.array(labels)


def fit_all(records: Sequence[dict[str, Any]], l2: float) -> dict[str, Any]:
    """The three models of one mode fitted on ``records`` (questions, not the quiet prompts)."""
    x = np.array([r["features"] for r in records])
    first = fit_logistic(x, np.array([float(r["first"]) for r in records]), cal.ANSWER_FEATURES, l2)
    some = fit_logistic(x, np.array([float(r["some"]) for r in records]), cal.ANSWER_FEATURES, l2)

    def logit(r: dict[str, Any]) -> float:
        p = float(np.clip(predict(first, np.array([r["features"]]))[0], 1e-6, 1 - 1e-6))
        return math.log(p / (1 - p))

    hx, hy = _hit_data(records, logit)
    hit = fit_logistic(hx, hy, cal.HIT_FEATURES, l2)
    return {"first": first, "some": some, "hit": hit}


def left_out(records: list[dict[str, Any]], l2: float) -> list[dict[str, Any]]:
    """Each question's predictions by the models fitted on the other projects."""
    questions = [r for r in records if r["project"] != "quiet" and r["features"]]
    out = []
    for project in sorted({r["project"] for r in questions}):
        models = fit_all([r for r in questions if r["project"] != project], l2)
        for r in records:
            if r["project"] != project:
                continue
            x = np.array([r["features"]])
            p_first = float(predict(models["first"], x)[0])
            p_some = max(float(predict(models["some"], x)[0]), p_first)
            out.append(r | {"lo_first": p_first, "lo_some": p_some})
    quiet = [r for r in records if r["project"] == "quiet"]
    if quiet:  # the quiet prompts: scored by models fitted on every question
        models = fit_all(questions, l2)
        for r in quiet:
            if not r["features"]:
                out.append(r | {"lo_first": 0.0, "lo_some": 0.0})
                continue
            x = np.array([r["features"]])
            p_first = float(predict(models["first"], x)[0])
            out.append(r | {"lo_first": p_first, "lo_some": max(float(predict(models["some"], x)[0]), p_first)})
    return out


def ece(p: np.ndarray, y: np.ndarray, bins: int = BINS) -> float:
    """Expected calibration error: the count-weighted mean |mean p - mean y| over equal-width bins."""
    at = np.minimum((p * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        m = at == b
        if m.any():
            total += m.sum() * abs(p[m].mean() - y[m].mean())
    return total / max(len(p), 1)


def reliability(p: np.ndarray, y: np.ndarray, bins: int = BINS) -> list[tuple[float, float, int]]:
    at = np.minimum((p * bins).astype(int), bins - 1)
    return [(float(p[at == b].mean()), float(y[at == b].mean()), int((at == b).sum())) for b in range(bins) if (at == b).any()]


def precision_bar(p: np.ndarray, right: np.ndarray, floor: int = 30) -> float:
    """The lowest threshold t (0.01 steps) such that the items with p >= t are right >= 85% of
    the time, and so are those of every higher threshold holding >= ``floor`` items; 1.0 if none."""
    grid = np.round(np.arange(0.05, 1.0, 0.01), 2)
    ok = [(t, (p >= t).sum() >= floor and right[p >= t].mean() >= PRECISION) for t in grid]
    bar = 1.0
    for t, good in reversed(ok):
        if (p >= t).sum() < floor:
            continue
        if not good:
            break
        bar = float(t)
    return bar


def none_bar(p_some: np.ndarray, negative: np.ndarray) -> float:
    """The p_some bar (<= 0.5) below which the most unanswerable questions fall while at most
    ``NONE_ANSWERABLE`` of the answerable ones do ("no good answer" must rarely hide one)."""
    grid = np.round(np.arange(0.05, 0.51, 0.01), 2)
    ok = [t for t in grid if (p_some[~negative] < t).mean() <= NONE_ANSWERABLE]
    return float(max(ok, key=lambda t: ((p_some[negative] < t).mean(), -t))) if ok else 0.05


def hook_curve(rows: list[dict[str, Any]], extra: Sequence[float] = ()) -> tuple[float | None, list[dict[str, float]]]:
    """The hook's bar (None when no threshold reaches PRECISION) and its curve over left-out
    ``rows``: per threshold, precision (injected text holds an answer) and hit rate (answerable
    questions that got an answer injected)."""
    asks = [r for r in rows if r["asks"] and r["hook_used"]]
    p = np.array([r["lo_first"] for r in asks])  # the gate reads the first hit's p_answer
    right = np.array([float(r["hook_right"]) for r in asks])
    answerable = sum(1 for r in rows if not r["negative"])
    curve = []
    for t in sorted({*np.round(np.arange(0.1, 0.96, 0.05), 2).tolist(), *extra}):
        m = p >= t
        curve.append({"threshold": float(t), "injected": int(m.sum()),
                      "precision": float(right[m].mean()) if m.any() else 1.0,
                      "hit_rate": float(right[m].sum() / max(answerable, 1))})
    bar = precision_bar(p, right)
    return (None if bar >= 1.0 else bar), curve  # out of reach: the hook stays silent in this mode


def _at(curve: list[dict[str, float]], bar: float | None) -> dict[str, float] | None:
    """The curve's figures at the first threshold >= ``bar`` (None past the curve's end, or
    with no bar)."""
    if bar is None:
        return None
    return next((c for c in curve if c["threshold"] >= bar - 1e-9), None)


def draw(path: Path, panels: dict[str, list[tuple[np.ndarray, np.ndarray]]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.6), squeeze=False)
    for ax, (title, series) in zip(axes[0], panels.items(), strict=True):
        ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--")
        for (p, y), (name, marker) in zip(series, (("P(first hit answers)", "o"), ("P(a hit with text answers)", "s")),
                                          strict=False):
            pts = reliability(p, y)
            ax.plot([a for a, _, _ in pts], [b for _, b, _ in pts], marker=marker,
                    label=f"{name}, ECE {ece(p, y):.3f}")
        ax.set_title(title)
        ax.set_xlabel("predicted (left-out project)")
        ax.set_ylabel("observed")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db-dir", type=Path, default=Path("/work/evaldb/learn-conf"))
    ap.add_argument("--collect", action="store_true", help="search every question again (else reuse the records)")
    ap.add_argument("--embedders", default=",".join(EMBEDDERS), help="comma-separated: minilm, none")
    ap.add_argument("--only", default="dev,corpus2,corpus3,corpus4", help="with --collect: these indexes only")
    ap.add_argument("--collect-only", action="store_true", help="collect the records, fit nothing")
    ap.add_argument("--l2", type=float, default=2.0)
    ap.add_argument("--ranker", choices=("rrf", "learned"), default="rrf",
                    help="the ranking whose answers are collected and calibrated (MARKDOWN_MEMORY_RANKER)")
    ap.add_argument("--out", type=Path, help="default: the ranker's shipped file (calibration.data_path)")
    ap.add_argument("--png", type=Path, help="reliability diagram (matplotlib: the `train` extra)")
    ap.add_argument("--report", type=Path, help="write the left-out figures and curves here (JSON)")
    args = ap.parse_args(argv)
    os.environ["MARKDOWN_MEMORY_RANKER"] = args.ranker  # every search below ranks so
    args.out = args.out or cal.data_path(args.ranker)
    args.db_dir.mkdir(parents=True, exist_ok=True)
    # a run over one embedder keeps the other mode's models as they were
    data: dict[str, Any] = json.loads(args.out.read_text()) if args.out.is_file() else {"models": {}, "bars": {}}
    report: dict[str, Any] = {}
    panels: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for embedder in args.embedders.split(","):
        mode = "keyword" if embedder == "none" else "vector"
        records = []
        for index in dict.fromkeys(name for name, *_ in SETS):
            cache = args.db_dir / f"records-{embedder}-{index}.json"
            if args.collect and index in args.only.split(","):
                cache.write_text(json.dumps(collect(args.db_dir, embedder, index)))
            if not cache.is_file():
                print(f"no records of {index} with {embedder} (run with --collect): left out", file=sys.stderr)
                continue
            if not args.collect_only:
                records += json.loads(cache.read_text())
        if args.collect_only:
            continue
        questions = [r for r in records if r["project"] != "quiet" and r["features"]]
        rows = left_out(records, args.l2)
        qrows = [r for r in rows if r["project"] != "quiet"]
        pf = np.array([r["lo_first"] for r in qrows])
        ps = np.array([r["lo_some"] for r in qrows])
        yf = np.array([float(r["first"]) for r in qrows])
        ys = np.array([float(r["some"]) for r in qrows])
        neg = np.array([r["negative"] for r in qrows])
        high = precision_bar(pf, yf)
        hook, curve = hook_curve(rows)
        data["models"][mode] = fit_all(questions, args.l2)
        data["bars"][mode] = {"high": high, "none": none_bar(ps, neg), "hook": hook}
        panels[f"{embedder} ({len(qrows)} questions, {len({r['project'] for r in qrows})} projects)"] = [(pf, yf), (ps, ys)]
        report[mode] = {
            "questions": len(qrows), "negatives": int(neg.sum()), "ece_first": ece(pf, yf), "ece_some": ece(ps, ys),
            "bars": data["bars"][mode], "hook_curve": curve,
            "hook_curve_written": hook_curve([r for r in rows if r.get("kind", "written") == "written"])[1],
            "hook_curve_real": hook_curve([r for r in rows if r.get("kind") == "real"])[1],
            "hook_at_bar": {k: _at(hook_curve([r for r in rows if r.get("kind", "written") in ks], [hook] if hook else [])[1], hook)
                            for k, ks in (("all", ("written", "real")), ("written", ("written",)), ("real", ("real",)))},
            "ece_by_kind": {k: {"first": ece(np.array([r["lo_first"] for r in qrows if r.get("kind") == k]),
                                             np.array([float(r["first"]) for r in qrows if r.get("kind") == k])),
                                "some": ece(np.array([r["lo_some"] for r in qrows if r.get("kind") == k]),
                                            np.array([float(r["some"]) for r in qrows if r.get("kind") == k])),
                                "n": sum(1 for r in qrows if r.get("kind") == k)}
                            for k in ("written", "real")},
            "high_precision": float(yf[pf >= high].mean()) if (pf >= high).any() else None,
            "high_share": float((pf >= high).mean()),
            "negatives_none": float((ps[neg] < data["bars"][mode]["none"]).mean()) if neg.any() else None,
            "answerable_none": float((ps[~neg] < data["bars"][mode]["none"]).mean()),
            "per_project": {p: {"n": int(sum(1 for r in qrows if r["project"] == p)),
                                "ece_some": ece(np.array([r["lo_some"] for r in qrows if r["project"] == p]),
                                                np.array([float(r["some"]) for r in qrows if r["project"] == p]))}
                            for p in sorted({r["project"] for r in qrows})},
        }
        print(f"{mode}: {len(qrows)} questions; left-out ECE first {report[mode]['ece_first']:.3f}, "
              f"some {report[mode]['ece_some']:.3f}; bars {data['bars'][mode]}", file=sys.stderr)
    if args.collect_only:
        return 0
    data["fit"] = data.get("fit", {}) | {"script": "scripts/calibrate.py", "l2": args.l2,
                                         "left_out": "one project at a time"}
    data["fit"]["ece"] = data["fit"].get("ece", {}) | {
        m: {"first": round(report[m]["ece_first"], 4), "some": round(report[m]["ece_some"], 4)} for m in report}
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    if args.png:
        draw(args.png, panels)
    if args.report:
        args.report.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
