"""The contest server's web process (experiments/contest/serve/web.py) through aiohttp's test
server: who may do what, and every bad input refused with its status and nothing stored.
Skipped where aiohttp is not installed (the plain venv of tests/unit-venv.sh)."""
from __future__ import annotations

import asyncio
import re
import socket
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest

pytest.importorskip("aiohttp")
from aiohttp import FormData  # noqa: E402
from aiohttp.test_utils import TestClient, TestServer  # noqa: E402

from core.paths import REPO_ROOT  # noqa: E402
from experiments.contest.serve import tokens  # noqa: E402
from experiments.contest.serve.policy import Policy  # noqa: E402
from experiments.contest.serve.store import Store  # noqa: E402
from experiments.contest.serve.web import Settings, make_app  # noqa: E402
from schemes.submission.intake import MAX_SOURCE_BYTES  # noqa: E402

HONEST = REPO_ROOT / "tests" / "fixtures" / "contest" / "honest-window-12"
HEADER = (HONEST / "controller.hh").read_bytes()
BODY = (HONEST / "controller.cc").read_bytes()
TOKENS = {"alpha": "alpha-token-0123456789abcdefghij", "beta": "beta-token-0123456789abcdefghijk"}

Check = Callable[[TestClient, Store], Awaitable[None]]


def serve(tmp_path: Path, check: Check, policy: Policy | None = None,
          role: str | None = "validation") -> Store:
    tmp_path.mkdir(exist_ok=True)
    store = Store(tmp_path / "contest.sqlite", create=True)
    for team, token in TOKENS.items():
        store.add_team(team, tokens.digest(token), 1.0)
    settings = Settings("ATT-LTE-driving-2016", role, 1, policy or Policy())

    async def main() -> None:
        client = TestClient(TestServer(make_app(store, settings)))
        await client.start_server()
        try:
            await check(client, store)
        finally:
            await client.close()
    asyncio.run(main())
    return store


def form(header: bytes | None = HEADER, body: bytes | None = BODY, hh_name: str = "controller.hh",
         cc_name: str = "controller.cc", **fields: str) -> FormData:
    data = FormData(quote_fields=False)
    for key, value in fields.items():
        data.add_field(key, value)
    if header is not None:
        data.add_field("controller.hh", header, filename=hh_name)
    if body is not None:
        data.add_field("controller.cc", body, filename=cc_name)
    return data


def bearer(team: str = "alpha") -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[team]}"}


def stored(store: Store) -> int:
    return sum(store.counts().values())


def test_an_upload_with_a_token_is_stored_before_its_202_and_only_its_team_sees_it(
        tmp_path: Path) -> None:
    async def check(client: TestClient, store: Store) -> None:
        r = await client.post("/api/submissions", data=form(), headers=bearer())
        assert r.status == 202
        got = await r.json()
        assert got["state"] == "queued" and got["position"] == 1 and stored(store) == 1
        mine = await client.get(f"/api/submissions/{got['id']}", headers=bearer())
        assert mine.status == 200 and (await mine.json())["status"] == "queued: 1 in the queue"
        other = await client.get(f"/api/submissions/{got['id']}", headers=bearer("beta"))
        assert other.status == 404
        anyone = await client.get(f"/api/submissions/{got['id']}")
        assert anyone.status == 401
    serve(tmp_path, check)


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong-token-0123456789abcdef"},
                                     {"Authorization": "Basic YWxwaGE6eA=="},
                                     {"Authorization": "Bearer " + "x" * 5000}])
def test_no_token_or_a_wrong_one_is_401_and_nothing_is_stored(tmp_path: Path,
                                                              headers: dict[str, str]) -> None:
    async def check(client: TestClient, store: Store) -> None:
        r = await client.post("/api/submissions", data=form(), headers=headers)
        assert r.status == 401 and "token" in (await r.json())["error"]
        assert r.headers["WWW-Authenticate"].startswith("Bearer")
        assert stored(store) == 0
    serve(tmp_path, check)


@pytest.mark.parametrize("data,status,says", [
    (lambda: form(body=None), 400, "controller.cc is missing"),
    (lambda: form(header=None), 400, "controller.hh is missing"),
    (lambda: form(body=b"x" * (MAX_SOURCE_BYTES + 1)), 413, "more than 1048576 bytes"),
    (lambda: form(cc_name="../../etc/cron.d/x"), 400, "holds a path"),
    (lambda: form(hh_name="dir\\controller.hh"), 400, "holds a path"),
    (lambda: form(hh_name="a\x1b[2Jb"), 400, "control character"),
    (lambda: form(header=b"int main() {}\n"), 422, "class named Controller"),
    (lambda: form(extra="1"), 400, "unexpected field"),
])
def test_a_bad_upload_is_refused_with_its_reason_and_nothing_is_stored(
        tmp_path: Path, data: Callable[[], FormData], status: int, says: str) -> None:
    async def check(client: TestClient, store: Store) -> None:
        r = await client.post("/api/submissions", data=data(), headers=bearer())
        assert r.status == status, await r.text()
        assert says in (await r.json())["error"]
        assert stored(store) == 0
    serve(tmp_path, check)


