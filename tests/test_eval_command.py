"""``markdown-memory eval QUESTIONS.jsonl``: a user's own labelled questions scored over the
small hand-written guide (tests/fixtures/guide), through the real CLI, with the figures the user
reads; and the harness script scoring several sets with the same module."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PORT = "which port must be free for the server to start"
QUESTIONS = [
    # answered by the top hit (the troubleshooting section names port 8080)
    {"id": "port", "query": PORT, "type": "howto", "lang": "en",
     "expect": [{"path": "ops/troubleshooting.md", "line": 5, "heading": "The server does not start"}]},
    # the identifier's table row
    {"id": "retries", "query": "ACME_MAX_RETRIES", "type": "identifier",
     "expect": [{"path": "configuration.md", "line": 14}]},
    # the same question labelled with a section that does not answer it: a miss whose top hit
    # (the troubleshooting section) is the report's "what came first"
    {"id": "wrong", "query": PORT, "type": "howto",
     "expect": [{"path": "install.md", "line": 23, "heading": "Uninstall"}]},
    # nothing in the guide answers it
    {"id": "bread", "query": "how long should sourdough bread proof overnight", "expect": []},
]


def _write(path: Path, questions) -> Path:
    path.write_text("".join(json.dumps(q) + "\n\n" for q in questions), encoding="utf-8")
    return path


@pytest.fixture
def run(cli_main, monkeypatch, minilm, tmp_path):
    """``run(*args)``: the CLI in-process with ``--embedder minilm`` (the session model) and a
    database in tmp_path."""
    from markdown_memory import embed

    real = embed.get_embedder
    monkeypatch.setattr(embed, "get_embedder", lambda name, *a, **k: minilm if name == "minilm" else real(name, *a, **k))

    def call(*args):
        return cli_main("--db", str(tmp_path / "eval.db"), *args)

    return call


def test_eval_json_figures_a_user_sees(docs_root, tmp_path, run):
    questions = _write(tmp_path / "questions.jsonl", QUESTIONS)
    # --embedder after the command works as the global flag does
    out = run("eval", str(questions), "--docs-dir", str(docs_root), "--embedder", "minilm", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["embedder"] == "minilm" and data["keyword_only"] is False
    by_id = {r["id"]: r for r in data["results"]}
    assert by_id["port"]["rank"] == 0 and by_id["port"]["in_content"]
    assert by_id["retries"]["rank"] == 0
    assert by_id["wrong"]["rank5"] is None
    assert by_id["wrong"]["top"][0]["file_path"] == "ops/troubleshooting.md"
    overall = data["summary"]["overall"]
    assert overall["n"] == 3  # the negative is scored apart
    assert overall["top1"] == pytest.approx(2 / 3) and overall["r5"] == pytest.approx(2 / 3)
    wrong_rank = by_id["wrong"]["rank"]  # the mislabelled section may still appear in the top 10
    assert overall["mrr10"] == pytest.approx((2 + (0 if wrong_rank is None else 1 / (wrong_rank + 1))) / 3)
    assert data["summary"]["howto"]["n"] == 2 and data["summary"]["howto"]["top1"] == 0.5
    assert data["summary"]["identifier"]["top1"] == 1.0
    # "port" and "wrong" are one search answered alike: if it is "high", one of its two labels is
    # wrong, so high precision cannot be 1
    assert by_id["port"]["confidence"] == by_id["wrong"]["confidence"]
    highs = [r for r in data["results"] if r["confidence"] == "high"]
    right = [r for r in highs if r["rank5"] == 0]
    assert data["summary"]["confidence"]["high_n"] == len(highs)
    assert data["summary"]["confidence"]["high_precision"] == pytest.approx(len(right) / len(highs))
    if by_id["port"]["confidence"] == "high":
        assert data["summary"]["confidence"]["high_precision"] < 1.0
    neg = data["summary"]["negative"]
    assert neg["n"] == 1 and neg["flagged_none"] == (1.0 if by_id["bread"]["confidence"] == "none" else 0.0)


def test_eval_text_report_lists_figures_and_misses(docs_root, tmp_path, run):
    questions = _write(tmp_path / "questions.jsonl", QUESTIONS)
    out = run("--embedder", "minilm", "eval", str(questions), "--docs-dir", str(docs_root))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("4 questions (1 negative)")
    overall = next(line for line in lines if line.startswith("overall"))
    assert overall.split()[1:4] == ["3", "66.7%", "66.7%"]  # n, top1, R@5
    assert any(line.startswith("negative ") and "flagged confidence=none" in line for line in lines)
    assert any(line.startswith("confidence high on") for line in lines)
    assert "misses (" in out.stdout
    miss = out.stdout[out.stdout.index("[wrong"):]
    assert "want install.md:23" in miss
    assert miss.splitlines()[2].strip().startswith("1. ops/troubleshooting.md:")  # what came first
    assert "[port" not in out.stdout and "[retries" not in out.stdout  # right first hits are not misses


def test_eval_flags_an_expected_file_that_does_not_exist(docs_root, tmp_path, run):
    questions = _write(tmp_path / "q.jsonl", [{"query": PORT, "expect": [{"path": "ops/trouble.md", "line": 5}]}])
    out = run("--embedder", "minilm", "eval", str(questions), "--docs-dir", str(docs_root))
    assert out.returncode == 0, out.stderr
    assert "want ops/trouble.md:5" in out.stdout and "no such file under the docs root" in out.stdout
    assert "[line 1]" in out.stdout  # no id: the line number names the question


def test_eval_flags_expectations_outside_the_root_or_past_the_end(docs_root, tmp_path, run):
    """Trial finding: `"path": "../etc/passwd"` and `"line": 99999` were accepted silently (the
    first passed the file check because it exists, outside the root)."""
    outside = tmp_path / "outside.md"
    outside.write_text("# Elsewhere\n", encoding="utf-8")
    questions = _write(tmp_path / "q.jsonl", [
        {"id": "up", "query": PORT, "expect": [{"path": "../outside.md", "line": 1}]},
        {"id": "far", "query": PORT, "expect": [{"path": "ops/troubleshooting.md", "line": 99999}]},
        {"id": "ok", "query": PORT, "expect": [{"path": "ops/troubleshooting.md", "line": 5}]},
    ])
    out = run("--embedder", "minilm", "eval", str(questions), "--docs-dir", str(docs_root))
    assert out.returncode == 0, out.stderr
    warning = next(line for line in out.stdout.splitlines() if line.startswith("warning:"))
    assert "2 expectations can never be met" in warning
    assert "up ../outside.md:1 (outside the docs root)" in warning
    assert "far ops/troubleshooting.md:99999 (line 99999 is past the end of the file" in warning
    assert "want ops/troubleshooting.md:99999" in out.stdout  # listed among the misses with why


@pytest.mark.parametrize("content, says", [
    ('{"query": "x", "expect": [{"path": "a.md"}]}\n', "line 1 has an \"expect\" entry without"),
    ('\n{"expect": []}\n', "line 2 has no \"query\""),
    ('{"query": "x"}\n', "line 1 has no \"expect\" list"),
    ("not json\n", "line 1 is not JSON"),
    ("\n\n", "holds no question"),
])
def test_eval_bad_questions_file_is_one_actionable_line(docs_root, tmp_path, run, content, says):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content, encoding="utf-8")
    out = run("--embedder", "minilm", "eval", str(bad), "--docs-dir", str(docs_root))
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert says in out.stderr and "docs/evaluation.md" in out.stderr
    assert not (tmp_path / "eval.db").exists()  # rejected before indexing anything


def _script():
    name = "markdown_memory_eval_script_for_sets"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / "eval_retrieval.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_harness_scores_several_sets_with_the_package_scoring(docs_root, tmp_path, capsys):
    from markdown_memory import evaluation

    script = _script()
    assert script.summarise is evaluation.summarise  # one place for the scoring
    questions = _write(tmp_path / "questions.jsonl", QUESTIONS)
    identifiers = _write(tmp_path / "ids.jsonl", QUESTIONS[1:2])
    baseline = tmp_path / "baseline.json"
    argv = ["--embedder", "none", "--db-dir", str(tmp_path / "dbs"),
            "--set", f"guide={docs_root}:{questions}", "--set", f"ids={docs_root}:{identifiers}"]
    assert script.main([*argv, "--baseline-out", str(baseline)]) == 0
    out = capsys.readouterr().out
    assert "[guide] corpus" in out and "[ids] corpus" in out
    assert "neg flagged" in out and "high prec" in out  # the side-by-side lines
    frozen = json.loads(baseline.read_text())
    assert set(frozen["sets"]) == {"guide", "ids"}
    assert frozen["sets"]["ids"]["summary"]["overall"]["n"] == 1
    assert frozen["sets"]["guide"]["ranks"]["port"] == 0
    assert script.main([*argv, "--compare", str(baseline)]) == 0
    # a baseline better than the run fails the comparison, per set
    frozen["sets"]["ids"]["summary"]["overall"]["top1"] = 2.5
    baseline.write_text(json.dumps(frozen))
    assert script.main([*argv, "--compare", str(baseline)]) == 1
    assert "ids: overall.top1" in capsys.readouterr().err


def test_harness_folders_keep_questions_whose_expected_paths_are_written_otherwise(docs_root, tmp_path, capsys):
    """Trial finding: `eval_retrieval.py --folders ops` compared expected paths as written, so a
    question expecting `./ops/troubleshooting.md` (or its absolute path) was dropped, though
    scoring normalises it (``evaluation.normalised_path``). Both now name the path the same way."""
    script = _script()
    hit = {"query": PORT, "type": "howto", "lang": "en"}
    questions = _write(tmp_path / "questions.jsonl", [
        {"id": "plain", **hit, "expect": [{"path": "ops/troubleshooting.md", "line": 5}]},
        {"id": "dot", **hit, "expect": [{"path": "./ops/troubleshooting.md", "line": 5}]},
        {"id": "abs", **hit, "expect": [{"path": str(docs_root / "ops" / "troubleshooting.md"), "line": 5}]},
        {"id": "other", **hit, "expect": [{"path": "install.md", "line": 23}]},  # not under ops: left out
    ])
    out_json = tmp_path / "out.json"
    argv = ["--embedder", "none", "--db-dir", str(tmp_path / "dbs"), "--folders", "./ops/",
            "--set", f"guide={docs_root}:{questions}", "--json-out", str(out_json)]
    assert script.main(argv) == 0
    assert "3 queries" in capsys.readouterr().out
    ranks = {r["id"]: r["rank"] for r in json.loads(out_json.read_text())["queries"]}
    assert ranks == {"plain": 0, "dot": 0, "abs": 0}


def test_eval_normalises_expected_paths_and_flags_front_matter_and_unindexed_files(tmp_path, cli_main):
    """Trial finding: `"path": "./front.md"` and an absolute path inside the root counted right
    hits as misses; a line in front matter and a file the index left out (over the size limit)
    were accepted silently; p95 came out below p50."""
    root = tmp_path / "nd"
    root.mkdir()
    (root / "front.md").write_text("---\ntitle: Front Matter Doc\n---\n\n## Deploying the widget\n\n"
                                   "Run widgetctl deploy to ship the widget.\n", encoding="utf-8")
    (root / "big.md").write_text("# Big\n\n" + "widgetctl padding words. " * 100 + "\n", encoding="utf-8")
    query = "widgetctl deploy"
    questions = _write(tmp_path / "q.jsonl", [
        {"id": "dot", "query": query, "expect": [{"path": "./front.md", "line": 7}]},
        {"id": "abs", "query": query, "expect": [{"path": str(root / "front.md"), "line": 7}]},
        {"id": "fm", "query": query, "expect": [{"path": "front.md", "line": 2}]},
        {"id": "big", "query": query, "expect": [{"path": "big.md", "line": 3}]},
    ])
    env: dict[str, str | None] = {"MARKDOWN_MEMORY_MAX_FILE_MB": "0.001"}
    out = cli_main("--db", str(tmp_path / "e.db"), "--embedder", "none", "eval", str(questions),
                   "--docs-dir", str(root), "--json", env=env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    by_id = {r["id"]: r for r in data["results"]}
    assert by_id["dot"]["rank"] == 0 and by_id["abs"]["rank"] == 0
    assert by_id["dot"]["expect"][0]["path"] == by_id["abs"]["expect"][0]["path"] == "front.md"
    assert by_id["dot"]["unusable"] == by_id["abs"]["unusable"] == {}
    assert "in no section" in by_id["fm"]["unusable"]["front.md:2"]
    assert "not indexed" in by_id["big"]["unusable"]["big.md:3"]
    latency = data["summary"]["all_queries"]
    assert latency["p95_ms"] >= latency["p50_ms"]
    text = cli_main("--db", str(tmp_path / "e.db"), "--embedder", "none", "eval", str(questions),
                    "--docs-dir", str(root), env=env)
    assert "warning: 2 expectations can never be met" in text.stdout


def test_eval_percentiles_are_one_method():
    from markdown_memory.evaluation import percentile

    assert percentile([10.0, 1.0], 0.5) == 5.5 and percentile([10.0, 1.0], 0.95) == pytest.approx(9.55)
    assert percentile([3.0], 0.95) == 3.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 100.0], 0.5) == 3.0


def test_eval_reads_expected_paths_as_read_does_and_names_why_a_file_is_not_indexed(tmp_path, cli_main):
    """Trial: "Home.MD" and "home.md#caching" (which `read` reads) were "no such file";
    "../t4v/home.md" was "not indexed" (read: outside the root); a .txt file and an ignored one
    were sent to "the index run's warnings" that said nothing; a BOM refused the questions file."""
    root = tmp_path / "t4v"
    root.mkdir()
    (root / "home.md").write_text("# Home\n\n## Caching\n\nThe widget cache keeps entries for an hour.\n",
                                  encoding="utf-8")
    (root / "notes.txt").write_text("widget cache notes\n", encoding="utf-8")
    (root / "secret.md").write_text("# Secret\n\nwidget cache secret\n", encoding="utf-8")
    (root / ".gitignore").write_text("secret.md\n", encoding="utf-8")
    query = "widget cache"
    questions = tmp_path / "q.jsonl"
    _write(questions, [
        {"id": "case", "query": query, "expect": [{"path": "Home.MD", "line": 5}]},
        {"id": "frag", "query": query, "expect": [{"path": "home.md#caching", "line": 5}]},
        {"id": "up", "query": query, "expect": [{"path": "../t4v/home.md", "line": 5}]},
        {"id": "txt", "query": query, "expect": [{"path": "notes.txt", "line": 1}]},
        {"id": "ign", "query": query, "expect": [{"path": "secret.md", "line": 3}]},
    ])
    questions.write_bytes(b"\xef\xbb\xbf" + questions.read_bytes())  # a UTF-8 BOM, as some editors write
    out = cli_main("--db", str(tmp_path / "e.db"), "--embedder", "none", "eval", str(questions),
                   "--docs-dir", str(root), "--json")
    assert out.returncode == 0, out.stderr
    by_id = {r["id"]: r for r in json.loads(out.stdout)["results"]}
    for name in ("case", "frag"):
        assert by_id[name]["expect"][0]["path"] == "home.md" and by_id[name]["unusable"] == {}, by_id[name]
        assert by_id[name]["rank"] == 0
    assert by_id["up"]["unusable"] == {"../t4v/home.md:5": "outside the docs root"}
    assert "not a Markdown extension (.md" in by_id["txt"]["unusable"]["notes.txt:1"]
    assert "excluded by an ignore file" in by_id["ign"]["unusable"]["secret.md:3"]
    assert not any("warnings say why" in why for r in by_id.values() for why in r["unusable"].values())


def test_eval_puts_each_miss_in_its_bucket(docs_root, tmp_path, run):
    """The miss taxonomy a user reads: the port question labelled with another section of the
    troubleshooting page (its first hit) is a wrong-section miss, in --json and in the report."""
    sibling = {"id": "sibling", "query": PORT, "type": "howto",
               "expect": [{"path": "ops/troubleshooting.md", "line": 10, "heading": "Uploads are slow"}]}
    questions = _write(tmp_path / "questions.jsonl", QUESTIONS + [sibling])
    data = json.loads(run("--embedder", "minilm", "eval", str(questions), "--docs-dir", str(docs_root),
                          "--json").stdout)
    by_id = {r["id"]: r for r in data["results"]}
    assert by_id["port"]["bucket"] is None and by_id["bread"]["bucket"] is None
    assert by_id["sibling"]["bucket"] == "wrong_section"
    assert by_id["wrong"]["bucket"] in ("lower", "file_no_section", "file_absent")  # another file came first
    buckets = data["summary"]["overall"]["buckets"]
    assert sum(buckets.values()) == 2 and buckets["wrong_section"] == 1
    assert data["summary"]["howto"]["buckets"]["wrong_section"] == 1
    assert data["misses"]["wrong_section"] == ["sibling"] and data["misses"][by_id["wrong"]["bucket"]] == ["wrong"]
    out = run("--embedder", "minilm", "eval", str(questions), "--docs-dir", str(docs_root)).stdout
    overall = next(line for line in out.splitlines() if line.startswith("overall") and len(line.split()) == 7)
    assert overall.split()[1:4] == ["4", "2"] + [str(buckets["file_absent"])]
    listed = out[out.index("-- wrong_section (1):"):]
    assert listed.splitlines()[1].startswith("[sibling howto]")


def test_harness_prints_the_buckets_and_writes_runs_compare_runs_reads(docs_root, tmp_path, capsys):
    """scripts/eval_retrieval.py: the bucket table per set, the overall buckets side by side, each
    miss under its bucket with --show-misses; its --json-out is what scripts/compare_runs.py
    pairs (a run against itself: no difference)."""
    script = _script()
    sibling = {"id": "sibling", "query": PORT, "type": "howto",
               "expect": [{"path": "ops/troubleshooting.md", "line": 10}]}
    questions = _write(tmp_path / "questions.jsonl", QUESTIONS + [sibling])
    out_json = tmp_path / "run.json"
    argv = ["--embedder", "none", "--db-dir", str(tmp_path / "dbs"), "--show-misses", "--json-out", str(out_json),
            "--set", f"guide={docs_root}:{questions}", "--set", f"again={docs_root}:{questions}"]
    assert script.main(argv) == 0
    out = capsys.readouterr().out
    run = json.loads(out_json.read_text())["sets"]["guide"]
    by_bucket: dict[str, list[str]] = {}
    for q in run["queries"]:
        if q["bucket"]:
            by_bucket.setdefault(q["bucket"], []).append(q["id"])
    assert {b: ids for b, ids in run["misses"].items() if ids} == by_bucket and by_bucket
    for bucket, ids in by_bucket.items():
        assert f"-- {bucket} ({len(ids)}):" in out
        assert run["summary"]["overall"]["buckets"][bucket] == len(ids)
    assert any(line.startswith("wrong_sectio") for line in out.splitlines())  # the side-by-side rows
    spec = importlib.util.spec_from_file_location("compare_runs_from_eval_test", REPO / "scripts" / "compare_runs.py")
    compare_runs = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = compare_runs
    spec.loader.exec_module(compare_runs)
    loaded = compare_runs.load_run(out_json)
    result = compare_runs.compare([(loaded, loaded)])
    assert result["pooled"]["n"] == 8 and result["pooled"]["mrr10"]["interval"] == [0.0, 0.0]


def test_a_miss_without_a_heading_shows_no_empty_brackets(docs_root, tmp_path, run):
    """Regression (trial2): an expectation without the optional "heading" was listed as
    `want docs/advanced/proxies.md:10  ()`."""
    questions = _write(tmp_path / "q.jsonl", [{"id": "far", "query": PORT,
                                               "expect": [{"path": "ops/trouble.md", "line": 5}]}])
    out = run("--embedder", "minilm", "eval", str(questions), "--docs-dir", str(docs_root))
    assert out.returncode == 0, out.stderr
    want = next(line for line in out.stdout.splitlines() if line.strip().startswith("want "))
    assert "()" not in want and want.strip().startswith("want ops/trouble.md:5  (no such file"), want
