"""How soon a watched edit is searchable, and how long a mass change takes to be indexed.

    python scripts/bench_watch.py [--corpus ../shared/eval-corpus] [--embedder none minilm]
                                  [--edits 20] [--mass 2000] [--mode auto|native|poll] [--json-out F]

Per embedder: copy the corpus, index it, start the file watcher (``service/watch.py``) on a
background engine (the service's setup), then, quiet and with two CPU-bound processes running
(``python -c "while True: pass"`` x2), ``--edits`` times: append a unique word to a random file
and time until ``Engine.search`` finds it (the search itself refreshes nothing: only the watcher
makes the word findable). Reports p50/p95/max in seconds (target p95 <= 2 s).
Then, quiet: adds copies of the corpus until the root holds ``--mass`` files more than it had
("mass add"), touches ``--mass`` files ("mass touch", what a ``git checkout`` of unchanged
content does), appends a word to ``--mass`` files ("mass edit"), and times each until the index
is current: no run going, the stat probe finds nothing changed, no passage waits for a vector,
and the last file's word is searchable; the watcher's counts (refreshes, index runs) say the
work stayed bounded.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from markdown_memory.config import Settings  # noqa: E402
from markdown_memory.engine import Engine  # noqa: E402
from markdown_memory.files.freshness import stale_paths  # noqa: E402
from markdown_memory.models import SearchRequest  # noqa: E402
from markdown_memory.service import watch  # noqa: E402
from markdown_memory.service.watch import Watcher, start_watching  # noqa: E402

DEADLINE = 600.0  # seconds: a measurement that takes longer is reported as a failure


def default_corpus() -> Path:
    for base in (ROOT.parent, ROOT.parent.parent):
        if (base / "shared" / "eval-corpus").is_dir():
            return base / "shared" / "eval-corpus"
    return ROOT / "tests" / "fixtures" / "guide"


@contextmanager
def cpu_load(processes: int) -> Iterator[None]:
    """``processes`` busy-looping Python processes for the duration (ended by their pids)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def found(engine: Engine, word: str) -> bool:
    return any("keyword" in h.matched_by for h in engine.search(SearchRequest(word, top_k=5)).results)


def wait(check: Callable[[], bool], step: float = 0.02) -> float | None:
    """Seconds until ``check()`` holds (polled every ``step`` s), None past ``DEADLINE``."""
    start = time.perf_counter()
    while not check():
        if time.perf_counter() - start > DEADLINE:
            return None
        time.sleep(step)
    return time.perf_counter() - start


def edit_latencies(engine: Engine, files: list[Path], edits: int, rng: random.Random) -> list[float | None]:
    out: list[float | None] = []
    for _ in range(edits):
        word = "w" + uuid.uuid4().hex[:12]
        target = rng.choice(files)
        with target.open("a", encoding="utf-8") as fh:
            fh.write(f"\n\nThe {word} marker.\n")
        out.append(wait(lambda w=word: found(engine, w)))
        time.sleep(rng.uniform(0.3, 0.8))  # an agent's pace, and no two edits in one group
    return out


def summary(values: list[float | None]) -> dict[str, float | int | None]:
    ok = sorted(v for v in values if v is not None)
    if not ok:
        return {"p50_s": None, "p95_s": None, "max_s": None, "missed": len(values)}
    p95 = ok[min(len(ok) - 1, max(0, round(0.95 * len(ok)) - 1))]
    return {"p50_s": round(statistics.median(ok), 3), "p95_s": round(p95, 3), "max_s": round(ok[-1], 3),
            "missed": len(values) - len(ok)}


def current(engine: Engine, word: str | None) -> bool:
    """The index is current: no run, nothing stale, no pending vector, ``word`` searchable."""
    if engine.indexing or stale_paths(engine.store, engine.root, engine.settings.exclude):
        return False
    if engine.settings.embedder != "none" and engine.status().counts.pending_vectors:
        return False
    return word is None or found(engine, word)


