"""eval/check_queries.py accepts real users' questions (type `real`) and keeps its checks.

A `real` question needs its source thread and may have no expects (the docs do not answer it);
its expects are checked like any other type's.
"""

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

CHECKER = Path(__file__).resolve().parent.parent / "eval" / "check_queries.py"


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_queries", CHECKER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(tmp_path: Path, *questions: dict[str, object]) -> list[str]:
    root = tmp_path / "root"
    (root / "proj").mkdir(parents=True)
    (root / "proj" / "doc.md").write_text("# Title\n\nlead\n\n## Setup\n\nInstall it.\n")
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("".join(json.dumps(q) + "\n" for q in questions))
    errors, _counts, _n = _checker().check([str(qfile)], str(root))
    return list(errors)


def _real(qid: str, **extra: object) -> dict[str, object]:
    q: dict[str, object] = {"id": qid, "query": "how do I install it?", "type": "real",
                            "lang": "en", "source": "https://github.com/o/r/issues/1",
                            "set": "proj", "expect": []}
    q.update(extra)
    return q


def test_real_question_without_answer_passes(tmp_path: Path) -> None:
    assert _run(tmp_path, _real("r-1")) == []


def test_real_question_with_a_right_expect_passes(tmp_path: Path) -> None:
    expect = [{"path": "proj/doc.md", "line": 7, "heading": "Setup"}]
    assert _run(tmp_path, _real("r-1", expect=expect)) == []


@pytest.mark.parametrize(
    ("question", "message"),
    [
        ({"source": ""}, "needs its source thread"),
        ({"expect": [{"path": "proj/doc.md", "line": 3, "heading": "Setup"}]}, "not inside section"),
        ({"expect": [{"path": "proj/nope.md", "line": 1, "heading": "Setup"}]}, "no such file"),
        ({"expect": [{"path": "proj/doc.md", "line": 7, "heading": "Setup"}] * 4}, "0-3 expects"),
    ],
)
def test_real_question_errors_are_reported(tmp_path: Path, question: dict[str, object],
                                           message: str) -> None:
    errors = _run(tmp_path, _real("r-1", **question))
    assert any(message in e for e in errors), errors


def test_other_types_still_need_an_expect(tmp_path: Path) -> None:
    howto = _real("h-1", type="howto")
    errors = _run(tmp_path, howto)
    assert any("expected 1-3 expects" in e for e in errors), errors
