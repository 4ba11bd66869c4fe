#!/usr/bin/env python3
"""Train the learned ranker (``markdown_memory/search/learned.py``) from exported features.

Input: feature files written by ``scripts/eval_retrieval.py --features`` / ``markdown-memory eval
--features`` (``markdown_memory/eval_features.py``: per question its first 50 first-stage
candidates, feature rows ``x`` and labels), one set of files per mode: ``--vectors`` (searches
with MiniLM vectors) and ``--keyword`` (keyword-only, embedder ``none``). The dev sets' exports
are committed (``eval/ranker/features-*.jsonl.gz``), so the shipped model is reproduced bit for
bit by::

    python scripts/train_ranker.py            # writes src/markdown_memory/search/ranker_model.json

Model: a linear pairwise logistic model (RankNet with a linear scorer). Features are standardised
over every candidate row (mean, standard deviation; 1 for a constant column); for each question
with an answering candidate, every (answering, not answering) pair gives the difference of their
rows, and the loss is ``sum_q 1/|pairs_q| sum log(1 + exp(-(z_pos - z_neg) . w)) + l2/2 |w_p|^2``
(each question weighs the same; no intercept: only differences matter). ``w_p`` is every weight
but those of ``FREE`` (the first stage's own rank): the model starts from the fused order and
each correction is shrunk towards it; L2 100 (docs/ranking.md: with 3-30 the pooled left-out gain
is larger, but the corrections overrule rules the training data shows too rarely to weigh, such
as a flag's reference entry, and the written questions lose a little). It is minimised by
Newton's method (exact Hessian, deterministic, no random start: the fixed "seed" is that there is
none). Weights are rounded to 12 significant digits so the file is the same on every machine.
Questions without an answering candidate, and negatives, give no pair.

Exit status 0, 2 for a missing input.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parents[1]
MODEL_OUT = HERE / "src" / "markdown_memory" / "search" / "ranker_model.json"
DATA = HERE / "eval" / "ranker"
#: The dev sets' exports, every set of each mode in name order (eval/ranker/README.md says how
#: they are made).
VECTOR_FILES = tuple(sorted(DATA.glob("features-minilm-*.jsonl.gz")))
KEYWORD_FILES = tuple(sorted(DATA.glob("features-none-*.jsonl.gz")))
L2 = 100.0
#: Features left out of the L2 penalty: the first stage's own order (``rrf_rr``, monotone in the
#: fused rank). The model starts from the fused order and every other weight is shrunk towards
#: it, so a signal the training data rarely shows (the intent list) keeps the say RRF gives it
#: and a correction must earn its place (docs/ranking.md: the learned ranker).
FREE = ("rrf_rr",)
#: Non-answering candidates paired with an answering one: the first stage's first NEG_DEPTH (the
#: ones that can take its place near the top); None: all 50.
NEG_DEPTH: int | None = None
ITERATIONS = 50
DIGITS = 12


def read_records(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """Every question record of the feature files (``.gz`` read compressed), each with ``set``
    (the file's set name: its stem's last ``-`` part) added when missing."""
    out = []
    for path in paths:
        opener = gzip.open if path.suffix == ".gz" else open
        name = path.name.split(".")[0].rsplit("-", 1)[-1]
        with opener(path, "rt", encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    rec = json.loads(line)
                    rec.setdefault("set", name)
                    out.append(rec)
    return out


def matrix(rec: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(rows ``[n, d]`` float64, labels ``[n]`` int) of one question record."""
    cands = rec["candidates"]
    if not cands:
        return np.zeros((0, len(rec["features"]))), np.zeros(0, dtype=int)
    return np.array([c["x"] for c in cands], dtype=np.float64), np.array([c["label"] for c in cands], dtype=int)


