"""Retrieval scoring of labelled questions: the one place both ``markdown-memory eval`` and
``scripts/eval_retrieval.py`` score with.

Questions file (JSON Lines, UTF-8; one object per line, blank lines ignored)::

    {"id": "q1", "query": "how do I set the log level", "type": "howto", "lang": "en",
     "expect": [{"path": "ops/logging.md", "line": 12, "heading": "Log levels"}]}

* ``query`` (required): the question as a user or agent would ask it.
* ``expect`` (required, may be empty): the places that answer it; ``path`` relative to the docs
  root (``/`` separators; ``./a.md`` or an absolute path inside the root is normalised as
  ``read`` does), ``line`` a 1-based line inside the answering section, ``heading``
  optional (shown in the report only). ``expect: []`` marks a *negative*: nothing in the docs
  answers it, so the right answer is ``confidence: "none"``.
* ``id`` (default: ``line N``), ``type`` (a label to group by, e.g. ``howto``, ``identifier``;
  default none) and ``lang`` (``en``, ``zh``, ...) are optional.

Each question goes through ``Engine.search`` at the MCP tool's defaults (``top_k=5``,
``max_tokens=2000``), then once more with ``top_k=10`` for MRR@10. A hit is correct when its file
is an expected path and its line range holds the expected line. Figures per group (``overall``,
each ``type``, ``cjk/<lang>``, ``lang/zh>zh``, ``lang/cross``), as fractions of the group's
answerable questions:

* ``top1`` (first hit of the top-10 list correct), ``r5`` (a correct hit in the default answer's
  top 5), ``mrr10`` (mean of 1/rank of the first correct hit in the top 10, 0 when none);
* ``inhit``: the correct hit carries its text (not a pointer) in the default answer;
* ``none_pos``: answerable questions wrongly answered ``confidence: "none"``;
* ``high_n`` / ``high_precision``: answers with ``confidence: "high"`` and the share of them
  whose first hit is correct (None when there is none);
* ``p50_ms`` latency of the default call, ``p50_tokens`` estimated tokens of the answer as the
  MCP tool returns it;
* ``buckets``: the group's misses (first hit not an answering section) per bucket of
  :mod:`.eval_taxonomy` (``file_absent``, ``file_no_section``, ``wrong_section``, ``lower``).

``negative``: ``flagged_none``, the share of negatives answered ``confidence: "none"``.
``confidence``: ``high`` precision over every question, negatives included (a ``high`` answer to
a negative is a wrong one). Raises QuestionsFileError (one sentence naming the line) for a file
that does not follow the format.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import messages_eval
from .errors import MarkdownMemoryError, QuestionsFileError
from .eval_taxonomy import BUCKETS, bucket_counts, first_correct, miss_bucket
from .models import Freshness, SearchAnswer, SearchRequest
from .search.rank import cjk_share
from .text import count_tokens

QUALITY = ("top1", "r5", "mrr10", "inhit")
TOP_K = 5
WIDE_K = 10
MAX_TOKENS = 2000


@dataclass
class QueryResult:
    """Outcome of one labelled question: ``rank`` is the 0-based position of the first correct hit
    in the top-10 list (None = not found); ``rank5`` the same within the default top-5 answer;
    ``missing``: expected paths that are not files under the docs root; ``unusable``: each
    expectation that can never be met, ``"path:line"`` -> why (outside the root, no such file,
    a line past the end of the file, a file not indexed, a line in no section)."""

    id: str
    query: str
    type: str
    lang: str
    expect: list[dict[str, Any]]
    rank: int | None = None
    rank5: int | None = None
    in_content: bool = False
    confidence: str = ""
    latency_ms: float = 0.0
    tokens: int = 0
    top: list[dict[str, Any]] = field(default_factory=list)
    doc_lang: str = ""  # "zh" when the expected page is mostly CJK text, else "en"
    missing: list[str] = field(default_factory=list)
    unusable: dict[str, str] = field(default_factory=dict)
    bucket: str | None = None  # eval_taxonomy.miss_bucket of the top-10 list (None: no miss)

    @property
    def negative(self) -> bool:
        return not self.expect

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _checked(raw: Any, where: str) -> dict[str, Any]:
    """One question object, validated; raises QuestionsFileError naming ``where``."""
    if not isinstance(raw, dict):
        raise QuestionsFileError(messages_eval.bad_question(where, "is not a JSON object"))
    query = raw.get("query")
    if not isinstance(query, str) or not query.strip():
        raise QuestionsFileError(messages_eval.bad_question(where, 'has no "query" text'))
    expect = raw.get("expect")
    if not isinstance(expect, list):
        raise QuestionsFileError(messages_eval.bad_question(where, 'has no "expect" list (use [] for a question '
                                                              "nothing in the docs answers)"))
    for e in expect:
        if not (isinstance(e, dict) and isinstance(e.get("path"), str) and e["path"]
                and isinstance(e.get("line"), int) and not isinstance(e.get("line"), bool) and e["line"] >= 1):
            raise QuestionsFileError(messages_eval.bad_question(
                where, 'has an "expect" entry without a "path" string and a "line" number of at least 1'))
    return raw


def load_queries(path: Path, ids: Iterable[str] | None = None, limit: int | None = None,
                 folders: Iterable[str] | None = None, root: Path | None = None) -> list[dict[str, Any]]:
    """Read and validate the questions file (module docstring); keep only ``ids`` (when given),
    questions whose every expected path lies under one of ``folders`` (negatives are always
    kept), and at most ``limit``. With the docs ``root``, expected paths and ``folders`` are
    compared as the index names them (:func:`normalised_path`: ``./httpx/a.md`` and an absolute
    path inside ``root`` are under ``httpx``), as :func:`run_queries` scores them. Raises
    QuestionsFileError (unreadable file, a line that is not a question, no question at all)."""
    def named(p: str) -> str:
        return normalised_path(root, p) if root is not None else p

    wanted = set(ids or [])
    tops = tuple(named(f).strip("/") + "/" for f in (folders or []))
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a BOM some editors write is not a question
    except (OSError, UnicodeDecodeError) as exc:
        raise QuestionsFileError(messages_eval.questions_unreadable(str(path), exc)) from exc
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        try:
            q = _checked(json.loads(line), where)
        except json.JSONDecodeError as exc:
            raise QuestionsFileError(messages_eval.bad_question(where, f"is not JSON ({exc.msg})")) from exc
        q.setdefault("id", f"line {number}")
        if wanted and q["id"] not in wanted:
            continue
        if tops and q["expect"] and not all(named(e["path"]).startswith(tops) for e in q["expect"]):
            continue
        out.append(q)
    if not out and not wanted and not tops:
        raise QuestionsFileError(messages_eval.no_questions(str(path)))
    return out[:limit] if limit else out


def answer_tokens(answer: SearchAnswer) -> int:
    """Estimated tokens of the answer as the MCP ``search_docs`` tool returns it (its agent
    view: a hit that carries content drops its preview), without the ``index_status`` the tool
    adds to every answer (left out so the figure stays comparable with earlier baselines)."""
    shown = answer.to_dict(agent=True)
    shown.pop("index_status", None)
    return count_tokens(json.dumps(shown, ensure_ascii=False))


def page_language(path: Path) -> str:
    """"zh" when at least 5% of the letters in the page's first 20,000 characters are CJK (Chinese
    pages carry much code and English; English pages have none); "?" when unreadable."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:20000]
    except OSError:
        return "?"
    return "zh" if cjk_share(text) >= 0.05 else "en"


