"""Pages of accounts: sign-in, workspaces, settings, members, API tokens."""

from __future__ import annotations

from typing import Annotated, Any
from zoneinfo import available_timezones

from litestar import Controller, Request, get, patch, post
from litestar.background_tasks import BackgroundTask
from litestar.datastructures import Cookie
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Template

from app.accounts import queries, recovery, services
from app.accounts.forms import (
    DeleteAccountForm,
    DeleteWorkspaceForm,
    ForgotForm,
    InviteForm,
    LoginForm,
    NewPasswordForm,
    PasswordForm,
    ProfileForm,
    RenameWorkspaceForm,
    RoleForm,
    SignUpForm,
    SwitchForm,
    TokenForm,
    WorkspaceForm,
)
from app.accounts.guards import allows, member_of, signed_in, viewer_of
from app.accounts.middleware import SESSION_COOKIE
from app.accounts.roles import GRANTABLE_ROLES, Permission, Role, may_manage
from app.accounts.throttle import (
    DEVICE_COOKIE,
    DEVICE_DAYS,
    device_cookie_value,
    minutes_of,
    reset_requests_wait,
)
from app.accounts.types import AccountError, NewSession, Viewer, WorkspaceView
from app.core.config import active
from app.core.i18n import LANGUAGES, N_, _, format_number, ngettext
from app.web.form_pages import FORM_PAGE
from app.web.pages import Form, page, same_site_path


def _session_cookie(value: str, *, max_age: int) -> Cookie:
    return Cookie(
        key=SESSION_COOKIE,
        value=value,
        path="/",
        httponly=True,
        secure=active().secure_cookies,
        samesite="lax",
        max_age=max_age,
    )


def _device_cookie(user_id: int) -> Cookie:
    """Marks this browser as one `user_id` signed in with (app.accounts.throttle)."""
    return Cookie(
        key=DEVICE_COOKIE,
        value=device_cookie_value(user_id),
        path="/login",
        httponly=True,
        secure=active().secure_cookies,
        samesite="lax",
        max_age=DEVICE_DAYS * 86400,
    )


def signed_in_response(session: NewSession, target: str) -> Redirect:
    return Redirect(
        target,
        status_code=303,
        cookies=[
            _session_cookie(session.token, max_age=active().session_days * 86400),
            _device_cookie(session.user_id),
        ],
    )


def _client_ip(request: Request) -> str:
    return request.client.host if request.client else "unknown"


class SessionController(Controller):
    @get("/login")
    async def login_page(
        self,
        request: Request,
        next: FromQuery[str] = "/",
        reset: FromQuery[str] = "",
        deleted: FromQuery[str] = "",
    ) -> Template | Redirect:
        if request.scope.get("user"):
            return Redirect(same_site_path(next), status_code=303)
        notice = None
        if reset == "done":
            notice = _("Your password is changed. Sign in with it.")
        elif deleted:
            notice = _("Your account is deleted.")
        return await page(
            request, "accounts/login.html", form=LoginForm(next=next), error=None, notice=notice
        )

    @post("/login")
    async def login(
        self, request: Request, data: Annotated[LoginForm, Form]
    ) -> Template | Redirect:
        old = request.cookies.get(SESSION_COOKIE)
        try:
            session = await services.sign_in(
                data.email,
                data.password,
                ip=_client_ip(request),
                user_agent=request.headers.get("user-agent", ""),
                device=request.cookies.get(DEVICE_COOKIE),
            )
        except AccountError as error:
            data.password = ""
            return await page(
                request,
                "accounts/login.html",
                form=data,
                error=error.message,
                notice=None,
                status_code=error.status,
            )
        if old:  # rotation: the pre-login session, if any, ends here
            await services.end_session(old)
        return signed_in_response(session, same_site_path(data.next))

    @post("/logout")
    async def logout(self, request: Request) -> Redirect:
        token = request.cookies.get(SESSION_COOKIE)
        if token:
            await services.end_session(token)
        return Redirect("/login", status_code=303, cookies=[_session_cookie("", max_age=0)])


