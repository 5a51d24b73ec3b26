"""Compiled twins of the hot modules: mypyc builds them at set-up, we load them when current.

`from_html` runs a Python loop per tag (guard, tree build) and `render_html` one per node;
mypyc compiles those same modules to C extensions about twice as fast
(docs/decisions/safe-content.md). The pure modules stay the source and the fallback:

- `scripts/setup.sh` runs `main` (`build`), which compiles a
  copy of the sources into build/safe_content-native/ (never next to the .py files) and
  records a digest of every .py file in this package.
- `load`, called first thing by the package, imports the compiled modules only when that
  digest matches the sources as they are now. Any edit, a missing compiler, another
  Python, or NEWSDESK_PURE_PYTHON=1 means the pure modules run: a stale build is never used.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

log = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).resolve().parent
NATIVE_DIR = PACKAGE_DIR.parents[1] / "build" / "safe_content-native"
# The modules compiled, in import order (a module's compiled imports come first).
COMPILED = (
    "app.safe_content.textutil",
    "app.safe_content.guard",
    "app.safe_content.html_builder",
    "app.safe_content.render",
)
PURE_ENV = "NEWSDESK_PURE_PYTHON"

ACTIVE = False  # set by `load`: the compiled modules are the ones imported


def source_digest(package_dir: Path = PACKAGE_DIR) -> str:
    """A digest of every .py file of the package and of the running Python's ABI.

    The whole package, not just the compiled modules: compiled code relies on the
    shapes of the pure modules it imports (the AST's node types above all).
    """
    digest = hashlib.sha256(sys.implementation.cache_tag.encode())
    digest.update(importlib.machinery.EXTENSION_SUFFIXES[0].encode())
    for path in sorted(package_dir.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the compiled extension of each module the current build holds."""

    def __init__(self, extensions: dict[str, Path]) -> None:
        self.extensions = extensions

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        extension = self.extensions.get(fullname)
        if extension is None:
            return None
        return importlib.util.spec_from_file_location(fullname, extension)


def current_extensions(native_dir: Path = NATIVE_DIR) -> dict[str, Path] | None:
    """The compiled extensions by module name, if a build of today's sources exists."""
    try:
        manifest = json.loads((native_dir / "manifest.json").read_text())
        if manifest["digest"] != source_digest():
            return None
        build_dir = native_dir / manifest["dir"]
        extensions = {name: build_dir / file for name, file in manifest["extensions"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if set(COMPILED) - set(extensions) or not all(p.is_file() for p in extensions.values()):
        return None
    return extensions


def load(native_dir: Path = NATIVE_DIR) -> bool:
    """Import the compiled modules if a current build exists; True when they are in use."""
    global ACTIVE
    if os.environ.get(PURE_ENV) or any(name in sys.modules for name in COMPILED):
        return ACTIVE  # asked for pure Python, or too late to choose
    extensions = current_extensions(native_dir)
    if extensions is None:
        return False
    finder = _Finder(extensions)
    sys.meta_path.insert(0, finder)
    try:
        for name in COMPILED:
            importlib.import_module(name)
    except Exception:  # a broken build must not break the app: the pure modules still work
        log.warning(
            "safe_content: compiled modules failed to load; using pure Python", exc_info=True
        )
        for name in (*extensions, *COMPILED):
            sys.modules.pop(name, None)
        return False
    finally:
        sys.meta_path.remove(finder)  # every compiled module is imported now (or dropped)
    ACTIVE = True
    return True


def build(root: Path = PACKAGE_DIR.parents[1], native_dir: Path = NATIVE_DIR) -> bool:
    """Compile COMPILED with mypyc into `native_dir`; False (and why) when it cannot."""
    if current_extensions(native_dir) is not None:
        return True
    digest = source_digest()
    with tempfile.TemporaryDirectory() as tmp:
        # A copy, so that no extension ever lands next to the sources (where a stale one
        # would shadow an edited .py file).
        shutil.copytree(
            root / "app", Path(tmp) / "app", ignore=shutil.ignore_patterns("__pycache__", "*.so")
        )
        files = [f"{name.replace('.', '/')}.py" for name in COMPILED]
        result = subprocess.run(  # noqa: S603 -- our own interpreter running mypyc on our files
            [sys.executable, "-m", "mypyc", *files],
            cwd=tmp,
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            print(result.stdout[-3000:], result.stderr[-3000:], file=sys.stderr)
            return False
        build_dir = native_dir / digest[:16]
        shutil.rmtree(build_dir, ignore_errors=True)
        build_dir.mkdir(parents=True)
        extensions = {}
        for suffix in importlib.machinery.EXTENSION_SUFFIXES[:1]:
            for built in Path(tmp).glob(f"**/*{suffix}"):
                relative = built.relative_to(tmp)
                if relative.parts[0] == "build":
                    continue  # setuptools' intermediate copies
                name = ".".join((*relative.parent.parts, built.name.removesuffix(suffix)))
                shutil.copy2(built, build_dir / built.name)
                extensions[name] = built.name
    manifest = {"digest": digest, "dir": build_dir.name, "extensions": extensions}
    partial = native_dir / f"manifest.json.{os.getpid()}"
    partial.write_text(json.dumps(manifest, indent=1))
    os.replace(partial, native_dir / "manifest.json")
    for old in native_dir.iterdir():  # earlier builds (a running process may still map one)
        if old.is_dir() and old != build_dir:
            shutil.rmtree(old, ignore_errors=True)
    return current_extensions(native_dir) is not None


def main() -> int:
    """Set-up's entry point: 0 when the compiled modules are current."""
    if build():
        print(f"setup: safe_content compiled with mypyc ({', '.join(COMPILED)})")
        return 0
    print("setup: safe_content not compiled (see above); its pure Python modules run")
    return 1
