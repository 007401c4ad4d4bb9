"""A stand-in for GitHub's REST API on 127.0.0.1: the calls the tooling makes (labels,
issues and their comments, a pull request), answered as GitHub answers them, every
request recorded. The tools reach it exactly as they reach GitHub, through
``GITHUB_API_URL``, ``GITHUB_REPOSITORY`` and ``GITHUB_TOKEN``."""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field

REPOSITORY = "tensorops/tensorops"
TOKEN = "standin-token"
# Who the token is, as GitHub shows the author of what a workflow's token writes.
BOT = {"login": "github-actions[bot]", "type": "Bot"}


@dataclass
class Recorded:
    method: str
    path: str
    query: dict
    body: dict | None


@dataclass
class GitHubStandIn:
    requests: list[Recorded] = field(default_factory=list)
    issues: dict[int, dict] = field(default_factory=dict)
    comments: dict[int, dict] = field(default_factory=dict)  # id -> comment (with "issue")
    labels: dict[str, dict] = field(default_factory=dict)
    pulls: dict[int, dict] = field(default_factory=dict)
    pull_files: dict[int, list[dict]] = field(default_factory=dict)  # PR -> files it changes
    failures: list[tuple[int, str]] = field(default_factory=list)  # answered before anything
    url: str = ""

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "GITHUB_API_URL": self.url,
            "GITHUB_REPOSITORY": REPOSITORY,
            "GITHUB_TOKEN": TOKEN,
            **extra,
        }

    def label(self, name: str) -> dict | None:
        """A label by name, as GitHub matches them: whatever the case."""
        return next((v for k, v in self.labels.items() if k.lower() == name.lower()), None)

    def comment_by(self, number: int, login: str, body: str) -> int:
        """A comment on issue or PR ``number`` written by someone else."""
        comment_id = 1000 + len(self.comments)
        self.comments[comment_id] = {
            "id": comment_id,
            "body": body,
            "issue": number,
            "user": {"login": login, "type": "User"},
        }
        return comment_id

    def calls(self, method: str, pattern: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and re.fullmatch(pattern, r.path)]

    # ------------------------------------------------------------ the API

    def answer(self, method: str, path: str, query: dict, body: dict | None):
        prefix = f"/repos/{REPOSITORY}"
        if not path.startswith(prefix):
            return 404, {"message": "Not Found"}
        route = path[len(prefix) :]
        if method == "GET" and route == "/labels":
            return 200, self.page(list(self.labels.values()), query)
        if method == "POST" and route == "/labels":
            if self.label(body["name"]) is not None:  # names are unique whatever the case
                return 422, {"message": "Validation Failed", "errors": [{"code": "already_exists"}]}
            self.labels[body["name"]] = dict(body)
            return 201, body
        if method == "GET" and route == "/issues":
            wanted = query.get("labels")
            state = query.get("state", "open")
            found = [
                issue
                for issue in self.issues.values()
                if (state == "all" or issue["state"] == state)
                and (not wanted or wanted.lower() in [lb["name"].lower() for lb in issue["labels"]])
            ]
            return 200, self.page(found, query)
        if method == "POST" and route == "/issues":
            number = len(self.issues) + len(self.pulls) + 1
            labels = [self.label(name) or {"name": name} for name in body.get("labels", [])]
            self.issues[number] = {
                "number": number,
                "title": body["title"],
                "body": body.get("body", ""),
                "state": "open",
                "labels": [{"name": label["name"]} for label in labels],
                "user": dict(BOT),
            }
            return 201, self.issues[number]
        if matched := re.fullmatch(r"/issues/(\d+)", route):
            issue = self.issues.get(int(matched.group(1)))
            if issue is None:
                return 404, {"message": "Not Found"}
            if method == "PATCH":
                issue.update({k: v for k, v in body.items() if k in ("title", "body", "state")})
            return 200, issue
        if matched := re.fullmatch(r"/issues/(\d+)/comments", route):
            number = int(matched.group(1))
            if number not in self.issues and number not in self.pulls:
                return 404, {"message": "Not Found"}
            if method == "POST":
                comment_id = 1000 + len(self.comments)
                self.comments[comment_id] = {
                    "id": comment_id,
                    "body": body["body"],
                    "issue": number,
                    "user": dict(BOT),
                }
                return 201, self.comments[comment_id]
            mine = [c for c in self.comments.values() if c["issue"] == number]
            return 200, self.page(mine, query)
        if matched := re.fullmatch(r"/issues/comments/(\d+)", route):
            comment = self.comments.get(int(matched.group(1)))
            if comment is None:
                return 404, {"message": "Not Found"}
            if comment.get("user", BOT) != BOT:  # a workflow's token edits its own only
                return 403, {"message": "Resource not accessible by integration"}
            comment["body"] = body["body"]
            return 200, comment
        if method == "GET" and (matched := re.fullmatch(r"/pulls/(\d+)/files", route)):
            number = int(matched.group(1))
            if number not in self.pulls:
                return 404, {"message": "Not Found"}
            return 200, self.page(self.pull_files.get(number, []), query)
        if method == "GET" and (matched := re.fullmatch(r"/pulls/(\d+)", route)):
            pull = self.pulls.get(int(matched.group(1)))
            return (200, pull) if pull else (404, {"message": "Not Found"})
        return 404, {"message": "Not Found"}

    @staticmethod
    def page(items: list, query: dict) -> list:
        size, number = int(query.get("per_page", 30)), int(query.get("page", 1))
        return items[(number - 1) * size : number * size]


@contextlib.contextmanager
def github_standin() -> Iterator[GitHubStandIn]:
    standin = GitHubStandIn()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def handle_any(self) -> None:
            parsed = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(parsed.query))
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            standin.requests.append(Recorded(self.command, parsed.path, query, body))
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                status, answer = 401, {"message": "Bad credentials"}
            elif standin.failures:
                status, message = standin.failures.pop(0)
                answer = {"message": message}
            else:
                status, answer = standin.answer(self.command, parsed.path, query, body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = handle_any

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    standin.url = f"http://127.0.0.1:{server.server_port}"
    try:
        yield standin
    finally:
        server.shutdown()
        server.server_close()