async def _may_create_workspace(user_id: int) -> bool:
    roles = [w.role for w in await queries.workspaces_of(user_id)]
    return services.may_create_workspace(roles, viewers_allowed=active().viewers_create_workspaces)


class WorkspaceController(Controller):
    guards = [signed_in]

    async def _welcome(self, request: Request, *, status_code: int = 200, **extra: Any) -> Template:
        context: dict[str, Any] = {
            "form": WorkspaceForm(),
            "error": None,
            "error_field": None,
            "may_create": await _may_create_workspace(viewer_of(request).user_id),
        }
        context.update(extra)
        return await page(request, "accounts/welcome.html", status_code=status_code, **context)

    @get("/welcome")
    async def welcome(self, request: Request) -> Template | Redirect:
        viewer = viewer_of(request)
        if viewer.workspace_id is None and viewer.session_id:
            # Their session's workspace went away (removed, or never chosen):
            # take them to one they still belong to rather than say they have none.
            preferred = await queries.preferred_workspace(viewer.user_id)
            if preferred is not None:
                await services.switch_workspace(viewer.session_id, viewer.user_id, preferred)
                return Redirect("/", status_code=303)
        return await self._welcome(request)

    @post("/workspaces", opt={FORM_PAGE: "/welcome"})
    async def create(
        self, request: Request, data: Annotated[WorkspaceForm, Form]
    ) -> Template | Redirect:
        viewer = viewer_of(request)
        try:
            workspace_id = await services.create_own_workspace(data.name, viewer.user_id)
        except AccountError as error:
            return await self._welcome(
                request,
                status_code=error.status,
                form=data,
                error=error.message,
                error_field=error.field,
            )
        if viewer.session_id:
            await services.switch_workspace(viewer.session_id, viewer.user_id, workspace_id)
        return Redirect("/", status_code=303)

    @post("/workspaces/{workspace_id:int}/leave", opt={FORM_PAGE: "/settings"})
    async def leave(self, request: Request, workspace_id: FromPath[int]) -> Template | Redirect:
        viewer = viewer_of(request)
        try:
            await services.remove_member(workspace_id, viewer.user_id, actor_user_id=viewer.user_id)
        except AccountError as error:
            return await _profile_refused(request, error)
        # Left the workspace they work in: /welcome takes them to another one they have.
        target = "/welcome" if workspace_id == viewer.workspace_id else "/settings"
        return Redirect(target, status_code=303)

    @post("/workspaces/switch")
    async def switch(self, request: Request, data: Annotated[SwitchForm, Form]) -> Redirect:
        viewer = viewer_of(request)
        if viewer.session_id:
            await services.switch_workspace(viewer.session_id, viewer.user_id, data.workspace_id)
        return Redirect(same_site_path(data.next), status_code=303)


async def _profile_context(request: Request, **overrides: Any) -> dict[str, Any]:
    viewer = viewer_of(request)
    context: dict[str, Any] = {
        "may_create": await _may_create_workspace(viewer.user_id),
        "profile": ProfileForm(viewer.display_name, viewer.locale, viewer.time_zone),
        "languages": LANGUAGES,
        "time_zones": sorted(available_timezones()),
        "error": None,
        "error_field": None,
        "saved": request.query_params.get("saved"),
    }
    context.update(overrides)
    return context


async def _profile_refused(request: Request, error: AccountError, **overrides: Any) -> Template:
    """The profile page again with what a form on it was refused for, beside its field."""
    context = await _profile_context(
        request, error=error.message, error_field=error.field, **overrides
    )
    return await page(
        request, "accounts/profile.html", section="settings", status_code=error.status, **context
    )


