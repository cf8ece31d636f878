"""`gpu-tutor serve` over loopback, without a browser: the token, the cookies, the websocket's
origin, a learner per browser, and the refusals said before the room opens. Each attack here works
on plain textual-serve (which serves anyone, from any page, one data folder for all)."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request

import pytest

from cli_run import run_cli
from room_server import ROOT, RoomProcess

pytest.importorskip("textual_serve", reason="pip install -e '.[test]' installs textual-serve")
aiohttp = pytest.importorskip("aiohttp")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def get(url: str, cookie: str | None = None):
    """(status, headers, body) of one request, redirects not followed."""
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def cookies_of(headers) -> dict[str, str]:
    found = {}
    for line in headers.get_all("Set-Cookie") or []:
        name, value = line.split(";", 1)[0].split("=", 1)
        found[name] = value
    return found


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    server = RoomProcess(tmp_path_factory.mktemp("room"))
    yield server
    server.stop()


def test_every_path_without_the_token_is_refused_with_a_page_that_says_what_to_do(room):
    for path in ("/", "/ws", "/static/js/textual.js", "/static/css/xterm.css", "/?token=", "/?token=wrong"):
        status, _, body = get(room.base + path)
        assert status == 403, path
        assert "token" in body and "facilitator" in body
    status, _, _ = get(room.base + "/", cookie="gpu_tutor_room=" + room.token[:-1] + "x")
    assert status == 403


def test_the_link_becomes_cookies_and_leaves_the_address_bar(room):
    status, headers, _ = get(room.url)
    assert status == 303 and headers["Location"] == "/"
    raw = " ".join(headers.get_all("Set-Cookie"))
    assert "HttpOnly" in raw and "SameSite=Strict" in raw
    cookies = cookies_of(headers)
    assert cookies["gpu_tutor_room"] == room.token
    assert re.fullmatch(r"[A-Za-z0-9_-]{32}", cookies["gpu_tutor_learner"])
    status, _, page = get(room.base + "/", cookie="; ".join(f"{k}={v}" for k, v in cookies.items()))
    assert status == 200
    assert f"ws://127.0.0.1:{room.port}/ws" in page
    # an offline room: the page fetches nothing from anywhere but this server
    assert not re.findall(r"(?:src|href)=\"(?!/)", page) and "googleapis" not in page
    assert room.token not in page


def test_two_visits_without_cookies_are_two_learners(room):
    first = cookies_of(get(room.url)[1])["gpu_tutor_learner"]
    second = cookies_of(get(room.url)[1])["gpu_tutor_learner"]
    assert first != second


async def _websocket(room, cookie: str, origin: str | None):
    headers = {"Cookie": cookie}
    if origin:
        headers["Origin"] = origin
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(f"ws://127.0.0.1:{room.port}/ws?width=100&height=30", headers=headers,
                                          timeout=aiohttp.ClientWSTimeout(ws_receive=30)) as ws:
                message = await ws.receive(timeout=60)
                await ws.send_str(json.dumps(["ping", "x"]))
                return "open", (message.type, len(message.data or b""))
        except aiohttp.WSServerHandshakeError as e:
            return "refused", e.status


def test_the_websocket_needs_our_own_page_and_a_learner_cookie(room):
    cookies = cookies_of(get(room.url)[1])
    both = f"gpu_tutor_room={room.token}; gpu_tutor_learner={cookies['gpu_tutor_learner']}"
    # another site open in the learner's browser (cross-site websocket hijacking)
    assert asyncio.run(_websocket(room, both, "http://evil.example")) == ("refused", 403)
    # the room's token but no learner: never a folder made up from nothing
    assert asyncio.run(_websocket(room, f"gpu_tutor_room={room.token}", f"http://127.0.0.1:{room.port}")) == \
        ("refused", 403)
    # a learner cookie that tries to name a path
    bad = f"gpu_tutor_room={room.token}; gpu_tutor_learner=../../../../etc/passwd0123456789ab"
    assert asyncio.run(_websocket(room, bad, f"http://127.0.0.1:{room.port}")) == ("refused", 403)
    before = room.learner_folders() if (room.data / "learners").exists() else []
    state, (kind, size) = asyncio.run(_websocket(room, both, f"http://127.0.0.1:{room.port}"))
    assert state == "open" and kind == aiohttp.WSMsgType.BINARY and size > 0  # the app's first screen bytes
    folders = room.learner_folders()
    assert len(folders) == len(before) + 1
    new = (set(folders) - set(before)).pop()
    assert cookies["gpu_tutor_learner"] not in str(new)  # the folder's name does not give the cookie away


def test_the_room_file_says_what_the_class_report_needs(room):
    described = json.loads((room.data / "room.json").read_text())
    assert described["title"] == "gpu-tutor" and "map" in described["puzzles"]


def test_a_room_folder_that_kernels_could_read_is_refused_before_the_room_opens(tmp_path):
    inside = ROOT / "room-that-must-not-be-made"
    result = run_cli("serve", "--data", str(inside), "--port", "1")
    assert result.returncode == 2
    assert "every learner's sandboxed kernel may read" in result.stderr and "--data" in result.stderr
    assert not inside.exists()


def test_a_port_in_use_and_a_bad_workshop_are_said_before_listening(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("serve", "--data", str(tmp_path / "room"), "--port", str(port))
    assert result.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in result.stderr
    (tmp_path / "w.toml").write_text('title = "x"\npuzzles = ["no_such_puzzle"]\n')
    result = run_cli("serve", "--data", str(tmp_path / "room"), "--workshop", str(tmp_path / "w.toml"))
    assert result.returncode == 2 and "no_such_puzzle" in result.stderr


def test_a_full_room_says_so_and_a_learners_second_tab_takes_over_from_the_first(tmp_path):
    room = RoomProcess(tmp_path / "room", "--max-learners", "1")

    async def scenario():
        first = cookies_of(get(room.url)[1])["gpu_tutor_learner"]
        second = cookies_of(get(room.url)[1])["gpu_tutor_learner"]
        origin = {"Origin": f"http://127.0.0.1:{room.port}"}
        url = f"ws://127.0.0.1:{room.port}/ws"
        async with aiohttp.ClientSession() as session:
            one = await session.ws_connect(url, headers={**origin, "Cookie": f"gpu_tutor_room={room.token}; "
                                                                           f"gpu_tutor_learner={first}"})
            await one.receive(timeout=60)
            try:
                await session.ws_connect(url, headers={**origin, "Cookie": f"gpu_tutor_room={room.token}; "
                                                                         f"gpu_tutor_learner={second}"})
                full = None
            except aiohttp.WSServerHandshakeError as e:
                full = e.status
            again = await session.ws_connect(url, headers={**origin, "Cookie": f"gpu_tutor_room={room.token}; "
                                                                             f"gpu_tutor_learner={first}"})
            while (message := await one.receive(timeout=60)).type not in (aiohttp.WSMsgType.CLOSE,
                                                                            aiohttp.WSMsgType.CLOSED):
                pass
            closed = message.extra
            await again.receive(timeout=60)
            await again.close()
            return full, closed

    try:
        full, closed = asyncio.run(scenario())
    finally:
        room.stop()
    assert full == 503
    assert closed == "this learner opened the room in another tab"
    assert len(room.learner_folders()) == 1
