"""Messages people read leave the code through `_()`, so extraction finds them and German has them.

Every error that ends up in front of a person (a form's message, an API error's `detail`, an
import's or an analysis' stored reason) is raised with its text. A string literal there, or an
f-string, is English for everybody: this scans the code for such raises and mail subjects.
The command line (app/__main__.py) included: it speaks the operator's language (LANG).
"""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORD = re.compile(r"[A-Za-z]{2,}")
# Exceptions and calls whose text a person reads, and where that text is (argument index).
PEOPLE_READ = {
    "AccountError": 0,
    "AnalysisFailed": 0,
    "ArxivApiError": 0,
    "BadFilter": 0,
    "BudgetExhausted": 0,
    "ClientException": 0,
    "CredentialRejected": 0,
    "CursorInvalid": 0,
    "ExtractionError": 2,
    "FilterError": 0,
    "HTTPException": 0,
    "ImportRefused": 0,
    "InvalidUrl": 0,
    "MediaRefused": 1,
    "NotAFeed": 0,
    "NotAuthorizedException": 0,
    "NotFound": 0,
    "NotFoundException": 0,
    "PermissionDeniedException": 0,
    "ProviderError": 0,
    "ProviderRefused": 0,
    "Rejected": 0,
    "SpecInvalid": 0,
    "StreamsError": 0,
    "TopicError": 0,
    "ValidationException": 0,
    "send_mail": 1,
}
TEXT_KEYWORDS = {"detail", "message", "reason", "subject", "text"}


def _literal(node: ast.expr) -> bool:
    """English typed into the code: a string with words, or an f-string or %-format of one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and WORD.search(node.value) is not None
    if isinstance(node, ast.JoinedStr):
        return any(_literal(part) for part in node.values if isinstance(part, ast.Constant))
    if isinstance(node, ast.BinOp):
        return _literal(node.left)
    if isinstance(node, ast.Dict):  # SpecInvalid({"field": "message"})
        return any(_literal(value) for value in node.values)
    if isinstance(node, ast.IfExp):
        return _literal(node.body) or _literal(node.orelse)
    if isinstance(node, ast.BoolOp):
        return any(_literal(value) for value in node.values)
    return False


def untranslated(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name not in PEOPLE_READ:
            continue
        index = PEOPLE_READ[name]
        texts = node.args[index : index + 1] if name != "send_mail" else node.args[1:]
        texts += [k.value for k in node.keywords if k.arg in TEXT_KEYWORDS]
        if any(_literal(text) for text in texts):
            found.append(f"line {node.lineno}: {ast.unparse(node)[:100]}")
    return found


def test_messages_people_read_go_through_gettext():
    found = {}
    for path in sorted([*(ROOT / "app").rglob("*.py"), *(ROOT / "workers").rglob("*.py")]):
        if hits := untranslated(path.read_text()):
            found[str(path.relative_to(ROOT))] = hits
    assert found == {}, "wrap these messages in _() and translate them (make messages)"


def test_the_scan_sees_literals_and_lets_translated_text_pass():
    assert untranslated('raise AccountError("Nope.")')
    assert untranslated('raise ClientException(detail=f"Bad {x}")')
    assert untranslated('raise ExtractionError(url, Failure.X, "The site is gone.")')
    assert untranslated('raise SpecInvalid({"title": "Give it a title."})')
    assert untranslated('await send_mail(to, "Hello", text)')
    assert untranslated('raise AnalysisFailed("Failed: %s" % why)')
    assert not untranslated('raise AccountError(_("Nope."), field="email")')
    assert not untranslated('raise ClientException(detail=f"{error.field}: {error.message}")')
    assert not untranslated('raise TopicError(_("Keep it under %(n)s.") % {"n": n})')
    assert not untranslated("raise NotFoundException()")