def expectation_problem(root: Path, path: str, line: int,
                        sections: Sequence[tuple[int, int]] | None = (), not_indexed: str | None = None) -> str | None:
    """Why the expectation ``path:line`` (path relative to ``root``) can never be met, or None:
    a path leading outside the root (``..`` included, as ``read`` says), a file that does not
    exist, a line past its end, a file that is not indexed (``sections`` None; ``not_indexed``
    says why when known), a line in no section (outside every 1-based inclusive ``(start, end)``
    line range of ``sections``, the indexed document's sections: front matter, say). An empty
    ``sections`` skips the last check."""
    from .errors import PathOutsideRootError
    from .reading.resolve import normalise_request_path

    try:
        normalise_request_path(path, root)
    except PathOutsideRootError:
        return "outside the docs root"
    except MarkdownMemoryError:
        pass
    real_root = root.resolve()
    target = (root / path).resolve()
    if target != real_root and real_root not in target.parents:
        return "outside the docs root"
    if not target.is_file():
        return "no such file under the docs root"
    try:
        with target.open("rb") as f:
            count = sum(1 for _ in f)
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    if line > count:
        return f"line {line} is past the end of the file ({count} lines)"
    if sections is None:
        return messages_eval.eval_not_indexed(not_indexed)
    if sections and not any(start <= line <= end for start, end in sections):
        return f"line {line} is in no section (front matter or a line no hit covers)"
    return None


