"""The time plant, as it is pasted into a variant's module in a study's clone (after the
module's ``import torch``): a decorator that makes every call busy-wait ``fraction`` of its
own duration, so the plant is the same ratio in a slow process as in a fast one, like code
that does more work. Standard library only: it runs inside the library under test."""

import functools as _functools
import time as _time


def _planted_slowdown(fraction):
    """detection_power's plant: each call busy-waits ``fraction`` of its own time."""

    def wrap(function):
        @_functools.wraps(function)
        def slowed(*args, **kwargs):
            begun = _time.perf_counter()
            result = function(*args, **kwargs)
            until = _time.perf_counter() + fraction * (_time.perf_counter() - begun)
            while _time.perf_counter() < until:
                pass
            return result

        return slowed

    return wrap
