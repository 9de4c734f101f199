"""The contest's front door: pages and a JSON API on aiohttp, pages drawn with Jinja2.

Runs as an unprivileged user. It reads the boards the scorer left in the state file
and writes uploads into its queue; it never reads the results folder or runs
anything.

Who may do what:
- the boards (pages and /api/leaderboard) and figures are public; the testing board
  only once the contest closed or the teacher revealed it;
- every write needs a team's token: `Authorization: Bearer TOKEN` for the API (a header
  no browser sends by itself, so no forged page can use it), or, for the pages, a
  session made by logging in with the token;
- the pages' cookie is HttpOnly and SameSite=Strict, and every form that changes
  anything carries a nonce made for that session that works once (a replayed or forged
  form is refused);
- a submission's page and its JSON (its log, its reasons) are its team's alone.

Everything a team or its code wrote is escaped by Jinja2's autoescape and was cut to a
bounded size before it was stored.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from aiohttp import web

from experiments.contest.serve.policy import Policy, Refusal, utc
from experiments.contest.serve.store import Store, Submission
from experiments.contest.serve.upload import MAX_BODY, UploadRefused, read_upload
from schemes.submission.api import SubmissionRefused
from schemes.submission.sources import Sources
from schemes.submission.untrusted_text import reason as shown

TEMPLATES = Path(__file__).with_name("templates")
COOKIE = "contest_session"
UPLOAD_DEADLINE_S = 60.0  # a body not sent in this time is refused (408)
SCORED_STATES = ("scored", "failed")
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; img-src 'self'; style-src 'self'; "
                               "script-src 'self'; connect-src 'self'; form-action 'self'; "
                               "frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY", "Cache-Control": "no-store"}


@dataclass
class Settings:
    trace: str  # the board submissions are scored on
    role: str | None
    trials: int
    policy: Policy
    secure_cookies: bool = False  # behind a TLS proxy: the cookie only over HTTPS


def load_templates() -> jinja2.Environment:
    """Every template read now: the web process may not be able to read the checkout once
    it dropped root."""
    sources = {p.name: p.read_text() for p in TEMPLATES.iterdir() if p.is_file()}
    # Results are dicts a field may be missing from: a missing one renders empty.
    env = jinja2.Environment(loader=jinja2.DictLoader(sources), autoescape=True)
    env.filters["utc"] = lambda t: utc(float(t)) if t else ""
    env.filters["num"] = _num
    return env


def _num(value: Any, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) and not isinstance(
        value, bool) else "-"


STATIC = {name: (TEMPLATES.parent / "static" / name).read_bytes()
          for name in ("live.js", "style.css")}


class Site:
    def __init__(self, store: Store, settings: Settings,
                 templates: jinja2.Environment | None = None) -> None:
        self.store = store
        self.settings = settings
        self.templates = templates or load_templates()

    # Helpers -------------------------------------------------------------------------

    def page(self, name: str, status: int = 200, **values: Any) -> web.Response:
        now = time.time()
        policy = self.settings.policy
        body = self.templates.get_template(name).render(
            settings=self.settings, closed=policy.closed(now), close_at=policy.close_at,
            **values)
        return web.Response(text=body, status=status, content_type="text/html",
                            headers=HEADERS)

    def json(self, value: Any, status: int = 200) -> web.Response:
        return web.json_response(value, status=status, headers=HEADERS)

    def api_error(self, status: int, message: str, retry_at: float | None = None
                  ) -> web.Response:
        value: dict[str, Any] = {"error": message}
        headers = dict(HEADERS)
        if retry_at is not None:
            value["retry_after"] = utc(retry_at)
            headers["Retry-After"] = str(max(1, int(retry_at - time.time())))
        if status == 401:
            headers["WWW-Authenticate"] = 'Bearer realm="contest"'
        return web.json_response(value, status=status, headers=headers)

    def session(self, request: web.Request) -> tuple[str | None, str]:
        """(team, the session's id) from the cookie; (None, "") without one."""
        sid = request.cookies.get(COOKIE, "")
        return self.store.session_team(sid, time.time()), sid

    def bearer(self, request: web.Request) -> str | None:
        header = request.headers.get("Authorization", "")
        if not header.startswith("Bearer "):
            return None
        return self.store.team_of_token(header[len("Bearer "):].strip())

    def boards(self) -> tuple[list[dict[str, Any]], float | None, bool]:
        """The boards a visitor may see, when they were drawn, and whether one is hidden."""
        boards, updated = self.store.boards()
        shown_testing = self.settings.policy.testing_shown(time.time())
        visible = [b for b in boards if shown_testing or b.get("role") != "testing"]
        return visible, updated, len(visible) < len(boards)

    def visible_result(self, sub: Submission) -> dict[str, Any] | None:
        if (sub.result is not None and self.settings.role == "testing"
                and not self.settings.policy.testing_shown(time.time())):
            return {"hidden": "scored on the testing trace: its numbers are shown when the "
                              "contest closes"}
        return sub.result

    def described(self, sub: Submission) -> dict[str, Any]:
        position = self.store.position(sub.id) if sub.state == "queued" else None
        if sub.state == "queued":
            status = f"queued: {position} in the queue" if position else "queued"
        elif sub.state == "running":
            status = f"running: {sub.progress}" if sub.progress else "running"
        else:
            status = sub.state
        return {"id": sub.id, "team": sub.team, "state": sub.state, "status": status,
                "position": position, "progress": sub.progress, "attempts": sub.attempts,
                "submitted_at": utc(sub.created),
                "started_at": utc(sub.started) if sub.started else None,
                "finished_at": utc(sub.finished) if sub.finished else None,
                "reason": sub.reason, "result": self.visible_result(sub),
                "trace": self.settings.trace, "trials": self.settings.trials}

    async def receive(self, request: web.Request, text_fields: tuple[str, ...]
                      ) -> tuple[Sources | None, Refusal | None, dict[str, str]]:
        """Read and check an upload: (the sources, None, its text fields) or (None, why,
        what fields were read)."""
        try:
            upload = await asyncio.wait_for(read_upload(request, text_fields),
                                            UPLOAD_DEADLINE_S)
        except UploadRefused as e:
            return None, Refusal(e.status, e.message), {}
        except asyncio.TimeoutError:
            return None, Refusal(408, f"the body did not arrive within {UPLOAD_DEADLINE_S:.0f}"
                                 " s"), {}
        try:
            sources = Sources.of_bytes(upload.files, "the upload")
            sources.api()
        except SubmissionRefused as e:
            return None, Refusal(422, shown(str(e))), upload.fields
        return sources, None, upload.fields

    def queue(self, team: str, sources: Sources) -> int | Refusal:
        """Stored (committed) before this returns, or refused by the team's limits."""
        return self.store.enqueue(team, sources.header, sources.body, sources.sha256,
                                  self.settings.policy, time.time())

    # The API ------------------------------------------------------------------------

    async def api_submit(self, request: web.Request) -> web.Response:
        team = self.bearer(request)
        if team is None:
            return _closing(self.api_error(401, "a team's token is needed: Authorization: "
                                           "Bearer TOKEN (a wrong or revoked token is refused)"))
        sources, refusal, _ = await self.receive(request, ())
        if sources is not None:
            queued = self.queue(team, sources)
            job, refusal = (queued, None) if isinstance(queued, int) else (None, queued)
        if refusal is not None:
            return _closing(self.api_error(refusal.status, refusal.text(), refusal.retry_at))
        assert job is not None
        sub = self.store.submission(job)
        assert sub is not None
        return self.json({"url": f"/submissions/{job}", **self.described(sub)}, status=202)

    async def api_submission(self, request: web.Request) -> web.Response:
        team = self.bearer(request) or self.session(request)[0]
        if team is None:
            return self.api_error(401, "a team's token is needed: Authorization: Bearer TOKEN")
        sub = self._own(request, team)
        if sub is None:
            return self.api_error(404, "no submission of your team has this id")
        return self.json({**self.described(sub), "log": sub.log})

    async def api_leaderboard(self, request: web.Request) -> web.Response:
        boards, updated, hidden = self.boards()
        return self.json({"updated": utc(updated) if updated else None,
                          "testing_hidden": hidden, "boards": boards})

    def _own(self, request: web.Request, team: str) -> Submission | None:
        try:
            job_id = int(request.match_info["id"])
        except ValueError:
            return None
        sub = self.store.submission(job_id)
        return sub if sub is not None and sub.team == team else None

    # Pages ----------------------------------------------------------------------------

    async def board_page(self, request: web.Request) -> web.Response:
        boards, updated, hidden = self.boards()
        team, _ = self.session(request)
        return self.page("board.html", boards=boards, updated=updated, hidden=hidden,
                         team=team)

    async def login_page(self, request: web.Request) -> web.Response:
        return self.page("login.html", nonce=self.store.new_nonce("", time.time()),
                         error="", team=None)

    async def login(self, request: web.Request) -> web.Response:
        form = await request.post()
        now = time.time()
        nonce, token = str(form.get("nonce", "")), str(form.get("token", "")).strip()
        if not self.store.use_nonce(nonce, "", now):
            return self.page("login.html", status=403, error="this form was used before or is "
                             "too old: log in again", nonce=self.store.new_nonce("", now),
                             team=None)
        team = self.store.team_of_token(token)
        if team is None:
            return self.page("login.html", status=401, error="this token is not a team's (or "
                             "it was revoked)", nonce=self.store.new_nonce("", now), team=None)
        sid = self.store.new_session(team, now)
        response = web.HTTPSeeOther("/team", headers=HEADERS)
        response.set_cookie(COOKIE, sid, httponly=True, samesite="Strict", path="/",
                            secure=self.settings.secure_cookies)
        raise response

    async def logout(self, request: web.Request) -> web.Response:
        team, sid = self.session(request)
        form = await request.post()
        if team is not None and self.store.use_nonce(str(form.get("nonce", "")), sid,
                                                     time.time()):
            self.store.end_session(sid)
        response = web.HTTPSeeOther("/", headers=HEADERS)
        response.del_cookie(COOKIE, path="/")
        raise response

    async def team_page(self, request: web.Request) -> web.Response:
        team, sid = self.session(request)
        if team is None:
            raise web.HTTPSeeOther("/login", headers=HEADERS)
        return self._team_page(team, sid)

    def _team_page(self, team: str, sid: str, status: int = 200, error: str = ""
                   ) -> web.Response:
        history = [self.described(s) for s in self.store.history(team)]
        return self.page("team.html", status=status, team=team, history=history, error=error,
                         nonce=self.store.new_nonce(sid, time.time()), max_body=MAX_BODY)

    async def submit_form(self, request: web.Request) -> web.Response:
        team, sid = self.session(request)
        if team is None:
            return _closing(self.page("login.html", status=401, error="log in with your team's "
                                      "token first", team=None,
                                      nonce=self.store.new_nonce("", time.time())))
        sources, refusal, fields = await self.receive(request, ("nonce",))
        # The nonce is spent whether the upload is taken or not: a form works once.
        if "nonce" in fields and not self.store.use_nonce(fields["nonce"], sid, time.time()):
            refusal = Refusal(403, "this form was sent before, or not from this site's page: "
                              "open the team page and submit again")
        elif refusal is None and "nonce" not in fields:
            refusal = Refusal(403, "this form carries no nonce: submit from the team page")
        if refusal is None:
            assert sources is not None
            queued = self.queue(team, sources)
            if isinstance(queued, int):
                raise web.HTTPSeeOther(f"/submissions/{queued}", headers=HEADERS)
            refusal = queued
        return _closing(self._team_page(team, sid, refusal.status, refusal.text()))

    async def submission_page(self, request: web.Request) -> web.Response:
        team, _ = self.session(request)
        if team is None:
            raise web.HTTPSeeOther("/login", headers=HEADERS)
        sub = self._own(request, team)
        if sub is None:
            return self.page("error.html", status=404, team=team,
                             error="no submission of your team has this id")
        return self.page("submission.html", team=team, sub=self.described(sub), log=sub.log)

    async def figure(self, request: web.Request) -> web.Response:
        data = self.store.figure(request.match_info["key"])
        if data is None:
            raise web.HTTPNotFound()
        return web.Response(body=data, content_type="image/png",
                            headers={**HEADERS, "Cache-Control": "max-age=60"})

    async def static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        kind = {"live.js": "application/javascript", "style.css": "text/css"}
        if name not in STATIC:
            raise web.HTTPNotFound()
        return web.Response(body=STATIC[name], content_type=kind[name], headers=HEADERS)


def _closing(response: web.Response) -> web.Response:
    """A refused upload may not have been read to its end: close the connection rather
    than read the rest of it."""
    response.force_close()
    return response


def make_app(store: Store, settings: Settings,
             templates: jinja2.Environment | None = None) -> web.Application:
    """The application; `templates` loaded before (a process that dropped root may not be
    able to read them)."""
    site = Site(store, settings, templates)
    # Only small urlencoded forms are read whole; uploads are streamed (upload.py).
    app = web.Application(client_max_size=64 * 1024)
    app.add_routes([
        web.get("/", site.board_page), web.get("/login", site.login_page),
        web.post("/login", site.login), web.post("/logout", site.logout),
        web.get("/team", site.team_page), web.post("/submit", site.submit_form),
        web.get(r"/submissions/{id:\d{1,12}}", site.submission_page),
        web.get(r"/figures/{key:plots/[A-Za-z0-9_.-]{1,200}/(throughput|delay)\.png}",
                site.figure),
        web.get(r"/static/{name:[a-z.]{1,20}}", site.static),
        web.post("/api/submissions", site.api_submit),
        web.get(r"/api/submissions/{id:\d{1,12}}", site.api_submission),
        web.get("/api/leaderboard", site.api_leaderboard)])
    app["site"] = site
    return app