def not_indexed_reason(engine: Any, rel: str) -> str | None:
    """Why the file ``rel`` (on disk under the root) is not indexed, when knowable: not a
    Markdown extension, the index run's recorded reason (size limit, not text...), or left out
    by an ignore file, a hidden or pruned folder or an exclude pattern (``files.walk.walk_one``)."""
    from .files.walk import MARKDOWN_SUFFIXES, is_markdown_name, walk_one

    if not is_markdown_name(rel.rsplit("/", 1)[-1]):
        return messages_eval.eval_not_markdown(MARKDOWN_SUFFIXES)
    recorded = engine.failure_reason(rel)
    if recorded:
        return str(recorded)
    if walk_one(engine.root, rel, engine.settings.exclude) == "":
        return messages_eval.eval_excluded()
    return None


def normalised_path(root: Path, path: str, indexed: list[str] | None = None) -> str:
    """An expected path as the index names it, by ``read``'s own resolver
    (``reading.resolve.resolve_document`` over ``indexed``: ``./a.md``, ``a/../a.md``, an
    absolute path inside ``root``, another case, ``a.md#fragment`` -> ``a.md``); a path it
    finds no indexed document for is only normalised (``normalise_request_path``), and ``path``
    comes back unchanged when it leads outside the root (``expectation_problem`` says so)."""
    from .reading.resolve import normalise_request_path, resolve_document

    if indexed is not None:
        try:
            return resolve_document(path, root, indexed)
        except MarkdownMemoryError:
            pass
    try:
        return normalise_request_path(path, root)
    except MarkdownMemoryError:
        return path


def indexed_sections(engine: Any, rel: str) -> list[tuple[int, int]] | None:
    """The ``(start_line, end_line)`` of every section of the indexed document ``rel`` (its
    outline: preamble and headings), None when ``rel`` itself is not indexed."""
    from .errors import MarkdownMemoryError

    try:
        outline = engine.outline(rel, freshness=Freshness.FLAG)
    except MarkdownMemoryError:
        return None
    if outline.file_path != rel:  # the outline of another document (a suffix or case match)
        return None
    spans = [(h.start_line, h.end_line) for h in outline.headings]
    if outline.preamble is not None:
        spans.append((outline.preamble.start_line, outline.preamble.end_line))
    return spans or None


