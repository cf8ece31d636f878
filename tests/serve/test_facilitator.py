"""The facilitator's room view served by `gpu-tutor serve`, over loopback without a browser: its own
token (kept, rotated and added to older rooms with the room's keys), its cookie, its websocket, and
that neither token opens the other's pages. On main the learners' token opened every path of the
room, and the room had no second token."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import os
import re
import time

import pytest

from room_server import RoomProcess, cookies_of, get
from tutor.serve.room import Room
from tutor.serve.room_keys import KEYS_FILE, room_keys

pytest.importorskip("textual_serve", reason="pip install -e '.[test]' installs textual-serve")
aiohttp = pytest.importorskip("aiohttp")

VIEW = "tutor.serve.facilitator_session"


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    server = RoomProcess(tmp_path_factory.mktemp("room"))
    yield server
    server.stop()


def learner_folders(room) -> list:
    return room.learner_folders() if (room.data / "learners").exists() else []


def learner_cookies(room) -> str:
    """What a learner's browser sends after opening the room's link: the room's token and its learner."""
    issued = cookies_of(get(room.url)[1])
    return f"gpu_tutor_room={issued['gpu_tutor_room']}; gpu_tutor_learner={issued['gpu_tutor_learner']}"


async def _view(room, cookie: str, origin: str | None = "same", path: str = "/facilitator/ws"):
    """Open a websocket: its handshake's status (101: opened, and closed again)."""
    headers = {"Cookie": cookie}
    if origin:
        headers["Origin"] = f"http://127.0.0.1:{room.port}" if origin == "same" else origin
    async with aiohttp.ClientSession() as session:
        try:
            ws = await session.ws_connect(f"ws://127.0.0.1:{room.port}{path}", headers=headers)
        except aiohttp.WSServerHandshakeError as e:
            return e.status
        await ws.close()
        return 101


def test_the_printed_links_are_two_and_the_facilitators_says_it_is_not_to_be_shared(room):
    output = "".join(room.output)
    assert room.view_token != room.token and room.view_url.endswith(f"/facilitator?token={room.view_token}")
    [line] = [line for line in output.splitlines() if room.view_url in line]
    assert "facilitator's link" in line and "do not share" in line and room.token not in line
    [line] = [line for line in output.splitlines() if room.url in line]
    assert "hand it out" in line and room.view_token not in line


def test_the_learners_token_does_not_open_the_room_view(room):
    cookies = learner_cookies(room)
    for path in ("/facilitator", "/facilitator/ws", "/facilitator/static/js/textual.js"):
        for cookie in (cookies, f"gpu_tutor_facilitator={room.token}"):  # the learners' token as either cookie
            status, headers, body = get(room.base + path, cookie=cookie)
            assert status == 403, (path, cookie)
            assert "This page is the facilitator's" in body and "The room's link, the one learners have, does not " \
                "open it" in body
            assert "gpu_tutor_facilitator" not in cookies_of(headers)
        status, _, body = get(f"{room.base}{path}?token={room.token}")
        assert status == 403 and "facilitator's own link" in body
    assert asyncio.run(_view(room, cookies)) == 403
    assert asyncio.run(_view(room, f"gpu_tutor_facilitator={room.token}")) == 403


def test_the_facilitators_link_becomes_a_cookie_for_the_facilitators_pages_alone(room):
    before = learner_folders(room)
    status, headers, _ = get(room.view_url)
    assert status == 303 and headers["Location"] == "/facilitator"
    [raw] = headers.get_all("Set-Cookie")
    assert "HttpOnly" in raw and "SameSite=Strict" in raw and "Path=/facilitator" in raw
    assert cookies_of(headers) == {"gpu_tutor_facilitator": room.view_token}  # no learner cookie
    cookie = f"gpu_tutor_facilitator={room.view_token}"
    status, _, page = get(room.base + "/facilitator", cookie=cookie)
    assert status == 200 and f"ws://127.0.0.1:{room.port}/facilitator/ws" in page and "room view" in page
    assert room.view_token not in page and room.token not in page
    # its script and font come from under /facilitator, where its cookie goes, and nowhere else
    assert set(re.findall(r"(?:src|href)=\"([^\"]*)\"", page)) == {
        "/facilitator/static/css/xterm.css", "/facilitator/static/js/textual.js", "/facilitator"}
    assert re.findall(r"url\(\"([^\"]*)\"\)", page) == ["/facilitator/static/fonts/RobotoMono-VariableFont_wght.ttf"]
    status, _, script = get(room.base + "/facilitator/static/js/textual.js", cookie=cookie)
    assert status == 200 and len(script) > 1000
    assert learner_folders(room) == before


