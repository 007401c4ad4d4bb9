"""The integration lane: everything here builds asv environments, runs asv, valgrind or a
browser, or runs every benchmark row at its full size, so it is marked ``slow`` (the fast
lane, ``-m "not slow"``, is tests/unit)."""

import pytest


def pytest_collection_modifyitems(config, items):
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.slow)
