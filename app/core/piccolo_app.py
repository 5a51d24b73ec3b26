"""The one Piccolo app: every domain's tables, one migration history in migrations/."""

from pathlib import Path

from piccolo.conf.apps import AppConfig

from app.core.tables import all_tables

APP_CONFIG = AppConfig(
    app_name="newsdesk",
    migrations_folder_path=Path(__file__).resolve().parents[2] / "migrations",
    table_classes=all_tables(),
)
