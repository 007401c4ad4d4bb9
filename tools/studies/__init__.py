"""Measurement studies: one-off scripts whose figures are the evidence behind the
operational tools' defaults (the gate's factor, the thresholds, the launch method), run by
hand on an otherwise idle machine, never as pass/fail tests. ``python -m tools.studies.NAME``."""