@pytest.mark.parametrize("cookie", ["forged", "cut short", "empty", "the token in the room cookie"])
def test_a_facilitator_cookie_the_room_did_not_issue_is_refused(room, cookie):
    value = {"forged": "A" * len(room.view_token),
             "cut short": room.view_token[:-1],
             "empty": ""}.get(cookie)
    header = f"gpu_tutor_facilitator={value}" if value is not None else f"gpu_tutor_room={room.view_token}"
    status, _, body = get(room.base + "/facilitator", cookie=header)
    assert status == 403 and "This page is the facilitator's" in body
    assert get(room.base + "/facilitator?token=" + room.view_token[:-1])[0] == 403
    assert asyncio.run(_view(room, header)) == 403


def test_the_facilitators_token_is_no_learners_token_and_makes_no_learner_folder(room):
    """Decided: the facilitator watches the room and is never one of its learners; the facilitator's
    token on the learners' pages is refused, with a page that says where it leads."""
    before = learner_folders(room)
    status, headers, body = get(f"{room.base}/?token={room.view_token}")
    assert status == 403 and "This is the facilitator's token" in body and "/facilitator" in body
    assert cookies_of(headers) == {}  # no room cookie, no learner cookie
    for path in ("/", "/ws", "/static/js/textual.js"):
        assert get(room.base + path, cookie=f"gpu_tutor_room={room.view_token}")[0] == 403, path
    # a real learner cookie with the facilitator's token for the room's: still no seat
    issued = cookies_of(get(room.url)[1])["gpu_tutor_learner"]
    assert asyncio.run(_view(room, f"gpu_tutor_room={room.view_token}; gpu_tutor_learner={issued}", path="/ws")) == 403
    assert learner_folders(room) == before


def test_neither_token_reaches_the_rooms_log(tmp_path):
    """The room logs what it refuses, by path; aiohttp's access log (the whole URL, query and token)
    is kept off. Each token is printed once, in its link, and never again."""
    room = RoomProcess(tmp_path / "room")
    try:
        cookies = learner_cookies(room)
        get(room.view_url)
        get(room.base + "/facilitator", cookie=f"gpu_tutor_facilitator={room.view_token}")
        get(f"{room.base}/facilitator?token={room.token}")
        get(f"{room.base}/?token={room.view_token}")
        get(f"{room.base}/facilitator?token={room.view_token}x")
        get(room.base + "/", cookie=cookies)
    finally:
        log = room.stop()
    assert "refused" in log and "the learners' token, not the facilitator's" in log
    assert "the facilitator's token, not the learners'" in log
    assert log.count(room.view_token) == 1 and log.count(room.token) == 1


def test_new_token_rotates_the_facilitators_token_with_the_rooms_and_a_restart_keeps_it(tmp_path):
    first = RoomProcess(tmp_path / "room")
    first.stop()
    keys = tmp_path / "room" / KEYS_FILE
    assert oct(keys.stat().st_mode & 0o777) == "0o600"
    assert json.loads(keys.read_text())["facilitator_token"] == first.view_token
    again = RoomProcess(tmp_path / "room")
    try:
        assert (again.token, again.view_token) == (first.token, first.view_token)
        assert get(again.base + "/facilitator", cookie=f"gpu_tutor_facilitator={first.view_token}")[0] == 200
    finally:
        again.stop()
    rotated = RoomProcess(tmp_path / "room", "--new-token")
    try:
        assert rotated.view_token not in (first.view_token, first.token) and rotated.token != first.token
        assert "the facilitator's too" in "".join(rotated.output)
        assert get(rotated.base + "/facilitator", cookie=f"gpu_tutor_facilitator={first.view_token}")[0] == 403
        assert get(f"{rotated.base}/facilitator?token={first.view_token}")[0] == 403
        assert asyncio.run(_view(rotated, f"gpu_tutor_facilitator={first.view_token}")) == 403
        assert get(rotated.view_url)[0] == 303
    finally:
        rotated.stop()
    assert oct(keys.stat().st_mode & 0o777) == "0o600"
    assert json.loads(keys.read_text())["facilitator_token"] == rotated.view_token


