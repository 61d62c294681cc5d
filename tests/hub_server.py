"""A local stand-in for the Hugging Face Hub's file endpoints (HEAD/GET resolve URLs)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHub:
    """Serves ``{repo_id: folder}`` at ``/{repo_id}/resolve/{revision}/{file}``.

    Only the revisions ``main`` and :data:`COMMIT` exist. Counts GET requests. With an
    ``upload_root``, it also takes what ``push_to_hub`` sends (create a repository,
    ask how to upload, commit files inline) and serves the pushed repositories.
    """

    def __init__(self, repos: dict[str, Path], upload_root: Path | None = None):
        self.repos = repos
        self.upload_root = upload_root
        self.downloads: list[str] = []
        self.commits: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_HEAD(self):
                self._answer(send_body=False)

            def do_GET(self):
                self._answer(send_body=True)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                parts = self.path.split("?")[0].strip("/").split("/")
                if hub.upload_root is None or parts[0] != "api":
                    return self._error(404, "RepoNotFound")
                if parts[1:] == ["repos", "create"]:
                    request = json.loads(body)
                    repo_id = f"{request['organization']}/{request['name']}"
                    hub.repos.setdefault(repo_id, hub.upload_root / repo_id.replace("/", "--"))
                    hub.repos[repo_id].mkdir(parents=True, exist_ok=True)
                    return self._json({"url": f"{hub.endpoint}/{repo_id}", "name": repo_id})
                if parts[1:] == ["validate-yaml"]:  # the model card's metadata
                    return self._json({"errors": [], "warnings": []})
                repo_id, action = "/".join(parts[2:4]), parts[4]
                if repo_id not in hub.repos:
                    return self._error(404, "RepoNotFound")
                if action == "preupload":
                    files = json.loads(body)["files"]
                    modes = [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]
                    return self._json({"files": modes, "commitOid": COMMIT})
                if action == "commit":
                    for line in body.decode().splitlines():
                        entry = json.loads(line)
                        if entry["key"] == "file":
                            target = hub.repos[repo_id] / entry["value"]["path"]
                            target.parent.mkdir(parents=True, exist_ok=True)
                            target.write_bytes(base64.b64decode(entry["value"]["content"]))
                    hub.commits.append(repo_id)
                    return self._json({"commitUrl": f"{hub.endpoint}/{repo_id}/commit/{COMMIT}", "commitOid": COMMIT})
                return self._error(404, "EntryNotFound")

            def _json(self, payload):
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _answer(self, send_body):
                parts = self.path.split("?")[0].strip("/").split("/")
                if len(parts) < 5 or parts[2] != "resolve":
                    return self._error(404, "RepoNotFound")
                repo_id, revision, filename = "/".join(parts[:2]), parts[3], "/".join(parts[4:])
                if repo_id not in hub.repos:
                    return self._error(404, "RepoNotFound")
                if revision not in ("main", COMMIT):
                    return self._error(404, "RevisionNotFound")
                path = hub.repos[repo_id] / filename
                if not path.is_file():
                    return self._error(404, "EntryNotFound")
                body = path.read_bytes()
                self.send_response(200)
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("ETag", '"' + hashlib.sha256(body).hexdigest() + '"')
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if send_body:
                    hub.downloads.append(f"{repo_id}/{filename}")
                    self.wfile.write(body)

            def _error(self, status, code):
                self.send_response(status)
                self.send_header("X-Error-Code", code)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def run_python(code: str, env: dict) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter, so huggingface_hub reads the environment.

    The interpreter gets this process's environment without its Hugging Face settings
    (``HF_*``, ``HUGGINGFACE_*``: a caller's ``HF_HUB_OFFLINE=1`` must not leak in),
    plus ``env``.
    """
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    full_env = {**inherited, **env}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=full_env, capture_output=True, text=True, timeout=120
    )


def fit_twice_script(model: str, revision: str | None = None) -> str:
    """Code for :func:`run_python`: fit ``model`` (printing ``EXPRESSION ...``), then make
    huggingface_hub's metadata request fail and fit again, printing ``REFIT OK`` when the
    second fit asked the Hub nothing (the process keeps the model it loaded)."""
    return f"""
    import numpy as np
    from nesymres_sklearn import NeSymReSRegressor
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, size=(30, 2))
    reg = NeSymReSRegressor(
        model={model!r}, revision={revision!r}, beam_size=2, n_restarts=1, refine=None, random_state=0
    )
    reg.fit(X, X[:, 0] + X[:, 1])
    print("EXPRESSION", reg.expression_)
    import huggingface_hub.file_download as download
    def no_network(*args, **kwargs):
        raise AssertionError("the Hub was asked again for a cached model")
    download.get_hf_file_metadata = no_network
    reg.fit(X, X[:, 0] - X[:, 1])
    print("REFIT OK")
"""
