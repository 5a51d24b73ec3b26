from tests.fakes.fixtures import site, site_egress
from tests.streams.conftest import statuses

__all__ = ["site", "site_egress", "statuses"]
