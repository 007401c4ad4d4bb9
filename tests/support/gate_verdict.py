"""A PR gate's verdict as the gate writes it (tools/_lib/verdict/row.py's JSON), for the tests
of the job that comments it: one timed row unless told otherwise."""

from __future__ import annotations

ROW = "bench_activation.Silu.time_silu('cpu', 'float32', (32, 512, 768), 'functional')"
COUNT = "bench_instructions.Silu.track_instructions('cpu', 'functional float32')"


def row(label: str = ROW, **overrides) -> dict:
    found = {
        "label": label,
        "unit": "seconds",
        "judgement": "unchanged",
        "method": "paired",
        "before": 0.001,
        "after": 0.00101,
        "slowdown": 1.01,
        "interval": [0.99, 1.03],
        "threshold": 1.15,
        "floor": None,
        "pairs": 16,
        "rounds": 2,
        "recorded": [0.001, 0.00102],
        "why": "",
    }
    return {**found, **overrides}


def verdict(**overrides) -> dict:
    found = {
        "version": 2,
        "status": 0,
        "nothing_compared": False,
        "base": "b" * 40,
        "head": "c" * 40,
        "base_name": "HEAD^1",
        "head_name": "HEAD",
        "machine": "pr-gate",
        "host": "AMD EPYC",
        "floors_runs": 0,
        "factor": 1.15,
        "count_factor": 1.01,
        "unavailable": 0,
        "rows": [row()],
        "depth": None,
        "selection": {
            "candidates": 209,
            "selected": 1,
            "source": "read from .asv/reach",
            "because": [
                {
                    "change": "src/tensorops/activation.py: silu",
                    "why": "a changed line in its body: the rows that ran it",
                    "every": False,
                    "rows": [ROW],
                }
            ],
        },
    }
    return {**found, **overrides}


def broken(path: str, value):
    """A verdict with one field (``top.NAME`` or ``row.NAME`` of its row) set to ``value``
    (``KeyError``: left out; ``"LONG"``: 5,000 characters)."""
    data = verdict()
    target, *keys = path.split(".")
    holder = data if target == "top" else data["rows"][0]
    for key in keys[:-1]:
        holder = holder[key]
    if value is KeyError:
        del holder[keys[-1]]
    elif value == "LONG":
        holder[keys[-1]] = "x" * 5000
    else:
        holder[keys[-1]] = value
    return data
