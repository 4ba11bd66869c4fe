"""Prompt hook benchmark (issue 15): what ``markdown-memory hook`` injects, and how fast.

For each dev set (``--set NAME=CORPUS:QUERIES``, repeatable; default the two dev sets) over its
index (``--db-dir DIR``/``NAME.db``, built keyword-only when missing: the hook searches keywords
only) it feeds every question, and every prompt of ``--quiet`` (prompts that must get nothing),
to the hook as Claude Code does (the UserPromptSubmit JSON, a fresh session each) and prints:

* ``hit``: share of answerable questions whose injected text holds an answering section (its
  file, and a line range holding the expected line: the rule of scripts/eval_retrieval.py);
  ``injected``: share of answerable questions that got anything; ``precision``: share of
  injections that held an answering section; ``section precision``: share of the injected
  sections (all prompts) that answer their question (the share of injected text that answers);
* ``negatives``: share of unanswerable questions (``expect: []``) that got anything;
* ``quiet``: share of the quiet prompts that got anything (each one listed);
* ``tokens``: median tokens injected per prompt that got anything (``text.count_tokens``);
* ``latency``: p50 / p95 wall time from process start to the process's exit (answer written),
  and the median CPU time, of ``--latency-runs`` subprocess calls per set (``python -m
  markdown_memory.cli hook``): questions (searched) and quiet prompts (turned away before any
  search) alternately, spread over the files; per kind and for all. Wall time depends on what
  else the machine runs: the load average is printed beside it.

Quality figures come from :func:`markdown_memory.hook.respond` in this process (the code the
command runs, minus the process start); latency from real subprocesses. One run; medians.

Usage::

    python scripts/bench_hook.py --db-dir /tmp/hook-bench
    python scripts/bench_hook.py --set dev=../shared/eval-corpus:../shared/eval-queries-dev.jsonl \\
        --db-dir /tmp/hook-bench --latency-runs 40 --json-out /tmp/hook-bench.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
SHARED = HERE.parent / "shared"
HEADER = re.compile(r"^## (?P<path>.+?) · .* \(lines (?P<a>\d+)-(?P<b>\d+)\)$", re.M)


def parse_set(text: str) -> tuple[str, Path, Path]:
    name, _, rest = text.partition("=")
    corpus, _, queries = rest.rpartition(":")
    if not (name and corpus and queries):
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=CORPUS:QUERIES")
    return name, Path(corpus), Path(queries)


def payload(prompt: str, cwd: Path, session: str) -> str:
    return json.dumps({"session_id": session, "transcript_path": "/dev/null", "cwd": str(cwd),
                       "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt})


def injected(stdout: str | None) -> str:
    """The additionalContext of a hook answer ("" for none)."""
    if not stdout:
        return ""
    return str(json.loads(stdout)["hookSpecificOutput"]["additionalContext"])


def holds_answer(context: str, expect: list[dict[str, Any]]) -> bool:
    for m in HEADER.finditer(context):
        a, b = int(m["a"]), int(m["b"])
        if any(m["path"] == e["path"] and a <= e["line"] <= b for e in expect):
            return True
    return False


def sections_answering(context: str, expect: list[dict[str, Any]]) -> tuple[int, int]:
    """(injected sections that answer, injected sections) of one hook answer."""
    found = [(m["path"], int(m["a"]), int(m["b"])) for m in HEADER.finditer(context)]
    return sum(any(p == e["path"] and a <= e["line"] <= b for e in expect) for p, a, b in found), len(found)


def ensure_index(corpus: Path, db: Path) -> None:
    if db.is_file():
        return
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    db.parent.mkdir(parents=True, exist_ok=True)
    engine = Engine(Settings.load(corpus, db, "none"))
    try:
        engine.index()
    finally:
        engine.close()


def quality(corpus: Path, db: Path, questions: list[dict[str, Any]], quiet: list[dict[str, Any]]) -> dict[str, Any]:
    from markdown_memory.hook import respond
    from markdown_memory.text import count_tokens

    pos = [q for q in questions if q["expect"]]
    neg = [q for q in questions if not q["expect"]]
    hit = inj = neg_inj = sec_ok = sec_all = 0
    tokens: list[int] = []
    quiet_hits = []
    for i, q in enumerate(pos + neg + quiet):
        prompt = q.get("query", q.get("prompt", ""))
        out, _err = respond(payload(prompt, corpus, ""), db=str(db))
        text = injected(out)
        if text:
            tokens.append(count_tokens(text))
        if i < len(pos):
            inj += bool(text)
            hit += holds_answer(text, q["expect"])
            ok, n = sections_answering(text, q["expect"])
            sec_ok, sec_all = sec_ok + ok, sec_all + n
        elif i < len(pos) + len(neg):
            neg_inj += bool(text)
        elif text:
            quiet_hits.append(prompt)
    return {"questions": len(pos), "hit": hit / max(len(pos), 1), "injected": inj / max(len(pos), 1),
            "precision": hit / inj if inj else None, "section_precision": sec_ok / sec_all if sec_all else None,
            "negatives": len(neg),
            "negatives_injected": neg_inj / len(neg) if neg else None, "quiet": len(quiet),
            "quiet_injected": len(quiet_hits) / max(len(quiet), 1), "quiet_prompts_injected": quiet_hits,
            "tokens_median": statistics.median(tokens) if tokens else 0}


def latency(corpus: Path, db: Path, questions: list[str], quiet: list[str], runs: int) -> dict[str, Any]:
    """Wall and CPU milliseconds of ``runs`` hook processes: half questions, half quiet prompts,
    picked evenly over the two lists; p50/p95 for each half and for all."""
    env = dict(os.environ, PYTHONPATH=str(HERE / "src"), MARKDOWN_MEMORY_DB=str(db))
    timed: dict[str, list[tuple[float, float]]] = {"questions": [], "quiet": []}
    for i in range(runs):
        kind, pool = ("questions", questions) if i % 2 == 0 else ("quiet", quiet)
        prompt = pool[(i // 2) * len(pool) // max(1, (runs + 1) // 2) % len(pool)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "markdown_memory.cli", "hook"], capture_output=True, text=True,
                              input=payload(prompt, corpus, f"bench-{os.getpid()}-{i}"), env=env, check=False)
        wall = (time.perf_counter() - started) * 1000
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
        timed[kind].append((wall, cpu))
        if done.returncode != 0 or (done.stdout and not done.stdout.startswith('{"hookSpecificOutput"')):
            raise SystemExit(f"hook call failed (exit {done.returncode}): {done.stdout[:200]} {done.stderr[:200]}")

    def figures(pairs: list[tuple[float, float]]) -> dict[str, Any]:
        walls = sorted(w for w, _c in pairs)
        return {"n": len(pairs), "p50_ms": round(statistics.median(walls)),
                "p95_ms": round(walls[min(len(walls) - 1, int(0.95 * len(walls)))]),
                "cpu_p50_ms": round(statistics.median(c for _w, c in pairs))}

    out = {kind: figures(pairs) for kind, pairs in timed.items() if pairs}
    out["all"] = figures(timed["questions"] + timed["quiet"])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", dest="sets", action="append", type=parse_set, metavar="NAME=CORPUS:QUERIES")
    ap.add_argument("--quiet", type=Path, default=HERE / "eval" / "hook-quiet-prompts.jsonl")
    ap.add_argument("--db-dir", type=Path, required=True, help="folder of the indexes, NAME.db per set (built when missing)")
    ap.add_argument("--latency-runs", type=int, default=24, help="subprocess calls timed per set (default 24)")
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args(argv)
    sets = args.sets or [("dev", SHARED / "eval-corpus", SHARED / "eval-queries-dev.jsonl"),
                         ("corpus2", HERE / "eval" / "corpus2", HERE / "eval" / "queries-corpus2-dev.jsonl")]
    quiet = [json.loads(line) for line in args.quiet.read_text(encoding="utf-8").splitlines() if line.strip()]
    report: dict[str, Any] = {"load_average": os.getloadavg()[0], "sets": {}}
    for name, corpus, queries_path in sets:
        if not corpus.is_dir() or not queries_path.is_file():
            print(f"[{name}] corpus {corpus} or queries {queries_path} not found", file=sys.stderr)
            return 2
        corpus = corpus.resolve()
        db = args.db_dir / f"{name}.db"
        ensure_index(corpus, db)
        questions = [json.loads(line) for line in queries_path.read_text(encoding="utf-8").splitlines() if line.strip()]
        q = quality(corpus, db, questions, quiet)
        lat = latency(corpus, db, [x["query"] for x in questions], [x["prompt"] for x in quiet],
                      args.latency_runs) if args.latency_runs > 0 else None
        report["sets"][name] = {"quality": q, "latency": lat}
        neg = "-" if q["negatives_injected"] is None else f"{q['negatives_injected']:.0%} of {q['negatives']}"
        prec = "-" if q["precision"] is None else f"{q['precision']:.0%}"
        if q["section_precision"] is not None:
            prec += f", section precision {q['section_precision']:.0%}"
        print(f"[{name}] {corpus}: hit {q['hit']:.1%} of {q['questions']} questions (injected {q['injected']:.1%}, "
              f"precision {prec}); negatives injected {neg}; quiet injected {q['quiet_injected']:.1%} of {q['quiet']}; "
              f"median tokens injected {q['tokens_median']}")
        for prompt in q["quiet_prompts_injected"]:
            print(f"    quiet prompt injected: {prompt!r}")
        for kind, f in (lat or {}).items():
            print(f"[{name}] latency, {kind} ({f['n']} processes): p50 {f['p50_ms']} ms, p95 {f['p95_ms']} ms, "
                  f"CPU p50 {f['cpu_p50_ms']} ms (load average {os.getloadavg()[0]:.1f})")
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
