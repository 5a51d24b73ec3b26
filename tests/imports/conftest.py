from tests.fakes.fixtures import site, site_egress

__all__ = ["site", "site_egress"]
