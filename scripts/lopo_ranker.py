#!/usr/bin/env python3
"""Leave-one-project-out judgement of the learned ranker against the hand-set RRF.

A *project* is a doc set: the first folder of a question's expected path (the shared corpus's
eight repos, corpus2's five, corpus3's cargo, vault and ja; pydantic is reserved for outside
judging and never read). For every project: train the ranker (``scripts/train_ranker.fit``) on
the questions of all other projects, score the project's questions with that model. Negatives
(no project) are scored with the model trained on every project: they give no training pair.

Two levels, each per mode (``minilm``: vectors, ``none``: keyword-only):

* ``candidates`` (always, from the feature files alone): the first stage's 50 candidates re-ordered
  by the left-out model as the engine does (``search.learned.page_order``: pages by the model,
  sections inside a page in first-stage order) vs their first-stage (RRF) order: Top-1, R@5,
  MRR@10 over that list.
* ``engine`` (``--engine``): each question searched through ``Engine.search`` as the eval does
  (``evaluation.run_queries``, packing included), once with ``--ranker rrf`` and once with its
  fold's model (``search.learned.using``): Top-1, R@5, MRR@10, answer in a hit with text, tokens
  p50, per project and pooled.

Both are compared with ``scripts/compare_runs.compare`` (paired by question, bootstrap 95%
interval of the pooled MRR@10 and Top-1 differences, fixed seed). Writes into ``--out``:
``lopo.json`` (every table and interval) and ``leftout-<mode>.jsonl``, the left-out predictions,
one line per question::

    {"id", "set", "project", "mode", "features": [...],
     "candidates": [{"section_id", "file_path", "start_line", "end_line", "rrf_rank", "score",
                     "label", "x"}]}     # best learned score first

(``project`` "" for a negative; ``score`` the left-out model's; ``rrf_rank`` the first-stage place.)

Usage::

    python scripts/lopo_ranker.py --features-dir /work/evaldb/rank/feat --out /work/evaldb/rank/lopo \\
        [--engine --db-dir /work/evaldb/rank]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_runs import compare, format_report  # noqa: E402
from markdown_memory.search.learned import page_order  # noqa: E402
from train_ranker import L2, NEG_DEPTH, fit, matrix, predict, read_records  # noqa: E402

HERE = Path(__file__).resolve().parents[1]
#: The dev sets: name -> (docs root, questions, folders indexed (None: all), index name). The
#: real users' questions (eval/real/) are more questions of the same projects, and two new ones.
_REAL = HERE / "eval" / "real"
#: The shared corpus beside the checkout (/work/shared next to /work/main, or two levels up from a worktree).
SHARED = next((p for p in (HERE.parent / "shared", HERE.parents[1] / "shared") if p.is_dir()), HERE.parent / "shared")
SETS: dict[str, tuple[Path, Path, list[str] | None, str]] = {
    "shared": (SHARED / "eval-corpus", SHARED / "eval-queries-dev.jsonl", None, "shared"),
    "corpus2": (HERE / "eval" / "corpus2", HERE / "eval" / "queries-corpus2-dev.jsonl", None, "corpus2"),
    "corpus3": (HERE / "eval" / "corpus3", HERE / "eval" / "queries-corpus3-dev.jsonl", ["cargo", "vault", "ja"],
                "corpus3"),
    "real_shared": (SHARED / "eval-corpus", _REAL / "queries-real-shared-a.jsonl", None, "shared"),
    "real_corpus2": (HERE / "eval" / "corpus2", _REAL / "queries-real-corpus2.jsonl", None, "corpus2"),
    "real_corpus3": (HERE / "eval" / "corpus3", _REAL / "queries-real-corpus3.jsonl", ["cargo", "vault", "ja"],
                     "corpus3"),
    "real_ollama": (HERE / "eval" / "corpus4", _REAL / "queries-real-ollama.jsonl", None, "corpus4"),
    "real_ruff": (HERE / "eval" / "corpus4", _REAL / "queries-real-ruff.jsonl", None, "corpus4"),
}
EXCLUDED = {"pydantic"}  # reserved for outside judging


def folds(records: Sequence[dict[str, Any]], l2: float, neg_depth: int | None = NEG_DEPTH) -> dict[str, dict[str, list[float]]]:
    """Per project, the model trained on every other project's questions; ``""`` (negatives):
    the model trained on all."""
    projects = sorted({r["project"] for r in records if r["project"]})
    out = {p: fit([r for r in records if r["project"] not in ("", p)], l2, neg_depth=neg_depth) for p in projects}
    out[""] = fit([r for r in records if r["project"]], l2, neg_depth=neg_depth)
    return out


def _ranked(order: list[int], labels: np.ndarray) -> dict[str, Any]:
    first = next((i for i, k in enumerate(order) if labels[k]), None)
    return {"rank": first if first is not None and first < 10 else None,
            "rank5": first if first is not None and first < 5 else None, "in_content": False, "expect": [1]}


def candidate_level(records: Sequence[dict[str, Any]], models: dict[str, dict[str, list[float]]],
                    mode: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(compare() of RRF order vs left-out learned order over the candidate lists, per project
    and pooled; the left-out prediction lines)."""
    before: dict[str, dict[str, Any]] = {}
    after: dict[str, dict[str, Any]] = {}
    kinds: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    lines = []
    for rec in records:
        x, y = matrix(rec)
        scores = predict(models[rec["project"]], x) if len(y) else np.zeros(0)
        order = page_order(scores.tolist(), [c["file_path"] for c in rec["candidates"]])
        key = f"{rec['set']}/{rec['id']}"
        if rec["project"]:
            before.setdefault(rec["project"], {})[key] = _ranked(list(range(len(y))), y)
            after.setdefault(rec["project"], {})[key] = _ranked(order, y)
            b, a = kinds.setdefault(kind(rec["set"]), ({}, {}))
            b[key], a[key] = before[rec["project"]][key], after[rec["project"]][key]
        lines.append({"id": rec["id"], "set": rec["set"], "project": rec["project"], "mode": mode,
                      "features": rec["features"],
                      "candidates": [{**{k: rec["candidates"][i][k] for k in ("section_id", "file_path", "start_line",
                                                                             "end_line", "label", "x")},
                                      "rrf_rank": i, "score": round(float(scores[i]), 6)} for i in order]})
    result = compare([(before, after)])
    # the same pooled comparison per kind of question: written while reading the docs vs real users'
    result["kinds"] = {k: compare([({k: b}, {k: a})]) for k, (b, a) in sorted(kinds.items())}
    return result, lines


