"""One browser learner's app: what `gpu-tutor serve` runs for each websocket, under textual-serve's
web driver (TEXTUAL_DRIVER), with the learner's folder in GPU_TUTOR_DATA and GPU_TUTOR_SERVED=1.

It opens as a workshop learner's app does: the room's workshop when it has one (its puzzles,
policies, hints and GPU queue), else every puzzle with authored hints; the name is asked once either
way, since the class report is the facilitator's view of the room. A problem that keeps the app
from opening is written where the browser shows it (the screen), not as a traceback.
"""

from __future__ import annotations

import sys


def main() -> int:
    from tutor.workshop.config import WorkshopError

    try:
        app = open_app()
    except WorkshopError as e:
        print(f"gpu-tutor: {e}", file=sys.stderr)
        return 2
    app.run()
    return 0


def open_app():
    """The learner's app, built as `main` runs it (not yet running). Raises WorkshopError."""
    from tutor.ai.config import AISettings
    from tutor.app.app import make_app
    from tutor.puzzles import load_catalog
    from tutor.workshop.cli import use_gpu_queue
    from tutor.workshop.config import load_workshop, workshop_path
    from tutor.workshop.learner import load_learner

    path = workshop_path(None)
    workshop = None if path is None else load_workshop(path, load_catalog(on_demand=True))
    if workshop is not None:
        use_gpu_queue(workshop)  # every browser learner's GPU runs join the room's one queue
    app = make_app(workshop=workshop, ai_settings=workshop.ai_settings() if workshop else AISettings(offline=True),
                   ask_name=True, data_quota_mb=_quota_mb())
    load_learner(app.store.root)  # the folder's id, made now: the class report reads it, never writes it
    return app


def _quota_mb() -> int | None:
    """The learner's folder cap the room set (`serve --learner-quota-mb`), read once here; a value
    that is not a number is the room's default, never no cap."""
    import os

    from tutor.store import QUOTA_ENV
    from .room import LEARNER_QUOTA_MB

    if QUOTA_ENV not in os.environ:
        return None
    try:
        return max(1, int(os.environ[QUOTA_ENV]))
    except ValueError:
        return LEARNER_QUOTA_MB


if __name__ == "__main__":
    sys.exit(main())
