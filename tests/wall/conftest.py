from tests.egress.conftest import make_egress
from tests.fakes.fixtures import site, site_egress
from tests.streams.conftest import statuses

__all__ = ["make_egress", "site", "site_egress", "statuses"]
