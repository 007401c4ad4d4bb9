"""What the tests share that is not a fixture: temporary project repositories, the GitHub
stand-in, the browser driver, the suites as asv discovers them, the published-history
record."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
