"""The sandbox, attacked from inside: what a learner's file or a model's code tries after today's
main let it through (each attack below escaped 42f2d21; see the commit that adds this file).

Two layers are tested: the launcher itself, with a probe child that runs whatever Python it is sent
(the worst a kernel could do if every other check failed), and the runner's real child, with
learner files that reach for the environment, a loopback socket, fork and the answer channel."""

import os
import socket
import threading

import pytest

from tutor.engine.runner import Runner
from tutor.engine.process.sandbox import Child, ChildDied, clean_env
from waiting import until_true

PLANTED = "sk-planted-for-the-sandbox-test"


@pytest.fixture
def probe(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    monkeypatch.setenv("GPU_TUTOR_TEST_TOKEN", PLANTED)
    child = Child("tests.engine.sandbox_probe", memory_mb=1024)
    yield lambda code, timeout=20: child.ask({"code": code}, timeout=timeout)[0]
    child.kill()


def attempt(body: str) -> str:
    """Code that tries something and says what happened, as the child saw it."""
    lines = "\n".join("    " + line for line in body.splitlines())
    return f"try:\n{lines}\n    result = 'done'\nexcept Exception as e:\n    result = 'refused: ' + type(e).__name__\n"


def test_no_key_or_token_reaches_the_child(probe):
    env = probe("import os; result = dict(os.environ)")
    assert PLANTED not in str(env)
    assert not [k for k in env if "KEY" in k or "TOKEN" in k]


def test_the_environment_is_an_allow_list():
    env = clean_env(home="/x")
    assert env["HOME"] == "/x" and env["TMPDIR"] == "/x"
    assert set(env) <= {"PATH", "LANG", "LANGUAGE", "TZ", "PYTHONPATH", "PYTHONHASHSEED", "VIRTUAL_ENV",
                        "LD_LIBRARY_PATH", "SYSTEMROOT", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES",
                        "CUDA_DEVICE_ORDER", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "GPU_TUTOR_NO_GPU",
                        "PYTHONDONTWRITEBYTECODE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                        "MKL_NUM_THREADS", "NUMBA_CACHE_DIR", "TMPDIR", "HOME"} | {
        k for k in env if k.startswith(("LC_", "NUMBA_"))}


def test_home_and_cwd_are_a_fresh_folder_of_its_own_and_stdin_is_empty(probe):
    home, cwd, stdin = probe("import os, sys; result = [os.environ['HOME'], os.getcwd(), sys.stdin.read()]")
    assert home == cwd and os.path.basename(home).startswith("gpu-tutor-child-") and stdin == ""


def test_it_cannot_start_a_process(probe, tmp_path):
    marker = tmp_path / "shell-ran"
    assert probe(attempt("import os\npid = os.fork()\nif pid == 0:\n    os._exit(0)")) == "refused: PermissionError"
    assert probe(attempt(f"import subprocess\nsubprocess.run(['touch', {str(marker)!r}])")).startswith("refused")
    probe(f"import os; os.system('touch {marker}')")
    assert not marker.exists()


def test_it_cannot_open_a_network_socket(probe):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    said = probe(attempt(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'x')"))
    assert said.startswith("refused")
    server.settimeout(0.2)
    with pytest.raises(socket.timeout):
        server.accept()
    server.close()


def test_it_cannot_read_the_machines_secrets_even_as_root_but_reads_what_libraries_need(probe):
    """A room served as root let a learner's code read /etc/shadow (Landlock let children read /etc)."""
    for secret in ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh/sshd_config"):
        assert probe(attempt(f"open({secret!r}, 'rb').read()")) in ("refused: PermissionError",
                                                                    "refused: FileNotFoundError")
    assert probe(attempt("open('/etc/ld.so.cache', 'rb').read(1)")) == "done"


def test_it_cannot_read_the_parents_environment_or_the_users_files(probe):
    assert probe(attempt("open('/proc/%d/environ' % __import__('os').getppid(), 'rb').read()")) == \
        "refused: PermissionError"
    assert probe(attempt(f"open({os.path.expanduser('~/.bashrc')!r}).read()")) in (
        "refused: PermissionError", "refused: FileNotFoundError")


def test_it_writes_only_inside_its_own_folder(probe, tmp_path):
    target = tmp_path / "written"
    assert probe(attempt(f"open({str(target)!r}, 'w').write('x')")) == "refused: PermissionError"
    assert not target.exists()
    assert probe("open('mine.txt', 'w').write('ok'); result = open('mine.txt').read()") == "ok"


def test_it_cannot_signal_its_parent(probe):
    assert probe(attempt("import os, signal\nos.kill(os.getppid(), signal.SIGTERM)")) == "refused: PermissionError"


def test_a_child_that_sends_a_pickle_is_ended_and_nothing_it_sent_runs(tmp_path):
    marker = tmp_path / "unpickled"
    code = (f"import os, pickle, struct\nclass P:\n    def __reduce__(self):\n"
            f"        return (exec, (\"open({str(marker)!r}, 'w').write('ran')\",))\n"
            "data = pickle.dumps(('ok', P()))\n"
            "for fd in range(3, 30):\n    try:\n        os.write(fd, struct.pack('!Q', len(data)) + data)\n"
            "    except OSError:\n        pass\nimport time; time.sleep(5)\n")
    with Child("tests.engine.sandbox_probe", memory_mb=1024) as child:
        with pytest.raises(ChildDied) as died:
            child.ask({"code": code}, timeout=20)
    assert "not an answer" in died.value.why
    assert not marker.exists()


def test_nothing_is_left_running_after_the_child_is_killed():
    with Child("tests.engine.sandbox_probe", memory_mb=1024) as child:
        pid = child.ask({"code": "import os; result = os.getpid()"}, timeout=20)[0]
    until_true(lambda: _ended(pid), timeout=10, what=f"process {pid} to end")


def _ended(pid: int) -> bool:
    try:
        return open(f"/proc/{pid}/stat").read().split()[2] == "Z"
    except FileNotFoundError:
        return True


# -- the runner's real child, with learner files --------------------------------------------------
HEAD = "from numba import cuda\nimport os\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n"
TAIL = "    out[i] = a[i] + 10\n"


def learner_file(body: str) -> str:
    return HEAD + "".join("    " + line + "\n" for line in body.splitlines()) + TAIL


@pytest.fixture(scope="module")
def runner():
    r = Runner("sim")
    yield r
    r.close()


def test_a_learner_kernel_cannot_print_a_key_from_the_environment(runner, monkeypatch):
    monkeypatch.setenv("GPU_TUTOR_PLANTED_KEY", PLANTED)
    runner.close()  # a fresh child, started with the planted key in our environment
    v = runner.check("map", learner_file("if i == 0:\n    print(os.environ.get('GPU_TUTOR_PLANTED_KEY'))")).verdict
    assert v.printed.strip().splitlines()[0] == "None" and PLANTED not in v.printed


def test_a_learner_kernel_cannot_reach_a_loopback_listener(runner):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(3)
    got = []
    listener = threading.Thread(target=lambda: got.append(_accept(server)))
    listener.start()
    port = server.getsockname()[1]
    runner.check("map", learner_file(f"if i == 0:\n    import socket\n    try:\n        socket.create_connection("
                                     f"('127.0.0.1', {port}), timeout=1).sendall(b'leak')\n    except OSError:\n"
                                     "        pass"))
    listener.join()
    server.close()
    assert got == [None]


def _accept(server):
    try:
        conn, _ = server.accept()
        return conn.recv(100)
    except OSError:
        return None


def test_a_learner_kernel_cannot_leave_a_process_behind(runner):
    v = runner.check("map", learner_file("if i == 0:\n    try:\n        pid = os.fork()\n        if pid == 0:\n"
                                         "            os.setsid()\n            __import__('time').sleep(30)\n"
                                         "            os._exit(0)\n        print('CHILD', pid)\n"
                                         "    except OSError as e:\n        print('refused', e.errno)")).verdict
    assert v.printed.strip().splitlines()[0] == "refused 1"


def test_a_learner_file_that_writes_a_pickle_to_the_answer_channel_runs_nothing_in_the_tutor(runner, tmp_path):
    marker = tmp_path / "parent-ran"
    source = (f"import os, pickle, struct\nfrom numba import cuda\n\n\nclass P:\n    def __reduce__(self):\n"
              f"        return (exec, (\"open({str(marker)!r}, 'w').write(str(__import__('os').getpid()))\",))\n\n\n"
              "data = pickle.dumps(('ok', P()))\nfor fd in range(3, 30):\n    try:\n"
              "        os.write(fd, struct.pack('!Q', len(data)) + data)\n    except OSError:\n        pass\n\n\n"
              "@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n    out[i] = a[i] + 10\n")
    v = runner.check("map", source).verdict
    assert not v.passed and v.failures[0].kind == "runtime_error"
    said = v.failures[0].message  # garbage, or more arrays than the check's outputs: refused either way
    assert "not an answer" in said or "larger than the check asked for" in said
    assert not marker.exists()
    assert runner.check("map", HEAD + TAIL).verdict.passed  # a fresh child takes over


# Escaped today's main (42f2d21): this map kernel solves nothing, yet it PASSED every config: it
# found the checker's `expected` in a frame of the child and copied it into `out`.
ANSWER_THIEF = """from numba import cuda
import sys


@cuda.jit
def kernel(out, a):
    i = cuda.threadIdx.x
    f = sys._getframe()
    while f is not None and "expected" not in f.f_locals:
        f = f.f_back
    if f is not None:
        out[i] = f.f_locals["expected"][i]
"""


def test_the_answer_is_not_in_the_process_that_runs_the_kernel(runner):
    v = runner.check("map", ANSWER_THIEF).verdict
    assert not v.passed and "wrong_output" in v.kinds()


def test_no_device_but_the_harmless_ones_can_be_opened(probe):
    assert probe("result = len(open('/dev/urandom', 'rb').read(8))") == 8
    for device in ("/dev/mem", "/dev/kmsg", "/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/loop0", "/dev/kvm", "/dev/tty"):
        if os.path.exists(device):
            assert probe(attempt(f"open({device!r}, 'rb').read(1)")).startswith("refused"), device


def test_it_cannot_change_a_files_mode_or_owner_nor_raise_its_own_limits(probe, tmp_path):
    target = tmp_path / "mine"
    target.write_text("x")
    os.chmod(target, 0o600)
    assert probe(attempt(f"import os\nos.chmod({str(target)!r}, 0o777)")) == "refused: PermissionError"
    assert probe(attempt(f"import os\nos.chown({str(target)!r}, 0, 0)")) == "refused: PermissionError"
    assert os.stat(target).st_mode & 0o777 == 0o600
    said = probe(attempt("import resource\nsoft, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
                         "resource.setrlimit(resource.RLIMIT_AS, (hard, hard))\n"
                         "resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))"))
    assert said.startswith("refused")
    assert probe("import resource; result = resource.getrlimit(resource.RLIMIT_AS)[1]") == 1024 << 20