class SettingsController(Controller):
    path = "/settings"
    guards = [signed_in]

    @get("/")
    async def profile(self, request: Request) -> Template:
        return await page(
            request, "accounts/profile.html", section="settings", **await _profile_context(request)
        )

    @post("/profile")
    async def save_profile(
        self, request: Request, data: Annotated[ProfileForm, Form]
    ) -> Template | Redirect:
        viewer = viewer_of(request)
        try:
            await services.update_profile(
                viewer.user_id, data.display_name, data.locale, data.time_zone
            )
        except AccountError as error:
            return await _profile_refused(request, error, profile=data)
        return Redirect("/settings?saved=profile", status_code=303)

    @post("/password")
    async def change_password(
        self, request: Request, data: Annotated[PasswordForm, Form]
    ) -> Template | Redirect:
        viewer = viewer_of(request)
        try:
            await services.change_password(
                viewer.user_id,
                data.current_password,
                data.new_password,
                keep_session_id=viewer.session_id,
            )
        except AccountError as error:
            return await _profile_refused(request, error)
        return Redirect("/settings?saved=password", status_code=303)

    @post("/account/delete")
    async def delete_account(
        self, request: Request, data: Annotated[DeleteAccountForm, Form]
    ) -> Template | Redirect:
        viewer = viewer_of(request)
        try:
            await services.delete_account(viewer.user_id, data.delete_password)
        except AccountError as error:
            return await _profile_refused(request, error)
        return Redirect(
            "/login?deleted=1", status_code=303, cookies=[_session_cookie("", max_age=0)]
        )


def _role(viewer: Viewer) -> Role:
    return viewer.role or Role.VIEWER


class MembersController(Controller):
    path = "/settings/members"
    guards = [allows(Permission.MEMBERS_MANAGE)]

    async def _render(self, request: Request, *, status_code: int = 200, **extra: Any) -> Template:
        viewer, workspace_id = member_of(request)
        members = await queries.members_of(workspace_id)
        actor = _role(viewer)
        context: dict[str, Any] = {
            "members": members,
            # The rows this person may change: an admin leaves owners to the owners.
            "manageable": {m.user_id for m in members if may_manage(actor, m.role)},
            "invitations": await queries.open_invitations(workspace_id),
            "roles": list(Role) if actor == Role.OWNER else list(GRANTABLE_ROLES),
            "grantable": GRANTABLE_ROLES,
            "invite": InviteForm(),
            "invite_link": None,
            "reset": None,
            "invite_error": None,
            "invite_error_field": None,
            "error": None,
        }
        context.update(extra)
        return await page(
            request, "accounts/members.html", section="settings", status_code=status_code, **context
        )

    @get("/")
    async def members(self, request: Request) -> Template:
        return await self._render(request)

    @post("/invite")
    async def invite(self, request: Request, data: Annotated[InviteForm, Form]) -> Template:
        viewer, workspace_id = member_of(request)
        try:
            token = await services.invite(
                workspace_id, data.role, email=data.email, actor_user_id=viewer.user_id
            )
        except AccountError as error:
            return await self._render(
                request,
                status_code=error.status,
                invite=data,
                invite_error=error.message,
                invite_error_field=error.field,
            )
        link = f"{active().base_url}/invite/{token}"
        return await self._render(request, invite_link=link)

    @post("/{user_id:int}/role")
    async def change_role(
        self, request: Request, user_id: FromPath[int], data: Annotated[RoleForm, Form]
    ) -> Template | Redirect:
        viewer, workspace_id = member_of(request)
        try:
            role = Role(data.role)
        except ValueError:
            return await self._render(request, status_code=400, error=_("Choose one of the roles."))
        try:
            await services.change_role(
                workspace_id, user_id, role, actor_user_id=viewer.user_id, actor_role=_role(viewer)
            )
        except AccountError as error:
            return await self._render(request, status_code=error.status, error=error.message)
        # Stepping down to editor or viewer, one may not see Members any more.
        stepped_down = user_id == viewer.user_id and role not in (Role.OWNER, Role.ADMIN)
        return Redirect("/settings" if stepped_down else "/settings/members", status_code=303)

    @post("/{user_id:int}/remove")
    async def remove(self, request: Request, user_id: FromPath[int]) -> Template | Redirect:
        viewer, workspace_id = member_of(request)
        try:
            await services.remove_member(
                workspace_id, user_id, actor_user_id=viewer.user_id, actor_role=_role(viewer)
            )
        except AccountError as error:
            return await self._render(request, status_code=error.status, error=error.message)
        return Redirect("/settings/members", status_code=303)

    @post("/{user_id:int}/reset-link")
    async def reset_link(self, request: Request, user_id: FromPath[int]) -> Template:
        viewer, workspace_id = member_of(request)
        try:
            shown = await recovery.issue_member_reset(
                workspace_id,
                user_id,
                actor_user_id=viewer.user_id,
                actor_role=_role(viewer),
            )
        except AccountError as error:
            return await self._render(request, status_code=error.status, error=error.message)
        return await self._render(request, reset=shown)

    @post("/invitations/{invitation_id:int}/revoke")
    async def revoke_invitation(self, request: Request, invitation_id: FromPath[int]) -> Redirect:
        viewer, workspace_id = member_of(request)
        await services.revoke_invitation(workspace_id, invitation_id, actor_user_id=viewer.user_id)
        return Redirect("/settings/members", status_code=303)


