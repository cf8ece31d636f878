"""An expensive result made once per test run, however many xdist workers need it: the first worker
to ask makes it under a lock and writes it as JSON beside the workers' own temporary folders (the
run's own folder); the others read it. Without xdist it is simply made."""

import fcntl
import json
import os


def once_per_run(tmp_path_factory, name: str, make):
    """make() -> a JSON-able value, called once in the whole run for this name."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return make()
    shared = tmp_path_factory.getbasetemp().parent  # this run's folder, above each worker's popen-gwN
    record = shared / f"{name}.json"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.exists():
            value = make()
            partial = shared / f"{name}.json.partial"
            partial.write_text(json.dumps(value))
            partial.replace(record)
        return json.loads(record.read_text())