def kind(set_name: str) -> str:
    """``real`` for a set of real users' questions (``eval/real/``: ``real_*``), else ``written``."""
    return "real" if set_name.startswith("real_") else "written"


def expectations() -> dict[tuple[str, str], list[dict[str, Any]]]:
    """``{(set, question id): expect}`` of every set in ``SETS`` whose question file is present,
    paths as the index names them (relative to the docs root)."""
    from markdown_memory.evaluation import load_queries, normalised_path

    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for name, (corpus, questions, folders, _index) in SETS.items():
        if not questions.is_file():
            continue
        root = corpus.resolve()
        for q in load_queries(questions, folders=folders, root=root):
            out[(name, q["id"])] = [{**e, "path": normalised_path(root, e["path"])} for e in q["expect"]]
    return out


def taxonomy(lines: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Miss buckets (``eval_taxonomy.miss_bucket`` over the top 10) of the first-stage (RRF) order
    and the left-out learned order, per kind of question (``kind``), from the left-out lines;
    ``unmatched``: answerable questions whose question file was not found (left out)."""
    from markdown_memory.eval_taxonomy import BUCKETS, miss_bucket

    expect = expectations()
    counts: dict[str, dict[str, dict[str, int]]] = {}
    unmatched = 0
    for line in lines:
        if not line["project"]:
            continue
        exp = expect.get((line["set"], line["id"]))
        if not exp:
            unmatched += 1
            continue
        learned = line["candidates"][:10]
        rrf = sorted(line["candidates"], key=lambda c: c["rrf_rank"])[:10]
        for k in (kind(line["set"]), "all"):
            for ranker, hits in (("rrf", rrf), ("learned", learned)):
                row = counts.setdefault(k, {}).setdefault(ranker, {"n": 0, "misses": 0, **dict.fromkeys(BUCKETS, 0)})
                row["n"] += 1
                bucket = miss_bucket(hits, exp)
                if bucket:
                    row["misses"] += 1
                    row[bucket] += 1
    return {"counts": counts, "unmatched": unmatched}


def engine_level(mode: str, records: Sequence[dict[str, Any]], models: dict[str, dict[str, list[float]]],
                 db_dir: Path, out: Path) -> dict[str, Any]:
    """Both rankers through the engine per set (module docstring); writes ``run-<ranker>-<mode>.json``
    (eval-run files ``scripts/compare_runs.py`` reads, one set per project) and returns compare()."""
    import os

    from eval_retrieval import open_engine
    from markdown_memory.evaluation import load_queries, normalised_path, run_queries, summarise
    from markdown_memory.search.learned import parse_model, using

    feature_names = records[0]["features"]
    runs: dict[str, dict[str, list[Any]]] = {"rrf": {}, "learned": {}}
    wanted_sets = {r["set"] for r in records}
    for name, (corpus, questions, folders, index) in SETS.items():
        if name not in wanted_sets:
            continue
        queries = load_queries(questions, folders=folders, root=corpus.resolve())
        engine = open_engine(corpus.resolve(), db_dir / f"{index}-{mode}.db", mode, folders)
        try:
            indexed = engine.indexed_paths()
            groups: dict[str, list[dict[str, Any]]] = {}
            for q in queries:
                expect = [normalised_path(engine.root, e["path"], indexed) for e in q["expect"]]
                project = expect[0].split("/", 1)[0] if expect else ""
                if project not in EXCLUDED:
                    groups.setdefault(project, []).append(q)
            os.environ["MARKDOWN_MEMORY_RANKER"] = "rrf"
            for project, qs in groups.items():
                runs["rrf"].setdefault(project or "negative", []).extend(run_queries(engine, qs))
                model = models.get(project, models[""])
                data = {"features": feature_names, "models": {"vectors": model, "keyword": model}}
                with using(parse_model(data)):
                    runs["learned"].setdefault(project or "negative", []).extend(run_queries(engine, qs))
        finally:
            engine.close()
    loaded = {}
    for ranker, by_project in runs.items():
        sets = {p: {"meta": {"queries": p, "ranker": ranker, "mode": mode}, "summary": summarise(rs),
                    "queries": [r.to_dict() for r in rs]} for p, rs in by_project.items()}
        (out / f"run-{ranker}-{mode}.json").write_text(json.dumps({"sets": sets}, ensure_ascii=False))
        loaded[ranker] = {p: {r.id: r.to_dict() for r in rs if r.expect} for p, rs in by_project.items()
                          if p != "negative"}
    result = compare([(loaded["rrf"], loaded["learned"])])
    result["tokens_p50"] = {ranker: statistics.median(r.tokens for rs in by_project.values() for r in rs if r.expect)
                            for ranker, by_project in runs.items()}
    result["tokens_p50_by_project"] = {p: {ranker: statistics.median(r.tokens for r in runs[ranker][p])
                                           for ranker in runs} for p in runs["rrf"] if p != "negative"}
    neg = runs["rrf"].get("negative", [])
    if neg:
        result["negative_flagged_none"] = {
            ranker: sum(r.confidence == "none" for r in runs[ranker]["negative"]) / len(neg) for ranker in runs}
    return result


def markdown(result: dict[str, Any]) -> str:
    """The left-out table of every mode and level as Markdown: per project RRF -> learned Top-1,
    R@5, MRR@10 (and answer-in-hit, tokens p50 at the engine level), then the pooled intervals."""
    out = []
    for mode, entry in result["modes"].items():
        for level in ("candidates", "engine"):
            cmp = entry.get(level)
            if not cmp:
                continue
            tokens = cmp.get("tokens_p50_by_project", {})
            out.append(f"**{mode}, {level}** (RRF -> learned, left-out folds)\n")
            head = "| project | n | Top-1 | R@5 | MRR@10 |" + (" in hand | tokens p50 |" if level == "engine" else "")
            out.append(head)
            out.append("|" + "---|" * (head.count("|") - 1))
            rows = sorted(cmp["sets"], key=lambda r: r["set"])
            pooled_b: dict[str, float] = {}
            pooled_a: dict[str, float] = {}
            n_all = sum(r["n"] for r in rows)
            for r in rows:
                b, a = r["before"], r["after"]
                for f in ("top1", "r5", "mrr10", "inhit"):
                    pooled_b[f] = pooled_b.get(f, 0.0) + b[f] * r["n"] / n_all
                    pooled_a[f] = pooled_a.get(f, 0.0) + a[f] * r["n"] / n_all
                line = (f"| {r['set']} | {r['n']} | {b['top1']:.1%} -> {a['top1']:.1%} | {b['r5']:.1%} -> {a['r5']:.1%} "
                        f"| {b['mrr10']:.3f} -> {a['mrr10']:.3f} |")
                if level == "engine":
                    t = tokens.get(r["set"], {})
                    line += f" {b['inhit']:.1%} -> {a['inhit']:.1%} | {t.get('rrf', 0):.0f} -> {t.get('learned', 0):.0f} |"
                out.append(line)
            b, a = pooled_b, pooled_a
            line = (f"| **pooled** | {n_all} | {b['top1']:.1%} -> {a['top1']:.1%} | {b['r5']:.1%} -> {a['r5']:.1%} "
                    f"| {b['mrr10']:.3f} -> {a['mrr10']:.3f} |")
            if level == "engine":
                t = cmp.get("tokens_p50", {})
                line += f" {b['inhit']:.1%} -> {a['inhit']:.1%} | {t.get('rrf', 0):.0f} -> {t.get('learned', 0):.0f} |"
            out.append(line)
            p = cmp["pooled"]
            out.append(f"\nPooled paired difference (learned - RRF), bootstrap 95%: MRR@10 {p['mrr10']['diff']:+.4f} "
                       f"[{p['mrr10']['interval'][0]:+.4f}, {p['mrr10']['interval'][1]:+.4f}], Top-1 "
                       f"{p['top1']['diff']:+.2%} [{p['top1']['interval'][0]:+.2%}, {p['top1']['interval'][1]:+.2%}]; "
                       f"{p['better']} questions better, {p['worse']} worse. Verdict: {cmp['verdict']}.\n")
            for k, kc in cmp.get("kinds", {}).items():
                row, kp = kc["sets"][0], kc["pooled"]
                out.append(f"- {k} questions (n {row['n']}): Top-1 {row['before']['top1']:.1%} -> "
                           f"{row['after']['top1']:.1%}, MRR@10 {row['before']['mrr10']:.3f} -> {row['after']['mrr10']:.3f}, "
                           f"difference {kp['mrr10']['diff']:+.4f} [{kp['mrr10']['interval'][0]:+.4f}, "
                           f"{kp['mrr10']['interval'][1]:+.4f}]")
            out.append("")
            tax = cmp.get("taxonomy")
            if tax:
                out.append(f"Misses by bucket ({mode}, {level}; RRF -> learned):\n")
                out.append("| questions | n | misses | file_absent | file_no_section | wrong_section | lower |")
                out.append("|---|---|---|---|---|---|---|")
                for k in ("written", "real", "all"):
                    rows = tax["counts"].get(k)
                    if rows:
                        b, a = rows["rrf"], rows["learned"]
                        out.append(f"| {k} | {b['n']} | " + " | ".join(
                            f"{b[f]} -> {a[f]}" for f in ("misses", "file_absent", "file_no_section", "wrong_section",
                                                         "lower")) + " |")
                out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--features-dir", type=Path, required=True,
                    help="folder of features-<mode>-<set>.jsonl[.gz] (eval_retrieval.py --features)")
    ap.add_argument("--out", type=Path, required=True, help="folder for lopo.json and leftout-<mode>.jsonl")
    ap.add_argument("--modes", default="minilm,none")
    ap.add_argument("--l2", type=float, default=L2)
    ap.add_argument("--neg-depth", type=int, default=NEG_DEPTH)
    ap.add_argument("--engine", action="store_true", help="also run every question through the engine per fold")
    ap.add_argument("--db-dir", type=Path, help="indexes <set>-<mode>.db for --engine")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"l2": args.l2, "neg_depth": args.neg_depth, "modes": {}}
    for mode in args.modes.split(","):
        files = sorted(args.features_dir.glob(f"features-{mode}-*.jsonl*"))
        records = [r for r in read_records(files) if r["project"] not in EXCLUDED]
        if not records:
            print(f"no feature files for {mode} in {args.features_dir}", file=sys.stderr)
            return 2
        models = folds(records, args.l2, args.neg_depth)
        cand, lines = candidate_level(records, models, mode)
        with (args.out / f"leftout-{mode}.jsonl").open("w", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
        cand["taxonomy"] = taxonomy(lines)
        entry: dict[str, Any] = {"files": [p.name for p in files], "candidates": cand}
        print(f"== {mode}: candidate lists (first stage's 50), RRF order -> left-out learned order")
        print(format_report(cand))
        for k, kc in cand["kinds"].items():
            print(f"-- {mode}, {k} questions only")
            print(format_report(kc))
        if args.engine:
            entry["engine"] = engine_level(mode, records, models, args.db_dir, args.out)
            print(f"== {mode}: through the engine (packed answers), --ranker rrf -> learned, left-out folds")
            print(format_report(entry["engine"]))
            print(f"tokens p50 {entry['engine']['tokens_p50']}")
        result["modes"][mode] = entry
    (args.out / "lopo.json").write_text(json.dumps(result, indent=1))
    (args.out / "lopo.md").write_text(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