class WorkspaceSettingsController(Controller):
    """The workspace itself: its name, and deleting it (owners only)."""

    path = "/settings/workspace"
    guards = [allows(Permission.WORKSPACE_DELETE)]

    async def _render(self, request: Request, *, status_code: int = 200, **extra: Any) -> Template:
        context: dict[str, Any] = {
            "rename": RenameWorkspaceForm(name=viewer_of(request).workspace_name),
            "form": DeleteWorkspaceForm(),
            "error": None,
            "error_field": None,
            "saved": request.query_params.get("saved"),
        }
        context.update(extra)
        return await page(
            request,
            "accounts/workspace.html",
            section="settings",
            status_code=status_code,
            **context,
        )

    @get("/")
    async def show(self, request: Request) -> Template:
        return await self._render(request)

    @post("/name", guards=[allows(Permission.WORKSPACE_RENAME)])
    async def rename(
        self, request: Request, data: Annotated[RenameWorkspaceForm, Form]
    ) -> Template | Redirect:
        viewer, workspace_id = member_of(request)
        try:
            await services.rename_workspace(workspace_id, data.name, actor_user_id=viewer.user_id)
        except AccountError as error:
            return await self._render(
                request,
                status_code=error.status,
                rename=data,
                error=error.message,
                error_field=error.field,
            )
        return Redirect("/settings/workspace?saved=name", status_code=303)

    @post("/delete")
    async def delete(
        self, request: Request, data: Annotated[DeleteWorkspaceForm, Form]
    ) -> Template | Redirect:
        viewer, workspace_id = member_of(request)
        try:
            await services.delete_workspace(
                workspace_id, data.confirm_name, actor_user_id=viewer.user_id
            )
        except AccountError as error:
            return await self._render(
                request,
                status_code=error.status,
                form=data,
                error=error.message,
                error_field=error.field,
            )
        # Their session works in no workspace now: /welcome takes them to another one.
        return Redirect("/welcome", status_code=303)


class TokensController(Controller):
    path = "/settings/tokens"
    guards = [allows(Permission.DRAFT_VIEW)]

    async def _render(self, request: Request, *, status_code: int = 200, **extra: Any) -> Template:
        viewer, workspace_id = member_of(request)
        context: dict[str, Any] = {
            "tokens": await queries.api_tokens_of(workspace_id, viewer.user_id),
            "mcp_url": f"{active().base_url}/mcp",
            "form": TokenForm(),
            "new_token": None,
            "error": None,
            "error_field": None,
        }
        context.update(extra)
        return await page(
            request, "accounts/tokens.html", section="settings", status_code=status_code, **context
        )

    @get("/")
    async def tokens(self, request: Request) -> Template:
        return await self._render(request)

    @post("/")
    async def create(self, request: Request, data: Annotated[TokenForm, Form]) -> Template:
        viewer, workspace_id = member_of(request)
        try:
            token = await services.issue_api_token(workspace_id, viewer.user_id, data.name)
        except AccountError as error:
            return await self._render(
                request, status_code=400, form=data, error=error.message, error_field=error.field
            )
        return await self._render(request, new_token=token)

    @post("/{token_id:int}/revoke")
    async def revoke(self, request: Request, token_id: FromPath[int]) -> Redirect:
        viewer, workspace_id = member_of(request)
        await services.revoke_api_token(workspace_id, viewer.user_id, token_id)
        return Redirect("/settings/tokens", status_code=303)