def percentile(values: Iterable[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by linear interpolation between the closest
    ranks (``statistics.median`` at 0.5; numpy's default): every latency figure uses it, so a p95
    is never below its p50. Raises ValueError for no values."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    at = q * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def run_queries(engine: Any, queries: list[dict[str, Any]]) -> list[QueryResult]:
    """Search every question through ``engine`` (an ``Engine``; one warm-up search first so model
    loading is not timed). The index is used as it is (``Freshness.FLAG``): index first."""
    engine.search(SearchRequest("warm up", top_k=TOP_K, max_tokens=MAX_TOKENS), freshness=Freshness.FLAG)
    out = []
    spans: dict[str, list[tuple[int, int]] | None] = {}
    indexed = engine.indexed_paths()
    for q in queries:
        expect = [e | {"path": normalised_path(engine.root, e["path"], indexed)} for e in q.get("expect", [])]
        r = QueryResult(str(q["id"]), q["query"], q.get("type") or "", q.get("lang") or "?", expect)
        for e in r.expect:
            if e["path"] not in spans:
                spans[e["path"]] = indexed_sections(engine, e["path"])
            why = expectation_problem(engine.root, e["path"], int(e["line"]), spans[e["path"]],
                                      not_indexed_reason(engine, e["path"]) if spans[e["path"]] is None else None)
            if why:
                r.unusable[f"{e['path']}:{e['line']}"] = why
        r.missing = sorted({e["path"] for e in r.expect if not (engine.root / e["path"]).is_file()})
        if r.expect:
            r.doc_lang = page_language(engine.root / r.expect[0]["path"])
        t0 = time.perf_counter()
        ans = engine.search(SearchRequest(q["query"], top_k=TOP_K, max_tokens=MAX_TOKENS), freshness=Freshness.FLAG)
        r.latency_ms = (time.perf_counter() - t0) * 1000
        r.tokens = answer_tokens(ans)
        r.confidence = ans.confidence
        r.rank5 = first_correct(ans.results, r.expect)
        r.in_content = r.rank5 is not None and ans.results[r.rank5].content is not None
        wide = engine.search(SearchRequest(q["query"], top_k=WIDE_K, max_tokens=MAX_TOKENS), freshness=Freshness.FLAG).results
        r.rank = first_correct(wide, r.expect)
        r.bucket = miss_bucket(wide, r.expect)
        r.top = [{"file_path": h.file_path, "heading_path": h.heading_path, "start_line": h.start_line,
                  "end_line": h.end_line, "score": h.score, "matched_by": list(h.matched_by),
                  "content": h.content is not None} for h in wide[:TOP_K]]
        out.append(r)
    return out


def _high(rs: list[QueryResult]) -> dict[str, Any]:
    """``high_n`` answers with confidence "high" among ``rs`` and ``high_precision``, the share
    whose first hit (of the default answer) is correct; None without any."""
    high = [r for r in rs if r.confidence == "high"]
    right = sum(r.rank5 == 0 for r in high)
    return {"high_n": len(high), "high_precision": right / len(high) if high else None}


def summarise(results: list[QueryResult]) -> dict[str, Any]:
    """Figures per group (module docstring): ``overall``, each type, ``cjk/zh`` and ``cjk/en``
    (by question language), ``lang/zh>zh`` (Chinese questions on Chinese pages) and
    ``lang/cross`` (question and page in different languages, any type); ``negative``;
    ``confidence`` (``high`` over all questions); ``all_queries`` (latency and tokens)."""
    groups: dict[str, list[QueryResult]] = {}
    for r in results:
        if r.negative:
            continue
        groups.setdefault("overall", []).append(r)
        if r.type:
            groups.setdefault(r.type, []).append(r)
        if r.type == "cjk":
            groups.setdefault(f"cjk/{r.lang}", []).append(r)
        if r.lang == "zh" and r.doc_lang == "zh":
            groups.setdefault("lang/zh>zh", []).append(r)
        elif r.doc_lang in ("zh", "en") and r.lang in ("zh", "en") and r.lang != r.doc_lang:
            groups.setdefault("lang/cross", []).append(r)
    out: dict[str, Any] = {}
    for name, rs in sorted(groups.items(), key=lambda kv: (kv[0] != "overall", kv[0])):
        n = len(rs)
        out[name] = {
            "n": n,
            "top1": sum(r.rank == 0 for r in rs) / n,
            "r5": sum(r.rank5 is not None for r in rs) / n,
            "mrr10": sum(1.0 / (r.rank + 1) for r in rs if r.rank is not None) / n,
            "inhit": sum(r.in_content for r in rs) / n,
            "none_pos": sum(r.confidence == "none" for r in rs) / n,
            **_high(rs),
            "p50_ms": round(percentile((r.latency_ms for r in rs), 0.5), 1),
            "p50_tokens": statistics.median(r.tokens for r in rs),
            "buckets": bucket_counts(rs),
        }
    neg = [r for r in results if r.negative]
    if neg:
        out["negative"] = {"n": len(neg), "flagged_none": sum(r.confidence == "none" for r in neg) / len(neg),
                           "high_n": sum(r.confidence == "high" for r in neg),
                           "p50_ms": round(percentile((r.latency_ms for r in neg), 0.5), 1)}
    if results:
        out["confidence"] = {"n": len(results), **_high(results)}
        out["all_queries"] = {
            "n": len(results),
            "p50_ms": round(percentile((r.latency_ms for r in results), 0.5), 1),
            "p95_ms": round(percentile((r.latency_ms for r in results), 0.95), 1),
            "p50_tokens": statistics.median(r.tokens for r in results),
        }
    return out


_SPECIAL = ("negative", "confidence", "all_queries")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def format_table(summary: dict[str, Any]) -> str:
    """The figures as a text table, one group per line, then negatives, ``high`` precision and
    latency/tokens lines."""
    lines = [f"{'group':<12} {'n':>3} {'top1':>6} {'R@5':>6} {'MRR10':>6} {'inhit':>6} {'none+':>6} "
             f"{'high':>4} {'hiprec':>6} {'p50ms':>7} {'p50tok':>7}"]
    for name, m in summary.items():
        if name in _SPECIAL:
            continue
        lines.append(
            f"{name:<12} {m['n']:>3} {m['top1']:>6.1%} {m['r5']:>6.1%} {m['mrr10']:>6.3f} {m['inhit']:>6.1%} "
            f"{m['none_pos']:>6.1%} {m.get('high_n', 0):>4} {_pct(m.get('high_precision')):>6} "
            f"{m['p50_ms']:>7.1f} {m['p50_tokens']:>7.0f}"
        )
    if "negative" in summary:
        m = summary["negative"]
        lines.append(f"{'negative':<12} {m['n']:>3} flagged confidence=none: {m['flagged_none']:.1%}"
                     + (f" ({m['high_n']} answered high)" if m.get("high_n") else ""))
    if "confidence" in summary:
        m = summary["confidence"]
        lines.append(f"confidence high on {m['high_n']} of {m['n']} answers; precision (top hit correct) "
                     f"{_pct(m['high_precision'])}")
    if "all_queries" in summary:
        m = summary["all_queries"]
        lines.append(f"all {m['n']} queries: latency p50 {m['p50_ms']} ms, p95 {m['p95_ms']} ms; "
                     f"answer p50 {m['p50_tokens']:.0f} tokens")
    return "\n".join(lines)


def is_miss(r: QueryResult) -> bool:
    """Whether the report lists ``r``: a negative not flagged ``none``, or an answerable question
    whose first hit is wrong or whose right hit came without its text."""
    return r.confidence != "none" if r.negative else not (r.rank == 0 and r.in_content)


def format_misses(results: list[QueryResult]) -> str:
    """Each miss: what was wanted and the first five hits (``*`` marks the correct one)."""
    out = []
    for r in results:
        if not is_miss(r):
            continue
        kind = "NEG" if r.negative else ("MISS" if r.rank5 is None else f"rank {r.rank5 + 1}")
        label = "/".join(x for x in (r.type, r.lang) if x and x != "?")
        out.append(f"[{r.id}{' ' + label if label else ''}] {kind} conf={r.confidence}: {r.query}")
        for e in r.expect:
            why = r.unusable.get(f"{e['path']}:{e['line']}")
            gone = f"  ({why})" if why else ""
            heading = f"  ({e['heading']})" if e.get("heading") else ""  # optional in the questions file
            out.append(f"    want {e['path']}:{e['line']}{heading}{gone}")
        for i, h in enumerate(r.top):
            mark = "*" if r.rank == i else " "
            out.append(f"   {mark}{i + 1}. {h['file_path']}:{h['start_line']}-{h['end_line']} {h['heading_path'][:70]!r} "
                       f"{'+'.join(h['matched_by'] or [])}{'' if h['content'] else ' (pointer)'}")
        if not r.top:
            out.append("    (no results)")
    return "\n".join(out)


def compare(summary: dict[str, Any], baseline: dict[str, Any], margin: float = 0.0) -> list[str]:
    """Quality drops beyond noise: for each group and metric, a drop larger than one query's
    worth (``1/n``) plus ``margin``. Returns human-readable failures (empty = pass)."""
    base = baseline.get("summary", baseline)
    failures = []
    for name, old in base.items():
        new = summary.get(name)
        if new is None or name in ("all_queries", "confidence"):
            continue
        metrics = ("flagged_none",) if name == "negative" else QUALITY
        noise = 1.0 / max(1, old.get("n", 1)) + margin + 1e-9
        for metric in metrics:
            if metric in old and new.get(metric, 0.0) < old[metric] - noise:
                failures.append(f"{name}.{metric}: {new[metric]:.3f} < baseline {old[metric]:.3f} (noise {noise:.3f})")
    return failures


def misses_by_bucket(results: Sequence[QueryResult]) -> dict[str, list[Any]]:
    """The results of each bucket (``BUCKETS`` order, empty buckets left out), then ``other``:
    listed misses no bucket holds (a negative not flagged none, a right first hit without its
    text), as ``evaluation.is_miss`` says."""
    out: dict[str, list[Any]] = {b: [r for r in results if r.bucket == b] for b in BUCKETS}
    out["other"] = [r for r in results if r.bucket is None and is_miss(r)]
    return {b: rs for b, rs in out.items() if rs}


def format_misses_by_bucket(results: Sequence[Any]) -> str:
    """Every listed miss under its bucket's heading (``bucket (n):``), each as
    ``evaluation.format_misses`` prints it."""
    parts = []
    for bucket, rs in misses_by_bucket(results).items():
        parts.append(f"-- {bucket} ({len(rs)}):")
        parts.append(format_misses(rs))
    return "\n".join(parts)
