"""What each kind of event says, which filter it belongs to, and where it links.

Pure: no I/O. UI text is marked here and translated where it is shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.accounts.roles import ROLE_NAMES
from app.core.i18n import format_number, gettext, ngettext
from app.events.types import EventView


def N_(message: str) -> str:
    """Mark a message for extraction; translated where it is shown."""
    return message


EVENT_VERBS: dict[str, str] = {
    "workspace_created": N_("created the workspace"),
    "workspace_renamed": N_("renamed the workspace to"),
    "signed_in": N_("signed in"),
    "member_added": N_("added a member"),
    "member_removed": N_("removed a member"),
    "member_role_changed": N_("changed a member's role"),
    "account_deleted": N_("deleted their account"),
    "invitation_created": N_("created an invitation"),
    "invitation_revoked": N_("revoked an invitation"),
    "password_reset_issued": N_("issued a password reset link for"),
    "api_token_created": N_("created an API token"),
    "api_token_revoked": N_("revoked an API token"),
    "article_processed": N_("queued an article for analysis"),
    "article_deleted": N_("moved an article to the trash"),
    "article_restored": N_("restored an article from the trash"),
    "article_purged": N_("deleted an article for good"),
    "article_import_started": N_("started an import of"),
    "article_import_finished": N_("finished an import of"),
    "topic_created": N_("created the topic"),
    "topic_renamed": N_("renamed a topic to"),
    "topic_deleted": N_("deleted the topic"),
    "topic_source_added": N_("added a source to the topic"),
    "topic_source_removed": N_("removed a source from the topic"),
    "topic_run_finished": N_("finished a run of the topic"),
}

# The Activity page's filters: a name in the address, a label, the kinds it shows.
FILTERS: dict[str, tuple[str, frozenset[str]]] = {
    "articles": (
        N_("Articles"),
        frozenset(
            {
                "article_deleted",
                "article_restored",
                "article_purged",
                "article_import_started",
                "article_import_finished",
            }
        ),
    ),
    "topics": (
        N_("Topics"),
        frozenset(k for k in EVENT_VERBS if k.startswith("topic_")),
    ),
    "people": (
        N_("People"),
        frozenset(
            {
                "workspace_created",
                "workspace_renamed",
                "signed_in",
                "member_added",
                "member_removed",
                "account_deleted",
                "member_role_changed",
                "invitation_created",
                "invitation_revoked",
                "password_reset_issued",
            }
        ),
    ),
    "tokens": (N_("API tokens"), frozenset({"api_token_created", "api_token_revoked"})),
}

# One row per stored article would drown everything else: a topic run's
# `topic_run_finished` stands for its articles on the page. The API still
# lists every event (ask for kind=article_processed).
PAGE_KINDS: frozenset[str] = frozenset(EVENT_VERBS) - {"article_processed"}


class UnknownKind(ValueError):
    """A filter that is neither a filter name nor an event kind."""


def kinds_of(name: str, *, page: bool) -> frozenset[str] | None:
    """The kinds a filter shows (None: no filter on the API); UnknownKind if none matches."""
    name = name.strip()
    if not name:
        return PAGE_KINDS if page else None
    if name in FILTERS:
        return FILTERS[name][1]
    if name in EVENT_VERBS:
        return frozenset({name})
    raise UnknownKind(name)


def verb(kind: str) -> str:
    return gettext(EVENT_VERBS.get(kind, kind.replace("_", " ")))


@dataclass(frozen=True)
class Sentence:
    """One Activity row in words: `actor verb: subject · detail`, the subject maybe linked."""

    actor: str
    verb: str
    subject: str  # third-party text: rendered with the `third_party` filter
    detail: str
    link: str  # "" when the subject has no page (or not one this viewer may see)


# A member added or removed by themselves: they accepted an invitation, or left.
SELF_VERBS: dict[str, str] = {"member_added": N_("joined"), "member_removed": N_("left")}


def _by_themselves(event: EventView) -> bool:
    if event.kind not in SELF_VERBS or event.actor_user_id is None:
        return False
    user_id = event.data.get("user_id")
    if user_id is not None:
        return bool(user_id == event.actor_user_id)
    return event.subject == event.actor  # rows recorded before user_id was kept


def _import_detail(data: dict[str, Any]) -> str:
    """ "12 saved, 3 duplicates, 1 failed" for a finished import."""
    saved = int(data.get("saved", 0))
    duplicates = int(data.get("duplicates", 0))
    failed = int(data.get("errors", 0))
    # ngettext spelled out each time: extraction records the plural pair only from a call.
    parts = [ngettext("%(n)s saved", "%(n)s saved", saved) % {"n": format_number(saved)}]
    if duplicates:
        parts.append(
            ngettext("%(n)s duplicate", "%(n)s duplicates", duplicates)
            % {"n": format_number(duplicates)}
        )
    if failed:
        parts.append(
            ngettext("%(n)s failed", "%(n)s failed", failed) % {"n": format_number(failed)}
        )
    return ", ".join(parts)


# Events about a role: the row says which one ("changed a member's role: Ada · viewer").
ROLE_KINDS = frozenset({"member_added", "member_role_changed", "invitation_created"})


def _detail(event: EventView) -> str:
    if event.kind == "article_import_finished":
        return _import_detail(event.data)
    if event.kind in ROLE_KINDS and event.data.get("role") in ROLE_NAMES:
        return gettext(event.data["role"])
    if event.kind != "topic_run_finished":
        return ""
    new = int(event.data.get("new", 0))
    failed = int(event.data.get("failures", 0))
    text = ngettext("%(n)s new article", "%(n)s new articles", new) % {"n": format_number(new)}
    if failed:
        text += ", " + ngettext("%(n)s failed", "%(n)s failed", failed) % {
            "n": format_number(failed)
        }
    if event.data.get("status") == "failed":
        text = gettext("the run failed")
    return text


# "People" events about no one member: nothing on the members page to go to.
NO_MEMBER_KINDS = frozenset({"signed_in", "workspace_created", "workspace_renamed"})


def _link(event: EventView, *, can_manage_members: bool, viewer_user_id: int) -> str:
    data = event.data
    if event.gone:  # purged, deleted: its page would only say "not found"
        return ""
    if "article_id" in data:
        return f"/articles/{data['article_id']}"
    if event.kind.startswith("article_import_") and "job_id" in data:
        return f"/articles/import/{data['job_id']}"
    if event.kind.startswith("topic_") and "topic_id" in data:
        return f"/topics/{data['topic_id']}"
    if event.kind in FILTERS["people"][1] and event.kind not in NO_MEMBER_KINDS:
        return "/settings/members" if can_manage_members else ""
    if event.kind.startswith("api_token_") and event.actor_user_id == viewer_user_id:
        return "/settings/tokens"
    return ""


def import_subject(total: int) -> str:
    """An import's events' subject: its size ("1 URL", "1.234 URLs")."""
    return ngettext("%(n)s URL", "%(n)s URLs", total) % {"n": format_number(total)}


def _subject(event: EventView) -> str:
    """What the event is about. An import's size is said again in the reader's language
    (its stored subject is in the worker's, and older ones read "1 URLs")."""
    total = event.data.get("total_urls")
    if event.kind.startswith("article_import_") and isinstance(total, int):
        return import_subject(total)
    return event.subject


def sentence(event: EventView, *, can_manage_members: bool, viewer_user_id: int) -> Sentence:
    actor = event.actor or gettext("Newsdesk")
    if event.kind == "account_deleted":  # the account (the actor) is gone: the name it had
        return Sentence(event.subject, verb(event.kind), "", "", "")
    if _by_themselves(event):
        return Sentence(actor, gettext(SELF_VERBS[event.kind]), "", "", "")
    return Sentence(
        actor=actor,
        verb=verb(event.kind),
        subject=_subject(event),
        detail=_detail(event),
        link=_link(event, can_manage_members=can_manage_members, viewer_user_id=viewer_user_id),
    )