def _raw(port: int, head: bytes, body: bytes, more: int = 0) -> tuple[int, bytes]:
    """Send a request by hand; `more` bytes of padding after `body` are offered as long as the
    server reads them. Returns (status, what was sent of the padding before the answer)."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(head + body)
        sent = 0
        s.setblocking(False)
        answer = b""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and b"\r\n" not in answer:
            try:
                answer += s.recv(4096)
            except BlockingIOError:
                pass
            except ConnectionResetError:
                break
            if sent < more and b"\r\n" not in answer:
                try:
                    sent += s.send(b"a" * min(65536, more - sent))
                except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                    time.sleep(0.01)
            else:
                time.sleep(0.01)
        assert answer, "no answer within 20 s"
        return int(answer.split(b" ")[1]), sent.to_bytes(8, "big")


def _multipart(boundary: str, disposition: bytes, content: bytes) -> bytes:
    return (f"--{boundary}\r\n".encode() + b"Content-Disposition: form-data; " + disposition
            + b"\r\n\r\n" + content + f"\r\n--{boundary}--\r\n".encode())


def test_a_100_mb_body_is_refused_413_before_it_is_read(tmp_path: Path) -> None:
    async def check(client: TestClient, store: Store) -> None:
        port = client.server.port
        assert port is not None
        head = (f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                f"{TOKENS['alpha']}\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                f"Content-Length: {100 << 20}\r\n\r\n").encode()
        started = time.monotonic()
        status, sent = await asyncio.get_running_loop().run_in_executor(
            None, _raw, port, head, b"--b\r\n", 100 << 20)
        assert status == 413
        assert int.from_bytes(sent, "big") < 100 << 20
        assert time.monotonic() - started < 15
        assert stored(store) == 0
    serve(tmp_path, check)


def test_a_chunked_body_past_the_limit_is_cut_at_the_first_part_over_it(tmp_path: Path) -> None:
    async def check(client: TestClient, store: Store) -> None:
        async def endless() -> Any:
            yield (b"--b\r\nContent-Disposition: form-data; name=\"controller.hh\"; "
                   b"filename=\"controller.hh\"\r\n\r\n")
            for _ in range(1600):  # 100 MiB, if it were all read
                yield b"/" * 65536
        r = await client.post("/api/submissions", data=endless(), headers={
            **bearer(), "Content-Type": "multipart/form-data; boundary=b"})
        assert r.status == 413
        assert stored(store) == 0
    serve(tmp_path, check)


def test_a_name_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    async def check(client: TestClient, store: Store) -> None:
        port = client.server.port
        assert port is not None
        body = _multipart("b", b'name="controller.hh"; filename="contr\xff\xfeoller.hh"', HEADER)
        head = (f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                f"{TOKENS['alpha']}\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
        loop = asyncio.get_running_loop()
        status, _ = await loop.run_in_executor(None, _raw, port, head, body)
        assert status == 400
        assert stored(store) == 0
    serve(tmp_path, check)


async def _login(client: TestClient, team: str = "alpha") -> None:
    page = await (await client.get("/login")).text()
    nonce = re.search(r'name="nonce" value="([^"]+)"', page)
    assert nonce is not None
    r = await client.post("/login", data={"nonce": nonce.group(1), "token": TOKENS[team]},
                          allow_redirects=False)
    assert r.status == 303 and r.headers["Location"] == "/team"
    cookie = r.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie


async def _team_nonce(client: TestClient) -> str:
    page = await (await client.get("/team")).text()
    found = re.search(r'action="/submit".*?name="nonce" value="([^"]+)"', page, re.S)
    assert found is not None, page
    return found.group(1)


def test_a_form_works_once_a_replayed_one_is_refused_and_stores_nothing(tmp_path: Path) -> None:
    async def check(client: TestClient, store: Store) -> None:
        await _login(client)
        nonce = await _team_nonce(client)
        r = await client.post("/submit", data=form(nonce=nonce), allow_redirects=False)
        assert r.status == 303 and r.headers["Location"].startswith("/submissions/")
        job = store.submission(int(r.headers["Location"].rsplit("/", 1)[1]))
        assert job is not None
        claimed = store.claim(time.time())
        assert claimed is not None
        store.finish(claimed, "scored", {"score": 1.0}, "", "", time.time())
        again = await client.post("/submit", data=form(nonce=nonce), allow_redirects=False)
        assert again.status == 403 and "sent before" in await again.text()
        none = await client.post("/submit", data=form(), allow_redirects=False)
        assert none.status == 403
        assert stored(store) == 1
        page = await client.get(r.headers["Location"])
        assert page.status == 200 and "scored" in await page.text()
    serve(tmp_path, check)


def test_a_form_from_another_session_or_without_one_is_refused(tmp_path: Path) -> None:
    async def check(client: TestClient, store: Store) -> None:
        anonymous = await client.post("/submit", data=form(nonce="x" * 43),
                                      allow_redirects=False)
        assert anonymous.status == 401
        bad_login = await client.post("/login", data={"nonce": "y" * 43,
                                                      "token": TOKENS["alpha"]})
        assert bad_login.status == 403
        await _login(client)
        theirs = store.new_nonce("another-session", time.time())
        r = await client.post("/submit", data=form(nonce=theirs), allow_redirects=False)
        assert r.status == 403 and stored(store) == 0
    serve(tmp_path, check)


def test_limits_and_the_close_refuse_with_when_to_come_back(tmp_path: Path) -> None:
    async def check(client: TestClient, store: Store) -> None:
        first = await client.post("/api/submissions", data=form(), headers=bearer())
        assert first.status == 202
        busy = await client.post("/api/submissions", data=form(), headers=bearer())
        assert busy.status == 429 and "at once" in (await busy.json())["error"]
        job = store.claim(time.time())
        assert job is not None
        store.finish(job, "failed", None, "x", "", time.time())
        hourly = await client.post("/api/submissions", data=form(), headers=bearer())
        assert hourly.status == 429 and int(hourly.headers["Retry-After"]) > 3000
        assert "submit again after" in (await hourly.json())["retry_after"] + \
            (await hourly.json())["error"]
        assert stored(store) == 1
    serve(tmp_path, check, Policy(per_hour=1))

    async def closed(client: TestClient, store: Store) -> None:
        r = await client.post("/api/submissions", data=form(), headers=bearer())
        assert r.status == 403 and "closed" in (await r.json())["error"]
        assert stored(store) == 0
    serve(tmp_path / "closed", closed, Policy(close_at=time.time() - 1))


def _boards(store: Store) -> None:
    row = {"rank": 1, "kind": "submission", "name": "<script>alert(1)</script>", "score": 1.0,
           "status": "scored", "reason": "", "trials_scored": 1, "trials": 1,
           "figures": {"throughput": "plots/run-1/throughput.png"}}
    store.set_boards([{"name": "ATT-LTE-driving-2016", "role": "validation",
                       "title": "validation", "rows": [row]},
                      {"name": "TMobile-LTE-short", "role": "testing", "title": "testing",
                       "rows": [dict(row, name="secret-team")]}],
                     {"plots/run-1/throughput.png": b"\x89PNG fake"}, time.time())


def test_the_boards_are_public_escaped_and_hide_testing_until_the_close(tmp_path: Path) -> None:
    async def check(client: TestClient, store: Store) -> None:
        _boards(store)
        board = await (await client.get("/api/leaderboard")).json()
        assert [b["role"] for b in board["boards"]] == ["validation"] and board["testing_hidden"]
        page = await (await client.get("/")).text()
        assert "<script>alert" not in page and "&lt;script&gt;alert(1)" in page
        assert "secret-team" not in page and 'href="/figures/plots/run-1/throughput.png"' in page
        fig = await client.get("/figures/plots/run-1/throughput.png")
        assert fig.status == 200 and await fig.read() == b"\x89PNG fake"
        assert (await client.get("/figures/plots/run-2/throughput.png")).status == 404
        assert (await client.get("/figures/plots/../../etc/passwd")).status == 404
    serve(tmp_path, check)

    async def revealed(client: TestClient, store: Store) -> None:
        _boards(store)
        board = await (await client.get("/api/leaderboard")).json()
        assert [b["role"] for b in board["boards"]] == ["validation", "testing"]
    serve(tmp_path / "after", revealed, Policy(close_at=time.time() - 1))
    serve(tmp_path / "revealed", revealed, Policy(reveal_testing=True))


def test_a_result_on_the_hidden_testing_trace_shows_no_numbers_before_the_close(
        tmp_path: Path) -> None:
    async def check(client: TestClient, store: Store) -> None:
        r = await client.post("/api/submissions", data=form(), headers=bearer())
        job = store.claim(time.time())
        assert job is not None and r.status == 202
        store.finish(job, "scored", {"score": 3.25}, "", "", time.time())
        got = await (await client.get(f"/api/submissions/{job.id}", headers=bearer())).json()
        assert "3.25" not in str(got["result"]) and "hidden" in got["result"]
    serve(tmp_path, check, role="testing")


def test_the_app_reads_nothing_of_the_checkout_once_its_templates_are_handed_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The web process drops root before it builds the app; a clone only root can read
    (/root/netrepro) must not matter then."""
    from experiments.contest.serve import web as web_module
    templates = web_module.load_templates()
    monkeypatch.setattr(web_module, "TEMPLATES", tmp_path / "unreadable")

    async def check(client: TestClient, store: Store) -> None:
        assert (await client.get("/")).status == 200
        assert (await client.get("/login")).status == 200
        assert (await client.get("/static/live.js")).status == 200
    store = Store(tmp_path / "contest.sqlite", create=True)
    settings = Settings("t", None, 1, Policy())

    async def main() -> None:
        client = TestClient(TestServer(make_app(store, settings, templates)))
        await client.start_server()
        try:
            await check(client, store)
        finally:
            await client.close()
    asyncio.run(main())
    with pytest.raises(FileNotFoundError):
        make_app(store, settings)  # without them it would read the checkout
