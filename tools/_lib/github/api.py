"""GitHub's REST API, the few calls the tooling makes (issues, their comments, a pull
request), through the standard Actions variables: ``GITHUB_API_URL``,
``GITHUB_REPOSITORY`` and ``GITHUB_TOKEN``. Standard library only: the jobs that talk to
GitHub install nothing.

Every failure (no token, GitHub unreachable, a 4xx or 5xx) is one ExternalFailure line
naming the call and GitHub's own message.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

from tools._lib.base.cli import BadInput, ExternalFailure

TIMEOUT_SECONDS = 30


@dataclass(frozen=True)
class GitHub:
    api: str
    repository: str
    token: str

    @classmethod
    def from_environment(cls) -> GitHub:
        """The API as a workflow step sees it."""
        repository = os.environ.get("GITHUB_REPOSITORY", "")
        token = os.environ.get("GITHUB_TOKEN", "")
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", repository):
            raise BadInput(f"GITHUB_REPOSITORY must be OWNER/REPO, got {repository!r}")
        if not token:
            raise BadInput("GITHUB_TOKEN is not set: give the step the job's token in env")
        api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
        return cls(api, repository, token)

    def call(self, method: str, path: str, body: dict | None = None, **query: str):
        """One REST call on this repository (``path`` below ``/repos/OWNER/REPO``); the
        decoded JSON answer."""
        url = f"{self.api}/repos/{self.repository}{path}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        request = urllib.request.Request(
            url,
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={
                "Accept": "application/vnd.github+json",
                "Authorization": f"Bearer {self.token}",
                "X-GitHub-Api-Version": "2022-11-28",
                "Content-Type": "application/json",
                "User-Agent": "tensorops-tools",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:
                raw = answer.read()
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")
            with contextlib.suppress(json.JSONDecodeError, AttributeError):
                detail = json.loads(detail).get("message", detail)
            raise ExternalFailure(
                f"GitHub answered {error.code} to {method} {path}: {detail[:200]}"
            ) from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ExternalFailure(
                f"GitHub unreachable at {self.api} ({method} {path}): {reason}"
            ) from None
        return json.loads(raw) if raw else None

    def all_pages(self, path: str, **query: str) -> list:
        """Every item of a paginated list."""
        items, page = [], 1
        while True:
            batch = self.call("GET", path, per_page="100", page=str(page), **query)
            items += batch
            if len(batch) < 100:
                return items
            page += 1
