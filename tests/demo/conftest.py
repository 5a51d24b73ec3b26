"""The demo tests reach demo servers through a real Egress (tests/egress fixtures)."""

from tests.egress.conftest import make_egress

__all__ = ["make_egress"]
