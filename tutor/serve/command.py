"""`gpu-tutor serve`: the facilitator's one command for a room of browsers.

It checks everything it can before it listens (the workshop file, the data folder, that learners'
kernels cannot read that folder, that the port is free) and then prints the one link to hand out,
and apart from it the facilitator's own link to the room view, which is not to be handed out.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
import sys
from pathlib import Path

from tutor.textsafe import terminal_safe

LOOPBACK = "127.0.0.1"


class ServeError(Exception):
    """What keeps the room from opening, said with what to do."""


def add_serve_command(sub, add_workshop_option) -> None:
    p = sub.add_parser("serve", help="for facilitators: serve the app to a room of browsers (each learner gets "
                                     "their own app and data folder; the link carries the room's token)")
    add_workshop_option(p, default=argparse.SUPPRESS)
    p.add_argument("--host", default=LOOPBACK,
                   help="the address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 for the "
                        "room's network)")
    p.add_argument("--port", type=int, default=8000, help="the port (default 8000)")
    p.add_argument("--data", metavar="DIR", default=None,
                   help="the room's folder: one data folder per learner under DIR/learners (default: "
                        "'served' in gpu-tutor's data folder)")
    p.add_argument("--max-learners", type=int, default=64,
                   help="browser sessions at once (default 64); each is an app and a simulator process")
    p.add_argument("--seats-per-address", type=int, default=0, metavar="N",
                   help="learners one network address may have in the room at once (default: no cap; on a "
                        "room network where each learner has a machine, 2 keeps one participant from taking "
                        "every seat; behind one proxy or NAT every learner shares an address)")
    p.add_argument("--max-folders", type=int, default=None, metavar="N",
                   help="learner folders the room makes at most (default: 4 per --max-learners, 16 at least); "
                        "a browser the room has never seen gets no seat past it")
    p.add_argument("--learner-quota-mb", type=int, default=None, metavar="MB",
                   help="what each learner's data folder may hold (default 50 MB); past it their code stays "
                        "in their editor, unsaved, and they are told so")
    p.add_argument("--new-token", action="store_true",
                   help="make new keys for the room (the learners' token, the facilitator's token, the cookie "
                        "secret): every old link, the facilitator's too, and every learner cookie stops working "
                        "(their folders stay). Without it a restart keeps the room's links")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args) -> int:
    try:
        server, room, url, view_url = prepare(args)
    except ServeError as e:
        print(f"gpu-tutor serve: {terminal_safe(str(e))}", file=sys.stderr)
        return 2
    for line in describe(room, args.host, url, view_url):
        print(terminal_safe(line))
    sys.stdout.flush()
    server.serve()
    return 0


def prepare(args):
    """(the server, its Room, the link to hand out, the facilitator's link), or ServeError."""
    import importlib.util

    if importlib.util.find_spec("textual_serve") is None:
        raise ServeError("needs textual-serve: pip install 'gpu-tutor[serve]' (or pip install textual-serve)")
    from tutor.puzzles import load_catalog
    from tutor.workshop.cli import active_workshop
    from .room import FACILITATOR, LEARNER_QUOTA_MB, Room, build_server
    from .room_keys import room_keys

    if not 0 < args.port < 65536:
        raise ServeError(f"--port {args.port}: choose a port from 1 to 65535 (e.g. 8000)")
    if args.max_learners < 1:
        raise ServeError(f"--max-learners {args.max_learners}: at least 1")
    quota = LEARNER_QUOTA_MB if args.learner_quota_mb is None else args.learner_quota_mb
    if quota < 1:
        raise ServeError(f"--learner-quota-mb {quota}: at least 1 (MB)")
    if args.seats_per_address < 0:
        raise ServeError(f"--seats-per-address {args.seats_per_address}: 0 (no cap) or more")
    if args.max_folders is not None and args.max_folders < 1:
        raise ServeError(f"--max-folders {args.max_folders}: at least 1")
    workshop = active_workshop(args)  # a bad file is reported now, not in every learner's browser
    catalog = load_catalog(on_demand=True)
    puzzles = tuple(workshop.puzzles) if workshop else tuple(catalog.ids())
    root = Path(args.data).expanduser() if args.data else _default_root()
    root = root.resolve()
    exposed = readable_by_kernels(root)
    if exposed:
        raise ServeError(f"{root}: lies inside {exposed}, which every learner's sandboxed kernel may read; "
                         "choose a room folder elsewhere with --data (e.g. --data ~/gpu-tutor-room)")
    try:
        keys = room_keys(root, rotate=args.new_token)
        room = Room(root=root, token=keys.token, secret=keys.secret, facilitator_token=keys.facilitator,
                    workshop=workshop.path.resolve() if workshop else None,
                    title=workshop.title if workshop else "gpu-tutor", puzzles=puzzles,
                    max_sessions=args.max_learners, learner_quota_mb=quota,
                    seats_per_address=args.seats_per_address, max_folders=args.max_folders or 0, keys=keys.state,
                    facilitator_sees_code=bool(workshop and workshop.facilitator_sees_code))
        room.write_description()
    except OSError as e:
        raise ServeError(f"{root}: cannot be written ({e.strerror or e}); choose another folder with --data") from None
    _check_port(args.host, args.port)
    host_in_url = args.host if args.host not in ("0.0.0.0", "::") else socket.gethostname()
    if ":" in host_in_url:
        host_in_url = f"[{host_in_url}]"
    url = f"http://{host_in_url}:{args.port}/?token={room.token}"
    view_url = f"http://{host_in_url}:{args.port}{FACILITATOR}?token={room.facilitator_token}"
    return build_server(room, args.host, args.port), room, url, view_url


def describe(room, host: str, url: str, view_url: str) -> list[str]:
    from ..engine.runner import gpu_present
    from ..session import Session
    from ..engine.process.sandbox import landlock_abi

    from .room_keys import KEYS_FILE

    lines = [f"gpu-tutor serve: {room.title} ({len(room.puzzles)} puzzles)",
             f"  the room's link (hand it out; it carries the token): {url}",
             f"  the facilitator's link (yours alone: do not share it or show it on the projector; it opens "
             f"the room view): {view_url}"]
    if room.keys == "rotated":
        lines.append("  new tokens: every earlier link of this room, the facilitator's too, and every learner "
                     "cookie no longer works (learners' folders are kept; they start new ones from the new link)")
    elif room.keys in ("kept", "facilitator added"):
        lines.append(f"  the same link as before: the token is kept in {room.root / KEYS_FILE} "
                     "(--new-token makes a new one)")
    if room.keys == "facilitator added":
        lines.append("  the facilitator's link is new (this room's keys had none); the learners' link is unchanged")
    lines += [f"  learners' folders: {room.root / 'learners'}   class table: gpu-tutor report {room.root}",
              f"  each learner's folder may hold {room.learner_quota_mb} MB (--learner-quota-mb); the room keeps "
              f"at most {room.max_folders} learner folders (--max-folders)"]
    if room.seats_per_address:
        lines.append(f"  at most {room.seats_per_address} learner(s) from one network address (--seats-per-address)")
    if _is_loopback(host):
        lines.append("  listening on this machine only (--host 0.0.0.0 serves the room's network)")
    else:
        lines.append(f"  listening on {host}: anyone with the link can join; without the token a request is refused")
    lines.append("  backend: a GPU, one queue for the whole room" if gpu_present(Session.from_environment()) else
                 "  backend: the simulator (no GPU here); simulator runs never wait for one another")
    if landlock_abi() < 1:
        lines.append("  warning: this kernel has no Landlock; learners' kernels are kept from other folders only "
                     "by the real compiler, which must accept each kernel before it runs")
    lines.append("  ctrl+c stops the room (every learner's code is saved)")
    return lines


def readable_by_kernels(root: Path) -> str | None:
    """The path sandboxed children may read that holds `root` (the room's learners' code), if any."""
    from ..engine.process.sandbox import children_read
    from tutor.puzzles import CONTENT_ENV

    content = os.environ.get(CONTENT_ENV)  # the runner lets its child read a content folder of its own
    for path in sorted(children_read([content] if content else [])):
        try:
            base = Path(path).resolve()
        except OSError:
            continue
        if root == base or base in root.parents:
            return str(base)
    return None


def _default_root() -> Path:
    from tutor.store import default_root

    return default_root() / "served"


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _check_port(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    probe = socket.socket(family, socket.SOCK_STREAM)
    try:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))
    except OSError as e:
        raise ServeError(f"cannot listen on {host}:{port} ({e.strerror or e}); choose another --port, or "
                         "another --host") from None
    finally:
        probe.close()
