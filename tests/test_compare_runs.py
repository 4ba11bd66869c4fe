"""scripts/compare_runs.py: the paired comparison a ranking change is decided by
(docs/ranking.md#deciding-on-a-change), on hand-built eval runs in the shapes eval writes."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cr():
    name = "markdown_memory_compare_runs_script"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / "compare_runs.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclass looks its module up there
        spec.loader.exec_module(module)
    return sys.modules[name]


def question(i: int, rank: int | None, negative: bool = False) -> dict:
    return {"id": f"q{i}", "query": f"question {i}", "expect": [] if negative else [{"path": "a.md", "line": 1}],
            "rank": rank, "rank5": rank if rank is not None and rank < 5 else None,
            "in_content": rank == 0, "bucket": None if rank == 0 or negative else "lower"}


def run_file(path: Path, sets: dict[str, list[dict]]) -> Path:
    """A run as scripts/eval_retrieval.py --json-out writes several sets."""
    path.write_text(json.dumps({"sets": {name: {"meta": {}, "summary": {}, "queries": qs}
                                         for name, qs in sets.items()}}), encoding="utf-8")
    return path


def test_a_change_that_lifts_many_questions_is_kept(cr, tmp_path, capsys):
    # 60 questions: 30 move from rank 3 to first, one small set loses a question (first -> gone)
    before = {"dev": [question(i, 2) for i in range(30)] + [question(i, 0) for i in range(30, 50)],
              "small": [question(i, 0) for i in range(10)]}
    after = {"dev": [question(i, 0) for i in range(50)],
             "small": [question(0, None)] + [question(i, 0) for i in range(1, 10)]}
    b, a = run_file(tmp_path / "b.json", before), run_file(tmp_path / "a.json", after)
    assert cr.main([str(b), str(a), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    pooled = result["pooled"]
    assert pooled["n"] == 60 and pooled["better"] == 30 and pooled["worse"] == 1
    assert pooled["mrr10"]["diff"] == pytest.approx((30 * (1 - 1 / 3) - 1) / 60)
    assert pooled["mrr10"]["interval"][0] > 0 and pooled["top1"]["interval"][0] > 0
    assert result["verdict"].startswith("keep")
    small = next(s for s in result["sets"] if s["set"] == "small")
    assert small["before"]["top1"] == 1.0 and small["after"]["top1"] == 0.9  # the loss is shown beside it
    assert cr.main([str(b), str(a)]) == 0
    text = capsys.readouterr().out
    assert "100.0%->90.0%" in text and "verdict: keep" in text


def test_identical_runs_give_a_zero_interval_that_straddles(cr, tmp_path):
    qs = [question(i, r) for i, r in enumerate([0, 1, None, 4, 0, 0, 2, None, 9, 0])]
    run = cr.load_run(run_file(tmp_path / "r.json", {"dev": qs}))
    result = cr.compare([(run, run)])
    assert result["pooled"]["mrr10"]["interval"] == [0.0, 0.0]
    assert result["pooled"]["top1"]["interval"] == [0.0, 0.0]
    assert result["verdict"].startswith("straddles")


def test_a_clear_loss_is_dropped(cr):
    before = {"dev": {f"q{i}": question(i, 0) for i in range(40)}}
    after = {"dev": {f"q{i}": question(i, 3 if i % 2 else 0) for i in range(40)}}
    result = cr.compare([(before, after)])
    assert result["pooled"]["mrr10"]["interval"][1] < 0 and result["verdict"].startswith("drop")


def test_questions_pair_by_set_and_id_not_by_order(cr, tmp_path):
    before = [question(i, i % 4) for i in range(40)]
    after = [question(i, (i + 1) % 4) for i in range(40)]
    shuffled = after[:]
    random.Random(7).shuffle(shuffled)
    b = cr.load_run(run_file(tmp_path / "b.json", {"dev": before}))
    in_order = cr.compare([(b, cr.load_run(run_file(tmp_path / "a1.json", {"dev": after})))])
    reordered = cr.compare([(b, cr.load_run(run_file(tmp_path / "a2.json", {"dev": shuffled})))])
    assert reordered["pooled"] == in_order["pooled"]
    # by position the shuffled run would pair other questions: the differences would not match
    rr_b = np.array([cr.reciprocal_rank(q) for q in before])
    by_position = np.array([cr.reciprocal_rank(q) for q in shuffled]) - rr_b
    by_id = np.array([cr.reciprocal_rank(q) for q in after]) - rr_b
    assert int((by_position > 0).sum()) != in_order["pooled"]["better"] == int((by_id > 0).sum())


def test_negatives_and_questions_in_one_run_only_are_left_out(cr, tmp_path):
    before = [question(0, 0), question(1, 1), question(2, None, negative=True)]
    after = [question(1, 0), question(3, 0), question(2, None, negative=True)]
    result = cr.compare([(cr.load_run(run_file(tmp_path / "b.json", {"dev": before})),
                          cr.load_run(run_file(tmp_path / "a.json", {"dev": after})))])
    assert result["pooled"]["n"] == 1 and result["pooled"]["unpaired"] == 2
    assert result["pooled"]["mrr10"]["diff"] == pytest.approx(0.5)


def test_pairs_pool_sets_of_both_pairs_and_read_the_cli_json(cr, tmp_path):
    """A second BEFORE AFTER pair (another embedder) pools with the first; a run from
    ``markdown-memory eval --json`` (``results``) reads as one set."""
    cli = {"questions": "q.jsonl", "summary": {}, "results": [question(i, 1) for i in range(5)]}
    cli_after = cli | {"results": [question(i, 0) for i in range(5)]}
    paths = []
    for name, data in (("b1", cli), ("a1", cli_after), ("b2", cli), ("a2", cli)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(data), encoding="utf-8")
    runs = [cr.load_run(p) for p in paths]
    assert list(runs[0]) == ["q.jsonl"]
    result = cr.compare([(runs[0], runs[1]), (runs[2], runs[3])])
    assert result["pooled"]["n"] == 10 and result["pooled"]["mrr10"]["diff"] == pytest.approx(0.25)
    assert [s["pair"] for s in result["sets"]] == [1, 2]


def test_files_that_cannot_be_compared_get_one_sentence(cr, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"summary": {}}', encoding="utf-8")
    good = run_file(tmp_path / "good.json", {"dev": [question(0, 0)]})
    other = run_file(tmp_path / "other.json", {"c2": [question(0, 0)]})
    assert cr.main([str(bad), str(good)]) == 2
    assert "no per-question results" in capsys.readouterr().err
    assert cr.main([str(good), str(other)]) == 2
    assert "share no answerable question" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cr.main([str(good)])  # runs come in pairs
