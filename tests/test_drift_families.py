"""Names the code builds or its parser generates (docs/drift.md#when-a-name-is-held): table tests
over small repositories in four languages, checked in process (code index, then the checker)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from markdown_memory.drift.check import Checker
from markdown_memory.drift.codeside import update_code_index
from markdown_memory.drift.references import section_references
from markdown_memory.store import Store

MANIFESTS = {
    "go": {"go.mod": "module example.com/shipit\n\ngo 1.22\n", "cmd/shipit/main.go": "package main\n\nfunc main() {}\n"},
    "py": {"pyproject.toml": '[project]\nname = "shipit"\n[project.scripts]\nshipit = "shipit.cli:main"\n',
           "shipit/__init__.py": ""},
    "rs": {"Cargo.toml": '[package]\nname = "shipit"\nversion = "0.1.0"\n'},
    "js": {"package.json": '{"name": "shipit", "bin": {"shipit": "bin/shipit.js"}}\n'},
}

ENV_DOC = "## Environment\n\nThe environment variables `SHIPIT_VERBOSE` and `SHIPIT_GONE_KNOB` change the output.\n"


def missing_names(tmp_path: Path, lang: str, files: dict[str, str], doc: str) -> set[str]:
    """The names of ``doc`` (one section) that ``drift`` reports missing from a repository of
    ``files`` plus ``lang``'s manifest."""
    root = tmp_path / "repo"
    for rel, text in {**MANIFESTS[lang], **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    store = Store(tmp_path / "index.db")
    try:
        update_code_index(store, root)
        checker = Checker(store, set(), root)
        refs = section_references(doc, 1, checker.owners, "docs/guide.md Guide")
        return {r.name for r in checker.missing(refs, doc)}
    finally:
        store.close()


@pytest.mark.parametrize(("lang", "files"), [
    # the prefix in a constant of one file, joined in another (Go: one package, many files)
    ("go", {"internal/env/env.go": 'package env\n\nconst taskVarPrefix = "SHIPIT_"\n',
            "internal/env/get.go": 'package env\n\nimport "os"\n\nfunc Get(key string) string {\n'
                                   '\treturn os.Getenv(taskVarPrefix + key)\n}\n',
            "internal/flags/flags.go": 'package flags\n\nvar verbose = env.Get("VERBOSE")\n'}),
    # the same within one file
    ("go", {"env.go": 'package shipit\n\nconst keyPrefix string = "SHIPIT_"\n\nfunc get(k string) string '
                      '{ return os.Getenv(keyPrefix + k) }\n\nvar v = get("VERBOSE")\n'}),
    # Python: a module constant, an f-string in another module, the field a setting
    ("py", {"shipit/const.py": 'SETTING_PREFIX = "SHIPIT_"\n',
            "shipit/settings.py": "from .const import SETTING_PREFIX\n\n\ndef read(name):\n"
                                  '    return os.environ.get(f"{SETTING_PREFIX}{name.upper()}")\n\n\nverbose = read("verbose")\n'}),
    # Rust: a &str constant in format!
    ("rs", {"src/env.rs": 'const PREFIX: &str = "SHIPIT_";\n\nfn var(key: &str) -> Option<String> '
                          '{ std::env::var(format!("{PREFIX}{key}")).ok() }\n\nfn v() { var("VERBOSE"); }\n'}),
    # JavaScript: a template literal
    ("js", {"lib/env.js": "const PREFIX = 'SHIPIT_';\nconst get = key => process.env[`${PREFIX}${key}`];\n"
                          "module.exports = { verbose: get('VERBOSE') };\n"}),
])
def test_a_prefix_held_in_a_constant_and_joined_builds_its_family(tmp_path: Path, lang: str,
                                                                 files: dict[str, str]) -> None:
    """`SHIPIT_VERBOSE` is built (the constant prefix + the literal rest): held. `SHIPIT_GONE_KNOB`
    has no rest the code names: still flagged, the family vouches for settings only."""
    assert missing_names(tmp_path, lang, files, ENV_DOC) == {"SHIPIT_GONE_KNOB"}


@pytest.mark.parametrize(("lang", "files"), [
    # a constant prefix only tested against names builds none
    ("go", {"env.go": 'package shipit\n\nconst keyPrefix = "SHIPIT_"\n\nfunc own(k string) bool '
                      '{ return strings.HasPrefix(k, keyPrefix) }\n\nvar v = "VERBOSE"\n'}),
    ("py", {"shipit/env.py": 'SETTING_PREFIX = "SHIPIT_"\n\n\ndef own(k):\n    return k.startswith(SETTING_PREFIX)\n\n\nV = "VERBOSE"\n'}),
    # a constant-like name joined in another file, but no constant of that name holds a prefix
    ("go", {"a.go": 'package shipit\n\nconst keyPrefix = "SHIPIT_"\n', "b.go": 'package shipit\n\nvar x = OTHER_PREFIX + "VERBOSE"\n'}),
])
def test_a_constant_prefix_that_builds_nothing_vouches_for_nothing(tmp_path: Path, lang: str,
                                                                  files: dict[str, str]) -> None:
    assert missing_names(tmp_path, lang, files, ENV_DOC) == {"SHIPIT_VERBOSE", "SHIPIT_GONE_KNOB"}


NEG_DOC = "## Options\n\n```sh\nshipit --no-dry-run --dry-run\nshipit --help-all\n```\n"


@pytest.mark.parametrize(("lang", "files", "expected"), [
    # yargs-parser, minimist, mri negate every option: `--no-dry-run` exists when `dry-run` does
    ("js", {"lib/cli.js": "const parse = require('yargs-parser');\nconst o = parse(argv);\nif (o['dry-run']) {}\n"},
     {"--help-all"}),
    ("js", {"lib/cli.js": "import minimist from 'minimist';\nconst o = minimist(argv);\nif (o['dry-run']) {}\n"},
     {"--help-all"}),
    # a parser that does not: `--no-dry-run` is checked as itself
    ("js", {"lib/cli.js": "import { Command } from 'commander';\nprogram.option('--dry-run');\n"},
     {"--no-dry-run", "--help-all"}),
    # typer makes `--x/--no-x` for every bool option
    ("py", {"shipit/cli.py": "import typer\n\n\ndef main(dry_run: bool = typer.Option(False)):\n    pass\n"},
     {"--help-all"}),
    # plumbum's cli.Application adds `--help-all` to every program
    ("py", {"shipit/cli.py": 'from plumbum import cli\n\n\nclass App(cli.Application):\n'
                             '    dry_run = cli.Flag(["--dry-run"])\n'}, {"--no-dry-run"}),
])
def test_options_the_parser_generates_are_held(tmp_path: Path, lang: str, files: dict[str, str],
                                               expected: set[str]) -> None:
    assert missing_names(tmp_path, lang, files, NEG_DOC) == expected


def test_a_camel_case_flag_is_held_by_its_identifier_a_one_word_flag_is_not(tmp_path: Path) -> None:
    """`--preReleaseId` (yargs' camelCase) is as specific as a hyphenated name: the identifier
    holds it. A one-word `--json` still needs an option-shaped spelling (`import json` is not one)."""
    files = {"lib/config.js": "const json = require('./json');\nconst { preReleaseId } = options;\n"}
    doc = "## Pre-releases\n\n```sh\nshipit --preReleaseId=beta --json\n```\n"
    assert missing_names(tmp_path, "js", files, doc) == {"--json"}


def test_a_readers_example_variable_before_an_own_command_is_a_placeholder(tmp_path: Path) -> None:
    """`SHIPIT_VARIABLE=a-value shipit run` shows how to pass any variable; a real one is checked."""
    doc = "## Variables\n\n```sh\n$ SHIPIT_VARIABLE=a-value shipit run\n$ SHIPIT_LEGACY=1 shipit run\n```\n"
    assert missing_names(tmp_path, "py", {"shipit/cli.py": "def main():\n    pass\n"}, doc) == {"SHIPIT_LEGACY"}
