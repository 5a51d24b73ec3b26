"""The compiled twins of the hot modules (app/safe_content/native.py).

A build is used only for the very sources it was compiled from, and the compiled
modules must build the same trees, defuse to the same markup and render the same
HTML as the pure ones on the hostile corpus, the builder shapes and random tag soup.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.safe_content import from_html, guard, native, render_html, to_json
from tests.safe_content.hostile_corpus import CASES
from tests.safe_content.test_one_pass import BASE, SHAPES, SOUP

ROOT = Path(__file__).resolve().parents[2]


def _write_build(native_dir: Path, digest: str) -> None:
    build = native_dir / "b1"
    build.mkdir(parents=True)
    for name in native.COMPILED:
        (build / f"{name}.so").write_bytes(b"")
    extensions = {name: f"{name}.so" for name in native.COMPILED}
    manifest = {"digest": digest, "dir": "b1", "extensions": extensions}
    (native_dir / "manifest.json").write_text(json.dumps(manifest))


def test_a_build_of_other_sources_is_never_loaded(tmp_path: Path) -> None:
    _write_build(tmp_path / "stale", "a digest of yesterday's sources")
    assert native.current_extensions(tmp_path / "stale") is None
    assert native.load(tmp_path / "stale") is native.ACTIVE  # nothing new was loaded
    _write_build(tmp_path / "current", native.source_digest())
    assert native.current_extensions(tmp_path / "current") is not None


def test_an_edit_to_any_module_of_the_package_makes_a_build_stale(tmp_path: Path) -> None:
    for path in native.PACKAGE_DIR.glob("*.py"):
        shutil.copy(path, tmp_path / path.name)
    assert native.source_digest(tmp_path) == native.source_digest()
    with (tmp_path / "ast.py").open("a") as ast_file:  # not compiled, but compiled code uses it
        ast_file.write("\n")
    assert native.source_digest(tmp_path) != native.source_digest()


def _run_pure(code: str) -> str:
    """What `code` prints in a fresh interpreter that was asked for the pure modules."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, native.PURE_ENV: "1"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_pure_python_can_be_asked_for() -> None:
    code = "import app.safe_content as s; print(s.native.ACTIVE, s.html_builder.__file__)"
    out = _run_pure(code)
    assert out.split() == ["False", str(native.PACKAGE_DIR / "html_builder.py")]


def _corpus() -> list[str]:
    big = "".join(SHAPES + SOUP[:50]) * 3  # over the guard's threshold: defused first
    return [case.html for case in CASES] + SHAPES + SOUP + [big]


def _fingerprints() -> list[str]:
    """Per input: a digest of its tree, its rendering and its defused markup."""
    out = []
    for html in _corpus():
        doc = from_html(html, base_url=BASE)
        both = to_json(doc) + render_html(doc).encode() + guard.defuse(html).encode()
        out.append(hashlib.sha256(both).hexdigest())
    return out


def test_compiled_and_pure_modules_give_the_same_results() -> None:
    if not native.ACTIVE:
        pytest.skip("no compiled build of these sources (scripts/setup.sh makes one)")
    code = (
        "import json; from tests.safe_content.test_native import _fingerprints; "
        "import app.safe_content as s; assert not s.native.ACTIVE; print(json.dumps(_fingerprints()))"
    )
    pure = _run_pure(code)
    compiled = _fingerprints()
    corpus = _corpus()
    differ = [corpus[i][:200] for i, (a, b) in enumerate(zip(compiled, json.loads(pure))) if a != b]
    assert differ == []