def mass_phase(engine: Engine, watcher: Watcher, name: str, change: Callable[[], str | None]) -> dict[str, object]:
    before = asdict(watcher.stats)
    started = time.perf_counter()
    word = change()
    changed_s = time.perf_counter() - started
    searchable = None if word is None else wait(lambda: found(engine, word), step=0.1)
    seconds = wait(lambda: current(engine, word), step=0.1)
    after = asdict(watcher.stats)
    delta = {k: after[k] - before[k] for k in after}
    result: dict[str, object] = {
        "change_s": round(changed_s, 2),
        "last_word_searchable_s": None if searchable is None else round(changed_s + searchable, 2),
        "until_current_s": None if seconds is None else round(changed_s + (searchable or 0) + seconds, 2),
        "watcher": delta}
    print(f"  {name}: writing took {changed_s:.2f} s, last file's word searchable after "
          f"{result['last_word_searchable_s']} s, index current (vectors too) after "
          f"{result['until_current_s']} s; watcher: {delta}", flush=True)
    return result


def mass_changes(engine: Engine, watcher: Watcher, root: Path, mass: int) -> dict[str, object]:
    files = sorted(root.rglob("*.md"))
    originals = list(files)
    out: dict[str, object] = {}

    def add() -> str | None:
        n = 0
        while n < mass:
            for src in originals:
                if n >= mass:
                    break
                dest = root / "copies" / str(n // len(originals)) / src.relative_to(root)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest)
                n += 1
        return None

    out["mass_add"] = mass_phase(engine, watcher, f"mass add of {mass} files", add)
    files = sorted(root.rglob("*.md"))[:mass]

    def touch() -> str | None:
        now = time.time()
        for f in files:
            os.utime(f, (now, now))
        return None

    out["mass_touch"] = mass_phase(engine, watcher, f"mass touch of {len(files)} files", touch)

    def edit() -> str | None:
        word = "m" + uuid.uuid4().hex[:12]
        last = "l" + uuid.uuid4().hex[:12]  # only in the file an index run (sorted walk) reaches last
        for f in files:
            with f.open("a", encoding="utf-8") as fh:
                fh.write(f"\n\nThe {word} marker{f' and {last}' if f == files[-1] else ''}.\n")
        return last

    out["mass_edit"] = mass_phase(engine, watcher, f"mass edit of {len(files)} files", edit)
    return out


def run_embedder(embedder: str, corpus: Path, args: argparse.Namespace) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="mm-bench-watch-") as scratch:
        tmp = Path(scratch) if args.workdir is None else args.workdir / embedder
        root = tmp / "docs"
        shutil.rmtree(root / "copies", ignore_errors=True)  # a kept workdir: the last run's mass add
        shutil.copytree(corpus, root, dirs_exist_ok=True)  # and its edits undone (same text: vectors kept)
        engine = Engine(Settings.load(root, tmp / "index.db", embedder), background=True)
        started = time.perf_counter()
        engine.index()
        print(f"{embedder}: indexed {corpus} in {time.perf_counter() - started:.1f} s", flush=True)
        watcher = start_watching(engine, mode=args.mode)
        watcher.ready.wait(30)
        result: dict[str, object] = {"polling": watcher.polling}
        files = sorted(root.rglob("*.md"))
        rng = random.Random(28)
        try:
            for load in args.load:
                with cpu_load(load):
                    lat = edit_latencies(engine, files, args.edits, rng)
                stats = summary(lat)
                label = "quiet" if load == 0 else f"{load} busy processes"
                print(f"  edit -> searchable ({label}, {'polling' if watcher.polling else 'native'}): "
                      f"p50 {stats['p50_s']} s, p95 {stats['p95_s']} s, max {stats['max_s']} s, "
                      f"missed {stats['missed']}/{len(lat)}", flush=True)
                result[f"edit_load{load}"] = stats
            wait(lambda: not engine.indexing)
            if args.mass:
                result.update(mass_changes(engine, watcher, root, args.mass))
        finally:
            watcher.stop()
            engine.shutdown()
            engine.close()
        return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--embedder", nargs="+", default=["none", "minilm"])
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--load", type=int, nargs="+", default=[0, 2], help="busy processes per round")
    parser.add_argument("--mass", type=int, default=2000, help="files of the mass changes (0: none)")
    parser.add_argument("--mode", choices=("auto", "native", "poll"), default="auto")
    parser.add_argument("--vector-delay", type=float, default=watch.VECTOR_DELAY_SECONDS,
                        help="seconds from a refresh to the run that embeds its text")
    parser.add_argument("--workdir", type=Path, help="keep the copy and its index here between runs "
                        "(the next run re-indexes only what the last one changed)")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    watch.VECTOR_DELAY_SECONDS = args.vector_delay
    results = {"corpus": str(args.corpus), "cpus": os.cpu_count(), "mode": args.mode}
    for embedder in args.embedder:
        results[embedder] = run_embedder(embedder, args.corpus, args)
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
