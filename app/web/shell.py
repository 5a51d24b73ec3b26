"""Pages of the shell itself: the front door and the wall's place in the nav."""

from __future__ import annotations

from litestar import Controller, get
from litestar.response import Redirect

from app.accounts.guards import allows
from app.accounts.roles import Permission


class ShellController(Controller):
    @get("/")
    async def home(self) -> Redirect:
        return Redirect("/wall", status_code=303)

    @get("/import", guards=[allows(Permission.DRAFT_VIEW)])
    async def imports(self) -> Redirect:
        return Redirect("/articles/import", status_code=303)
