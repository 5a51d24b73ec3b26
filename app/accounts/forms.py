"""Form payloads of accounts' pages. Every field defaults, so a half-filled
form reaches the service (which names what is wrong) instead of a bare 400."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class LoginForm:
    email: str = ""
    password: str = ""
    next: str = ""


@dataclass
class SignUpForm:
    email: str = ""
    display_name: str = ""
    password: str = ""


@dataclass
class WorkspaceForm:
    name: str = ""


@dataclass
class SwitchForm:
    workspace_id: int = 0
    next: str = ""


@dataclass
class ProfileForm:
    display_name: str = ""
    locale: str = "en"
    time_zone: str = "UTC"


@dataclass
class PasswordForm:
    current_password: str = ""
    new_password: str = ""


@dataclass
class DeleteAccountForm:
    delete_password: str = ""  # named apart from the password forms beside it


@dataclass
class RenameWorkspaceForm:
    name: str = ""


@dataclass
class DeleteWorkspaceForm:
    confirm_name: str = ""  # the workspace's name, typed as the confirmation


@dataclass
class ForgotForm:
    email: str = ""


@dataclass
class NewPasswordForm:
    password: str = ""


@dataclass
class InviteForm:
    role: str = "editor"
    email: str = ""


@dataclass
class RoleForm:
    role: str = ""


@dataclass
class TokenForm:
    name: str = ""
