#!/usr/bin/env python3
"""Paired comparison of two eval runs: is a ranking change a gain beyond noise?

Reads runs written by ``scripts/eval_retrieval.py --json-out`` (one set ``{meta, summary,
queries}`` or several ``{"sets": {NAME: {...}}}``) or ``markdown-memory eval --json`` (``{...,
results}``), BEFORE and AFTER the change; more BEFORE AFTER pairs may follow (another embedder,
a set scored apart). Every answerable question present in both runs of a pair is paired by its
set name and ``id`` (never by position), all sets of all pairs pooled. For each question the
difference of its reciprocal rank (MRR@10: ``1/(rank+1)`` of the first correct hit in the top 10,
0 when none) and of Top-1 (1 or 0) is taken AFTER minus BEFORE; the mean difference gets a
bootstrap 95% interval (resampling questions with replacement, the pairing kept; fixed seed,
10,000 resamples by default). Prints each set's Top-1, Recall@5, MRR@10 and answer-in-hit
before -> after (and its miss buckets when the runs have them), the pooled intervals and the
verdict of docs/ranking.md#deciding-on-a-change: ``keep`` (MRR interval above zero),
``drop`` (below zero), ``straddles`` (keep only if the change simplifies the ranking or is a
structural step later changes build on, and say which).

Usage::

    python scripts/compare_runs.py /tmp/before-minilm.json /tmp/after-minilm.json \\
        /tmp/before-none.json /tmp/after-none.json [--json]

Exit status 0, or 2 for a file that is not an eval run or pairs that share no question.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

SEED = 20250
RESAMPLES = 10_000
FIGURES = ("top1", "r5", "mrr10", "inhit")
BUCKETS = ("file_absent", "file_no_section", "wrong_section", "lower")


class RunFileError(Exception):
    """A file that is not an eval run, or runs that cannot be paired (one sentence)."""


def load_run(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """``{set name: {question id: per-question result}}`` of an eval run file (module docstring);
    negatives (``expect`` empty) left out. A one-set file's set is named by its questions file
    (``meta.queries``, else the file ``questions``). Raises RunFileError (unreadable, not an eval
    run, a question id twice in one set)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunFileError(f"{path} cannot be read as JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise RunFileError(f"{path} is not an eval run (expected a JSON object)")
    if "sets" in data:
        sets = data["sets"]
    else:
        name = data.get("meta", {}).get("queries") or Path(str(data.get("questions", "set"))).name
        sets = {name: data}
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name, entry in sets.items():
        questions = entry.get("queries", entry.get("results")) if isinstance(entry, dict) else None
        if not isinstance(questions, list):
            raise RunFileError(f"{path}: set {name!r} has no per-question results (write it with --json-out)")
        by_id: dict[str, dict[str, Any]] = {}
        for q in questions:
            if not q.get("expect"):
                continue
            if str(q["id"]) in by_id:
                raise RunFileError(f"{path}: set {name!r} has question id {q['id']!r} twice; pairing needs unique ids")
            by_id[str(q["id"])] = q
        out[name] = by_id
    return out


def reciprocal_rank(q: Mapping[str, Any]) -> float:
    """1/(rank+1) of the first correct hit in the top 10 (``rank`` 0-based), 0.0 when none."""
    rank = q.get("rank")
    return 0.0 if rank is None else 1.0 / (int(rank) + 1)


def figures(questions: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Top-1, Recall@5, MRR@10 and answer-in-hit (fractions) of answerable ``questions``."""
    n = max(1, len(questions))
    return {
        "top1": sum(q.get("rank") == 0 for q in questions) / n,
        "r5": sum(q.get("rank5") is not None for q in questions) / n,
        "mrr10": sum(reciprocal_rank(q) for q in questions) / n,
        "inhit": sum(bool(q.get("in_content")) for q in questions) / n,
    }


def bucket_counts(questions: Sequence[Mapping[str, Any]]) -> dict[str, int] | None:
    """Misses per taxonomy bucket (``markdown_memory.eval_taxonomy``); None for a run made
    before the taxonomy (no ``bucket`` field)."""
    if not questions or any("bucket" not in q for q in questions):
        return None
    return {b: sum(q["bucket"] == b for q in questions) for b in BUCKETS}


@dataclass
class Paired:
    """The paired questions of all pairs: ``keys`` ``(pair index, set, id)``; per question the
    before/after reciprocal rank and Top-1; ``sets``: per ``(pair, set)`` the before and after
    question lists (paired questions only, same order); ``unpaired``: questions in one run only."""

    keys: list[tuple[int, str, str]]
    rr_before: np.ndarray
    rr_after: np.ndarray
    top1_before: np.ndarray
    top1_after: np.ndarray
    sets: dict[tuple[int, str], tuple[list[dict[str, Any]], list[dict[str, Any]]]]
    unpaired: int


def pair_runs(pairs: Sequence[tuple[Mapping[str, Mapping[str, Any]], Mapping[str, Mapping[str, Any]]]]) -> Paired:
    """Pair every answerable question of each ``(before, after)`` (``load_run`` shapes) by set
    name and id. Raises RunFileError when no question is in both runs of any pair."""
    keys: list[tuple[int, str, str]] = []
    sets: dict[tuple[int, str], tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    unpaired = 0
    for p, (before, after) in enumerate(pairs):
        for name in sorted(set(before) | set(after)):
            b, a = before.get(name, {}), after.get(name, {})
            common = sorted(set(b) & set(a))
            unpaired += len(set(b) ^ set(a))
            if not common:
                continue
            sets[(p, name)] = ([dict(b[i]) for i in common], [dict(a[i]) for i in common])
            keys += [(p, name, i) for i in common]
    if not keys:
        raise RunFileError("the runs share no answerable question (same sets, same question ids?)")
    before_qs = [q for b, _ in sets.values() for q in b]
    after_qs = [q for _, a in sets.values() for q in a]
    return Paired(keys,
                  np.array([reciprocal_rank(q) for q in before_qs]), np.array([reciprocal_rank(q) for q in after_qs]),
                  np.array([float(q.get("rank") == 0) for q in before_qs]),
                  np.array([float(q.get("rank") == 0) for q in after_qs]),
                  sets, unpaired)


def bootstrap_interval(diffs: np.ndarray, seed: int = SEED, resamples: int = RESAMPLES) -> tuple[float, float]:
    """Percentile bootstrap 95% interval ``(low, high)`` of the mean of the per-question
    differences ``diffs`` (resampled whole, so each question keeps its before/after pair).
    Raises ValueError for no differences."""
    if len(diffs) == 0:
        raise ValueError("bootstrap of no differences")
    rng = np.random.default_rng(seed)
    means = diffs[rng.integers(0, len(diffs), size=(resamples, len(diffs)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def verdict(low: float, high: float) -> str:
    """The decision rule of docs/ranking.md for the pooled MRR@10 interval ``[low, high]``."""
    if low > 0:
        return "keep: the pooled interval is above zero"
    if high < 0:
        return "drop: the pooled interval is below zero"
    return ("straddles zero: keep only if the change simplifies the ranking or is a structural step "
            "later changes build on (say which); otherwise drop")


def compare(pairs: Sequence[tuple[Mapping[str, Mapping[str, Any]], Mapping[str, Mapping[str, Any]]]],
            seed: int = SEED, resamples: int = RESAMPLES) -> dict[str, Any]:
    """The comparison as one JSON-ready object: ``sets`` (per pair and set: ``n``, ``before`` and
    ``after`` figures, ``buckets_before``/``buckets_after`` when present), ``pooled`` (``n``,
    ``unpaired``, ``better``/``worse`` question counts by reciprocal rank, ``mrr10`` and ``top1``
    with ``diff`` and ``interval``), ``verdict``."""
    paired = pair_runs(pairs)
    rr = paired.rr_after - paired.rr_before
    top1 = paired.top1_after - paired.top1_before
    rr_low, rr_high = bootstrap_interval(rr, seed, resamples)
    t_low, t_high = bootstrap_interval(top1, seed, resamples)
    # a budget change moves answer-in-hit and tokens, not the ranks: both get their interval too
    before_qs = [q for b, _ in paired.sets.values() for q in b]
    after_qs = [q for _, a in paired.sets.values() for q in a]
    inhit = (np.array([float(bool(q.get("in_content"))) for q in after_qs])
             - np.array([float(bool(q.get("in_content"))) for q in before_qs]))
    tok_b = np.array([float(q.get("tokens", 0)) for q in before_qs])
    tok_a = np.array([float(q.get("tokens", 0)) for q in after_qs])
    sets = []
    for (p, name), (b, a) in paired.sets.items():
        sets.append({"pair": p + 1, "set": name, "n": len(b), "before": figures(b), "after": figures(a),
                     "buckets_before": bucket_counts(b), "buckets_after": bucket_counts(a)})
    return {
        "sets": sets,
        "pooled": {"n": len(rr), "unpaired": paired.unpaired, "seed": seed, "resamples": resamples,
                   "better": int((rr > 0).sum()), "worse": int((rr < 0).sum()),
                   "mrr10": {"diff": float(rr.mean()), "interval": [rr_low, rr_high]},
                   "top1": {"diff": float(top1.mean()), "interval": [t_low, t_high]},
                   "inhit": {"diff": float(inhit.mean()), "interval": list(bootstrap_interval(inhit, seed, resamples))},
                   "tokens": {"diff": float((tok_a - tok_b).mean()),
                              "interval": list(bootstrap_interval(tok_a - tok_b, seed, resamples)),
                              "p50_before": float(np.median(tok_b)), "p50_after": float(np.median(tok_a))}},
        "verdict": verdict(rr_low, rr_high),
    }


def format_report(result: Mapping[str, Any]) -> str:
    """The comparison as text: one line per set (figures before -> after, buckets when known),
    then the pooled intervals and the verdict."""
    lines = [f"{'pair':<4} {'set':<10} {'n':>4} " + " ".join(f"{f:>15}" for f in ("top1", "R@5", "MRR10", "inhit"))]
    for s in result["sets"]:
        cells = []
        for f in FIGURES:
            b, a = s["before"][f], s["after"][f]
            cells.append(f"{b:.3f}->{a:.3f}" if f == "mrr10" else f"{b:.1%}->{a:.1%}")
        line = f"{s['pair']:<4} {s['set'][:10]:<10} {s['n']:>4} " + " ".join(f"{c:>15}" for c in cells)
        if s["buckets_before"] and s["buckets_after"]:
            line += "  misses " + ", ".join(f"{b} {s['buckets_before'][b]}->{s['buckets_after'][b]}" for b in BUCKETS)
        lines.append(line)
    p = result["pooled"]
    mrr, top1 = p["mrr10"], p["top1"]
    lines.append(f"pooled over {p['n']} paired questions ({p['better']} better, {p['worse']} worse by reciprocal "
                 f"rank{'; ' + str(p['unpaired']) + ' in one run only, left out' if p['unpaired'] else ''}); "
                 f"bootstrap 95% intervals, {p['resamples']} resamples, seed {p['seed']}:")
    lines.append(f"  MRR@10 difference {mrr['diff']:+.4f} [{mrr['interval'][0]:+.4f}, {mrr['interval'][1]:+.4f}]")
    lines.append(f"  Top-1 difference  {top1['diff']:+.2%} [{top1['interval'][0]:+.2%}, {top1['interval'][1]:+.2%}]")
    if "inhit" in p:
        inh, tok = p["inhit"], p["tokens"]
        lines.append(f"  answer in hit     {inh['diff']:+.2%} [{inh['interval'][0]:+.2%}, {inh['interval'][1]:+.2%}]")
        lines.append(f"  answer tokens     {tok['diff']:+.0f} [{tok['interval'][0]:+.0f}, {tok['interval'][1]:+.0f}] "
                     f"(p50 {tok['p50_before']:.0f} -> {tok['p50_after']:.0f})")
    lines.append(f"verdict: {result['verdict']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, metavar="BEFORE.json AFTER.json",
                    help="eval runs in pairs: before, after [, before, after ...]")
    ap.add_argument("--seed", type=int, default=SEED, help=f"bootstrap seed (default {SEED})")
    ap.add_argument("--resamples", type=int, default=RESAMPLES, help=f"bootstrap resamples (default {RESAMPLES})")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = ap.parse_args(argv)
    if len(args.runs) % 2:
        ap.error("runs come in pairs: BEFORE.json AFTER.json [BEFORE.json AFTER.json ...]")
    try:
        loaded = [load_run(p) for p in args.runs]
        result = compare(list(zip(loaded[::2], loaded[1::2], strict=True)), args.seed, args.resamples)
    except RunFileError as exc:
        print(f"compare_runs: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=1) if args.json else format_report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
