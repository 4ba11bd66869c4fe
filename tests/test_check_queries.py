"""eval/check_queries.py: the `real` question type (a question a user really asked, with its
thread URL) and the committed real-question files it checks."""
import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
_SPEC = importlib.util.spec_from_file_location("check_queries", REPO / "eval" / "check_queries.py")
assert _SPEC is not None and _SPEC.loader is not None
check_queries = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(check_queries)

DOC = "# Guide\n\nintro\n\n## Install\n\nrun the script\n"
EXPECT = {"path": "guide.md", "line": 7, "heading": "Install"}


def _errors(tmp_path: Path, *questions: dict) -> list[str]:
    (tmp_path / "guide.md").write_text(DOC, encoding="utf-8")
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    errors, _counts, _n = check_queries.check([str(qfile)], str(tmp_path))
    return errors


def _real(qid: str, expect: list, **extra: str) -> dict:
    q = {"id": qid, "query": "how do I install it?", "type": "real", "lang": "en", "expect": expect}
    q.update(extra)
    return q


def test_real_question_with_source_and_answer_or_none_passes(tmp_path: Path) -> None:
    src = "https://github.com/o/r/issues/1"
    assert _errors(tmp_path, _real("a", [EXPECT], source=src), _real("b", [], source=src)) == []


@pytest.mark.parametrize(
    ("question", "message"),
    [
        (_real("a", [EXPECT]), "needs its source URL"),
        (_real("a", [EXPECT] * 4, source="https://x/1"), "expected 1-3 expects"),
        (_real("a", [dict(EXPECT, line=3)], source="https://x/1"), "not inside section"),
    ],
)
def test_real_question_keeps_the_checks(tmp_path: Path, question: dict, message: str) -> None:
    errors = _errors(tmp_path, question)
    assert len(errors) == 1 and message in errors[0]


def test_other_types_still_need_an_answer_unless_negative(tmp_path: Path) -> None:
    howto = {"id": "h", "query": "q", "type": "howto", "lang": "en", "expect": []}
    assert "expected 1-3 expects" in _errors(tmp_path, howto)[0]


@pytest.mark.parametrize(
    ("root", "name"),
    [("corpus4", "ollama"), ("corpus2", "corpus2"), ("corpus3", "corpus3")],
)
def test_committed_real_question_files_pass(root: str, name: str) -> None:
    qfile = REPO / "eval" / "real" / f"queries-real-{name}.jsonl"
    errors, counts, n = check_queries.check([str(qfile)], str(REPO / "eval" / root))
    assert errors == []
    assert n > 0 and counts == {"real": n}