def _standardiser(records: Sequence[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    rows = np.vstack([matrix(r)[0] for r in records if r["candidates"]])
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    scale[scale < 1e-9] = 1.0
    return mean, scale


def _pairs(records: Sequence[dict[str, Any]], mean: np.ndarray, scale: np.ndarray,
           neg_depth: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(pair differences ``[m, d]``, pair weights ``[m]``): each question's pairs weigh 1 in all."""
    diffs, weights = [], []
    for rec in records:
        x, y = matrix(rec)
        if not len(y) or y.all() or not y.any():
            continue
        z = (x - mean) / scale
        near = np.arange(len(y)) < (neg_depth or len(y))
        pos, neg = z[y == 1], z[(y == 0) & near]
        if not len(neg):
            continue
        d = (pos[:, None, :] - neg[None, :, :]).reshape(-1, z.shape[1])
        diffs.append(d)
        weights.append(np.full(len(d), 1.0 / len(d)))
    if not diffs:
        raise ValueError("no question has both an answering and a non-answering candidate")
    return np.vstack(diffs), np.concatenate(weights)


def fit(records: Sequence[dict[str, Any]], l2: float = L2, iterations: int = ITERATIONS,
        neg_depth: int | None = NEG_DEPTH, free: Sequence[str] = FREE) -> dict[str, list[float]]:
    """The linear model ``{"mean", "scale", "weights"}`` (lists of floats, rounded to ``DIGITS``
    significant digits) of ``records`` (module docstring); the features named in ``free`` are
    not penalised."""
    mean, scale = _standardiser(records)
    d, w = _pairs(records, mean, scale, neg_depth)
    names = list(records[0]["features"])
    penalty = np.array([0.0 if name in free else l2 for name in names])
    beta = np.zeros(d.shape[1])
    for _ in range(iterations):
        margin = d @ beta
        p = 1.0 / (1.0 + np.exp(margin))  # sigmoid(-margin): the pair's loss gradient share
        grad = -(d * (w * p)[:, None]).sum(axis=0) + penalty * beta
        hess = (d * (w * p * (1.0 - p))[:, None]).T @ d + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        beta = beta - step
        if float(np.abs(step).max()) < 1e-10:
            break
    def rounded(a: np.ndarray) -> list[float]:
        return [float(f"{v:.{DIGITS}g}") for v in a]
    return {"mean": rounded(mean), "scale": rounded(scale), "weights": rounded(beta)}


def predict(model: dict[str, list[float]], x: np.ndarray) -> np.ndarray:
    """The training side's score of rows ``x``: ``((x - mean) / scale) @ weights``."""
    return np.asarray(((x - np.array(model["mean"])) / np.array(model["scale"])) @ np.array(model["weights"]))


def model_file(vectors: Sequence[dict[str, Any]], keyword: Sequence[dict[str, Any]], l2: float = L2) -> dict[str, Any]:
    """The model file's JSON (``search/learned.py``) trained on the two modes' records."""
    features = (vectors or keyword)[0]["features"]
    def described(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        sets = sorted({r["set"] for r in records})
        answering = sum(any(c["label"] for c in r["candidates"]) for r in records)
        return {"sets": sets, "questions": len(records), "with_answer_in_candidates": answering}
    return {"format": 1, "features": features, "depth": 50, "l2": l2, "unpenalised": list(FREE),
            "models": {"vectors": fit(vectors, l2), "keyword": fit(keyword, l2)},
            "trained_on": {"vectors": described(vectors), "keyword": described(keyword)}}


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vectors", type=Path, nargs="+", default=list(VECTOR_FILES), help="feature files, MiniLM mode")
    ap.add_argument("--keyword", type=Path, nargs="+", default=list(KEYWORD_FILES), help="feature files, keyword-only")
    ap.add_argument("--l2", type=float, default=L2, help="L2 penalty (default %(default)s)")
    ap.add_argument("--out", type=Path, default=MODEL_OUT, help="model file to write (default: the shipped one)")
    args = ap.parse_args(argv)
    missing = [p for p in args.vectors + args.keyword if not p.is_file()]
    if missing or not args.vectors or not args.keyword:
        print(f"missing feature files: {', '.join(map(str, missing)) or 'none found in ' + str(DATA)}", file=sys.stderr)
        return 2
    # pydantic is reserved for outside judging (DEVELOPERS.md): never trained on
    vectors, keyword = ([r for r in read_records(files) if r["project"] != "pydantic"] for files in (args.vectors, args.keyword))
    data = model_file(vectors, keyword, args.l2)
    args.out.write_text(dumps(data), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
