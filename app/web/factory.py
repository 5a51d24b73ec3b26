"""The app factory: settings in, a Litestar app out. Every process makes one."""

from __future__ import annotations

import logging

from litestar import Litestar, Router
from litestar.config.csrf import CSRFConfig
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.plugins.jinja import JinjaTemplateEngine as Jinja
from litestar.static_files import create_static_files_router
from litestar.template import TemplateConfig

from app.accounts.middleware import AuthenticationMiddleware
from app.core import config, db, redis
from app.core.config import Settings
from app.live.fanout import fanout
from app.live.hub import hub
from app.web import mcp, routes
from app.web.errors import EXCEPTION_HANDLERS
from app.web.form_pages import redirect_gets_to_form_pages
from app.web.head import answer_head_as_get
from app.web.health import healthz, readyz
from app.web.odd_input import refuse_odd_path_values
from app.web.security import add_security_headers, csp_report
from app.web.templating import STATIC_DIR, make_environment, use_environment

log = logging.getLogger(__name__)

# The API's one way in: `Authorization: Bearer <token>` (app.accounts.middleware).
API_SECURITY_SCHEME = "bearer"


def create_app(settings: Settings, *, manage_connections: bool = True) -> Litestar:
    """The web app. Tests that hold their own connections pass manage_connections=False."""
    config.activate(settings)
    env = make_environment()
    routes.configure_templates(env, settings)
    use_environment(env)

    async def start() -> None:
        if manage_connections:
            await db.connect(settings)
            await redis.connect_redis(settings)
            await routes.start(settings)

    async def stop() -> None:
        await fanout.close()
        await hub.close()
        if manage_connections:
            await routes.stop()
            await redis.disconnect_redis()
            await db.disconnect()

    mcp.configure(settings)
    pages = Router(path="/", route_handlers=routes.page_handlers(), include_in_schema=False)
    redirect_gets_to_form_pages(pages)
    api = Router(
        path="/api/v1",
        route_handlers=routes.api_handlers(),
        tags=["api"],
        security=[{API_SECURITY_SCHEME: []}],
    )
    app = Litestar(
        route_handlers=[
            pages,
            api,
            mcp.mcp_endpoint,
            healthz,
            readyz,
            csp_report,
            create_static_files_router(
                path="/static",
                directories=[STATIC_DIR],
                include_in_schema=False,
                cache_control=None,
            ),
        ],
        on_startup=[start],
        lifespan=[mcp.running],
        on_shutdown=[stop],
        middleware=[AuthenticationMiddleware()],
        before_request=refuse_odd_path_values,
        before_send=[add_security_headers],
        csrf_config=CSRFConfig(
            secret=settings.secret_key.get_secret_value(),
            cookie_name="nd_csrf",
            cookie_secure=settings.secure_cookies,
            cookie_samesite="lax",
            header_name="x-csrf-token",
            exclude=["^/api/", "^/mcp", "^/csp-report$"],
        ),
        template_config=TemplateConfig(engine=Jinja.from_environment(env)),
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        openapi_config=OpenAPIConfig(
            title="Newsdesk API",
            version="1",
            path="/api/v1/schema",
            render_plugins=[JsonRenderPlugin()],
            components=Components(
                security_schemes={
                    API_SECURITY_SCHEME: SecurityScheme(
                        type="http",
                        scheme="bearer",
                        description="An API token from Settings > API tokens",
                    )
                }
            ),
        ),
        dependencies={"settings": Provide(lambda: settings, sync_to_thread=False)},
        debug=False,
    )
    answer_head_as_get(app)
    return app