class InvitationController(Controller):
    path = "/invite/{token:str}"

    async def _render(
        self, request: Request, token: str, *, status_code: int = 200, **extra: Any
    ) -> Template:
        found = await queries.invitation_by_token(token)
        viewer = request.scope.get("user")
        member = (
            found is not None
            and isinstance(viewer, Viewer)
            and any(w.id == found.workspace_id for w in await queries.workspaces_of(viewer.user_id))
        )
        context: dict[str, Any] = {
            "token": token,
            "workspace_name": found.workspace_name if found else "",
            "role": found.role if found else None,
            "valid": found is not None,
            # Joining would spend the link and change nothing: say whom it is for instead.
            "member_already": services.already_member_message() if member else None,
            # The address the invitation was made for, when the admin gave one.
            "form": SignUpForm(email=found.email if found else ""),
            "error": None,
            "error_field": None,
        }
        context.update(extra)
        return await page(
            request, "accounts/invite.html", status_code=status_code if found else 404, **context
        )

    @get("/")
    async def show(self, request: Request, token: FromPath[str]) -> Template:
        return await self._render(request, token)

    @post("/accept", guards=[signed_in])
    async def accept(self, request: Request, token: FromPath[str]) -> Redirect | Template:
        viewer = viewer_of(request)
        try:
            workspace_id = await services.accept_invitation(token, viewer.user_id)
        except AccountError as error:
            return await self._render(request, token, status_code=error.status, error=error.message)
        if viewer.session_id:
            await services.switch_workspace(viewer.session_id, viewer.user_id, workspace_id)
        return Redirect("/", status_code=303)

    @post("/signup")
    async def sign_up(
        self, request: Request, token: FromPath[str], data: Annotated[SignUpForm, Form]
    ) -> Redirect | Template:
        if await queries.invitation_by_token(token) is None:
            return await self._render(request, token)
        try:
            user_id = await services.create_user(data.email, data.display_name, data.password)
            await services.accept_invitation(token, user_id)
        except AccountError as error:
            data.password = ""
            return await self._render(
                request,
                token,
                status_code=error.status,
                form=data,
                error=error.message,
                error_field=error.field,
            )
        session = await services.start_session(
            user_id, user_agent=request.headers.get("user-agent", "")
        )
        return signed_in_response(session, "/")


class ForgotController(Controller):
    """ "Forgot password?": a mailed link when mail is set up, else where to ask."""

    path = "/forgot"

    async def _render(self, request: Request, *, status_code: int = 200, **extra: Any) -> Template:
        context: dict[str, Any] = {
            "mail": active().mail_configured,
            "form": ForgotForm(),
            "sent": False,
            "error": None,
        }
        context.update(extra)
        return await page(request, "accounts/forgot.html", status_code=status_code, **context)

    @get("/")
    async def show(self, request: Request) -> Template:
        return await self._render(request)

    @post("/")
    async def send(self, request: Request, data: Annotated[ForgotForm, Form]) -> Template:
        if not active().mail_configured:
            return await self._render(request)
        if not data.email.strip():
            return await self._render(
                request, status_code=400, form=data, error=_("Enter the email you sign in with.")
            )
        wait = await reset_requests_wait(_client_ip(request))
        if wait:
            minutes = minutes_of(wait)
            message = ngettext(
                "Too many requests from your network. Try again in %(num)s minute.",
                "Too many requests from your network. Try again in %(num)s minutes.",
                minutes,
            ) % {"num": format_number(minutes)}
            return await self._render(request, status_code=429, form=data, error=message)
        response = await self._render(request, form=data, sent=True)
        # After the answer: the same words and the same time whether the account exists.
        response.background = BackgroundTask(recovery.mail_reset_link, data.email)
        return response


