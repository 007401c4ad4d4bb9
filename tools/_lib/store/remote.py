"""How the results branch reaches its remote: the token a workflow gives, handed to git per
command and never kept, and which failed pushes are worth another try (a network that
failed for a moment, a race lost to another machine's push)."""

from __future__ import annotations

import base64
import os
import re

# A push that failed for one of these may succeed when tried again.
TRANSIENT = re.compile(
    r"could not resolve host|failed to connect|connection (reset|refused|timed out)|"
    r"operation timed out|remote end hung up unexpectedly|early eof|rpc failed|"
    r"empty reply from server|ssl_error_syscall|returned error: (5\d\d|429)",
    re.IGNORECASE,
)
# A push that lost a race to another: GitHub's words, and git's own on a local remote
# (its ref moved under the push's atomic transaction).
REJECTED = re.compile(
    r"\[rejected\]|non-fast-forward|fetch first|failed to update ref|cannot lock ref"
    r"|atomic transaction failed",
    re.I,
)


def token_for(url: str) -> str:
    """The workflow's token, for a remote reached over https (a local remote needs none)."""
    return os.environ.get("GITHUB_TOKEN", "") if url.startswith("https://") else ""


def token_environment(token: str) -> dict | None:
    """In Actions, the token as git configuration in the environment of the commands that
    reach the remote: never on a command line (``ps`` shows those) nor in .git/config."""
    if not token:
        return None
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return {
        **os.environ,
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "http.extraheader",
        "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {basic}",
    }
