"""scripts/mutation.py: mutants are applied by text, to a copy, and scored honestly."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def mutation():
    """The script, imported as a module."""
    spec = importlib.util.spec_from_file_location(
        "mutation_script", ROOT / "scripts" / "mutation.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_a_mutant_replaces_its_snippet_once(mutation):
    """Is the snippet replaced where it stands, whatever line it is on?"""
    mutant = mutation.Mutant("X1", "engine.py", "a < b", "a <= b")
    source = "def f(a, b):\n    return a < b\n"
    assert mutation.apply(source, mutant) == "def f(a, b):\n    return a <= b\n"
    moved = "# a new first line\n" + source
    assert mutation.apply(moved, mutant) == moved.replace("a < b", "a <= b")


@pytest.mark.parametrize("source", ["return a > b\n", "a < b\na < b\n"])
def test_a_missing_or_repeated_snippet_is_stale(mutation, source):
    """Is a snippet found zero or two times left alone (stale), not guessed at?"""
    assert (
        mutation.apply(source, mutation.Mutant("X1", "engine.py", "a < b", "")) is None
    )


def test_the_mutant_list_is_well_formed(mutation):
    """Does every mutant have a unique id, a module with tests, and a real change?"""
    ids = [m.id for m in mutation.MUTANTS]
    assert len(ids) == len(set(ids)) >= 83
    for m in mutation.MUTANTS:
        assert m.module in mutation.TESTS, m.id
        assert m.before and m.before != m.after, m.id
    assert mutation.module_of("problems/kinds.py") == "problems"
    assert mutation.module_of("problems/kinds/qkv.py") == "problems"
    assert mutation.module_of("grading/grader.py") == "grading"
    assert mutation.module_of("services/reviews.py") == "reviews"


CORE = {"engine", "parsing", "bank", "grading", "problems", "scheduling"}


def test_every_live_core_mutant_finds_its_snippet_once(mutation):
    """After a core file is split, does each of its mutants still point at the
    file that holds its snippet (exactly once), rather than going stale?"""
    stale = []
    for m in mutation.MUTANTS:
        if m.retired or m.module not in CORE:
            continue
        path = ROOT / m.file
        if not path.is_file():
            stale.append(f"{m.id}: no file {m.file}")
        elif mutation.apply(path.read_text(encoding="utf-8"), m) is None:
            stale.append(f"{m.id}: snippet not found once in {m.file}")
    assert stale == []


def test_the_score_counts_only_mutants_that_ran(mutation):
    """Are stale and equivalent mutants left out of K/N?"""
    m = mutation.Mutant("X1", "engine.py", "a", "b")
    outcomes = [
        mutation.Outcome(m, "killed"),
        mutation.Outcome(m, "killed"),
        mutation.Outcome(m, "survived"),
        mutation.Outcome(m, "stale"),
        mutation.Outcome(m, "equivalent"),
    ]
    assert mutation.score_line(outcomes) == "score: 2/3 killed (66.7%)"


@pytest.mark.slow
def test_a_mutant_runs_on_a_copy_and_is_put_back(mutation, tmp_path):
    """Is a mutant that breaks a tested rule killed, and the file restored after?"""
    (tmp_path / "quizsvc").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "quizsvc" / "__init__.py").write_text("")
    code = tmp_path / "quizsvc" / "engine.py"
    code.write_text("def double(x):\n    return 2 * x\n")
    (tmp_path / "tests" / "test_engine.py").write_text(
        "from quizsvc.engine import double\n\n\n"
        "def test_double():\n    assert double(3) == 6\n"
    )
    breaking = mutation.Mutant("X1", "engine.py", "2 * x", "3 * x")
    outcome = mutation.run_mutant(breaking, tmp_path, timeout=120)
    assert outcome.status == "killed"
    assert "test_engine.py::test_double" in outcome.detail
    assert code.read_text() == "def double(x):\n    return 2 * x\n"
    harmless = mutation.Mutant("X2", "engine.py", "2 * x", "x + x")
    assert mutation.run_mutant(harmless, tmp_path, timeout=120).status == "survived"
    gone = mutation.Mutant("X3", "engine.py", "4 * x", "x")
    assert mutation.run_mutant(gone, tmp_path, timeout=120).status == "stale"