class ResetController(Controller):
    """The page a reset link opens: choose a new password."""

    path = "/reset/{token:str}"

    async def _render(
        self, request: Request, token: str, *, status_code: int = 200, error: str | None = None
    ) -> Template:
        email = await recovery.email_for_reset(token)
        return await page(
            request,
            "accounts/reset.html",
            status_code=status_code if email else 404,
            token=token,
            email=email,
            error=error,
        )

    @get("/")
    async def show(self, request: Request, token: FromPath[str]) -> Template:
        return await self._render(request, token)

    @post("/")
    async def reset(
        self, request: Request, token: FromPath[str], data: Annotated[NewPasswordForm, Form]
    ) -> Template | Redirect:
        try:
            await recovery.reset_password(token, data.password, ip=_client_ip(request))
        except AccountError as error:
            return await self._render(request, token, status_code=error.status, error=error.message)
        # Every session ended, this browser's too: sign in with the new password.
        return Redirect(
            "/login?reset=done", status_code=303, cookies=[_session_cookie("", max_age=0)]
        )


class MeApi(Controller):
    """The API's view of the token's owner."""

    path = "/me"
    guards = [allows(Permission.DRAFT_VIEW)]

    @get("/")
    async def me(self, request: Request) -> dict[str, Any]:
        viewer = viewer_of(request)
        return {
            "user": {
                "id": viewer.user_id,
                "email": viewer.email,
                "display_name": viewer.display_name,
            },
            "workspace": {"id": viewer.workspace_id, "name": viewer.workspace_name},
            "role": viewer.role,
            "permissions": sorted(viewer.permissions),
        }


def _workspace_json(workspace: WorkspaceView) -> dict[str, Any]:
    return {
        "id": workspace.id,
        "name": workspace.name,
        "created_at": workspace.created_at.isoformat(),
        "members": workspace.members,
    }


class WorkspaceApi(Controller):
    """The workspace the token works in: every member reads it, its owners rename it."""

    path = "/workspace"
    guards = [allows(Permission.DRAFT_VIEW)]

    async def _current(self, request: Request) -> dict[str, Any]:
        _viewer, workspace_id = member_of(request)
        found = await queries.workspace(workspace_id)
        if found is None:  # deleted since the token was read
            raise NotFoundException()
        return _workspace_json(found)

    @get(
        "/",
        summary="The workspace",
        description="The token's workspace: `id`, `name`, `created_at` and `members` (how"
        " many people belong to it). Every member may read it.",
    )
    async def show(self, request: Request) -> dict[str, Any]:
        return await self._current(request)

    @patch(
        "/",
        guards=[allows(Permission.WORKSPACE_RENAME, N_("Only an owner can rename the workspace."))],
        summary="Rename the workspace",
        description='Rename the workspace, owners only: `{"name": "..."}`, 1-120 characters'
        " once surrounding spaces are trimmed and inner ones folded. Answers the workspace as"
        " GET does and `renamed`: false when it had the name already (no error, nothing"
        " changes, nothing is recorded). Every member's open pages show the new name at once;"
        " Activity records who renamed it from what. 400 with `detail` saying what is wrong"
        " (empty, too long, not a string, not JSON); 403 for admins, editors and viewers.",
    )
    async def rename(self, request: Request, data: RenameWorkspaceForm) -> dict[str, Any]:
        viewer, workspace_id = member_of(request)
        renamed = await services.rename_workspace(
            workspace_id, data.name, actor_user_id=viewer.user_id
        )
        return {**await self._current(request), "renamed": renamed}


PAGE_HANDLERS = [
    SessionController,
    WorkspaceController,
    SettingsController,
    MembersController,
    WorkspaceSettingsController,
    TokensController,
    InvitationController,
    ForgotController,
    ResetController,
]
API_HANDLERS = [MeApi, WorkspaceApi]