def test_an_older_rooms_keys_gain_a_facilitators_token_and_every_learners_link_and_cookie_keeps_working(tmp_path):
    """A room served before the facilitator's view has room-keys.json with the token and the secret
    alone: it gains a facilitator's token, and learners' links and cookies still work."""
    data = tmp_path / "room"
    data.mkdir()
    token, secret = "the-old-learners-token", os.urandom(32)
    keys = data / KEYS_FILE
    keys.write_text(json.dumps({"token": token, "secret": base64.urlsafe_b64encode(secret).decode()}) + "\n")
    keys.chmod(0o600)
    learner = Room(root=data, token=token, secret=secret, workshop=None, title="t", puzzles=()).new_learner_cookie()
    room = RoomProcess(data)
    try:
        assert room.token == token and room.view_token and room.view_token != token
        assert "the facilitator's link is new" in "".join(room.output)
        status, _, page = get(room.base + "/", cookie=f"gpu_tutor_room={token}; gpu_tutor_learner={learner}")
        assert status == 200 and "/ws" in page  # the learner's old cookie: their page, no new cookie
        assert get(room.view_url)[0] == 303
    finally:
        room.stop()
    kept = json.loads(keys.read_text())
    assert kept["token"] == token and base64.urlsafe_b64decode(kept["secret"]) == secret
    assert kept["facilitator_token"] == room.view_token
    assert oct(keys.stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("facilitator", ["the learners' token", "not a token", 42])
def test_a_kept_facilitators_token_that_is_not_one_is_replaced_and_the_learners_keys_kept(tmp_path, facilitator):
    """A hand-edited keys file whose facilitator's token is the learners' would let every learner in."""
    secret = base64.urlsafe_b64encode(os.urandom(32)).decode()
    token = "the-learners-token-kept"
    value = token if facilitator == "the learners' token" else facilitator
    (tmp_path / KEYS_FILE).write_text(json.dumps({"token": token, "secret": secret, "facilitator_token": value}))
    keys = room_keys(tmp_path)
    assert keys.state == "facilitator added" and keys.token == token and keys.facilitator != token
    assert re.fullmatch(r"[A-Za-z0-9_-]{24}", keys.facilitator)
    assert room_keys(tmp_path) == dataclasses.replace(keys, state="kept")


# -- the room view's websocket: its process, its cap, no seat ------------------------------------------
def test_the_room_view_runs_over_the_rooms_folder_with_no_learner_folder_and_takes_no_seat(tmp_path):
    """The view's process gets the room's folder and no data folder (the server's own is set here),
    at most two run at once (the third is told why), and they leave a one-seat room's seat free."""
    room = RoomProcess(tmp_path / "room", "--max-learners", "1", env={"GPU_TUTOR_DATA": str(tmp_path / "mine")})
    cookie = f"gpu_tutor_facilitator={room.view_token}"
    origin = {"Origin": f"http://127.0.0.1:{room.port}", "Cookie": cookie}

    async def scenario():
        async with aiohttp.ClientSession() as session:
            url = f"ws://127.0.0.1:{room.port}/facilitator/ws?width=120&height=40"
            assert await _view(room, cookie, origin="http://evil.example") == 403
            views = [await session.ws_connect(url, headers=origin) for _ in range(2)]
            for view in views:
                first = await asyncio.wait_for(view.receive(), 60)
                assert first.type == aiohttp.WSMsgType.BINARY and first.data  # the view's first screen bytes
            deadline = time.monotonic() + 30
            while len(processes := room.app_processes(VIEW)) < 2 and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            environments = [environment(pid) for pid in processes]
            third = await asyncio.to_thread(get, room.base + "/facilitator/ws", cookie)
            learner = await session.ws_connect(f"ws://127.0.0.1:{room.port}/ws",
                                               headers={"Origin": origin["Origin"], "Cookie": learner_cookies(room)})
            seated = (await asyncio.wait_for(learner.receive(), 60)).type
            for ws in (*views, learner):
                await ws.close()
            return environments, third, seated

    try:
        environments, third, seated = asyncio.run(scenario())
        deadline = time.monotonic() + 30
        while room.app_processes(VIEW) and time.monotonic() < deadline:  # closed tabs end their views
            time.sleep(0.1)
        assert room.app_processes(VIEW) == []
    finally:
        log = room.stop()
    assert len(environments) == 2
    for env in environments:
        assert env["GPU_TUTOR_ROOM_DATA"] == str(tmp_path / "room")
        assert "GPU_TUTOR_DATA" not in env and "GPU_TUTOR_SERVED" not in env and "TEXTUAL" not in env
    assert third[0] == 503 and "the room view is open in 2 tabs already" in third[2]
    assert seated == aiohttp.WSMsgType.BINARY  # two views open, and the room's one learner seated
    assert len(learner_folders(room)) == 1 and not (tmp_path / "mine").exists()
    assert "room view: started" in log


def environment(pid: int) -> dict[str, str]:
    raw = open(f"/proc/{pid}/environ", "rb").read()
    return dict(item.decode("utf-8", "replace").split("=", 1) for item in raw.split(b"\0") if b"=" in item)
