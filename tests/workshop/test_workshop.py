"""Workshop files: what a facilitator may write, and the one-line errors for what they may not."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tutor.workshop.config import EXAMPLE, WorkshopError, load_workshop, reference_refusal
from cli_run import run_cli

ROOT = Path(__file__).resolve().parents[2]


def workshop(tmp_path, catalog, text):
    path = tmp_path / "w.toml"
    path.write_text(text)
    return load_workshop(path, catalog)


def error(tmp_path, catalog, text):
    with pytest.raises(WorkshopError) as e:
        workshop(tmp_path, catalog, text)
    return str(e.value)


def test_the_example_from_workshop_init_is_a_valid_workshop(tmp_path, catalog):
    w = workshop(tmp_path, catalog, EXAMPLE)
    assert w.puzzles[:3] == ("map", "zip", "guard") and w.solutions == "after-solving"
    assert w.hints == "authored" and w.backend == "auto" and w.ask_name


def test_a_minimal_workshop_takes_the_defaults(tmp_path, catalog):
    w = workshop(tmp_path, catalog, 'title = "Friday"\npuzzles = ["dot", "map"]\n')
    assert (w.title, w.puzzles, w.solutions, w.hints, w.backend, w.ask_name) == \
        ("Friday", ("dot", "map"), "after-solving", "authored", "auto", False)


def test_the_restricted_catalog_has_only_the_workshop_puzzles_in_its_order(tmp_path, catalog):
    w = workshop(tmp_path, catalog, 'title = "Friday"\npuzzles = ["dot", "map"]\n')
    seen = w.restrict(catalog)
    assert seen.ids() == ["dot", "map"] and [p.id for p in seen.ordered()] == ["dot", "map"]
    assert "zip" not in seen.puzzles and "dot" in seen.puzzles
    with pytest.raises(KeyError, match="known puzzles: dot, map.$"):
        seen.get("zip")


@pytest.mark.parametrize("text, wording", [
    ('puzzles = ["map"]\n', "w.toml: title: missing; every workshop file needs a title and a list of puzzles"),
    ('title = "x"\npuzzles = ["map"]\ncolour = "red"\n', "w.toml: colour: unknown key; allowed: title, puzzles,"),
    ('title = "x"\npuzzles = ["map"]\nsolutions = "sometimes"\n',
     "w.toml: solutions: 'sometimes' is not allowed; use one of: 'never', 'after-solving', 'always'"),
    ('title = "x"\npuzzles = ["map"]\nhints = "gpt"\n', "hints: 'gpt' is not allowed; use one of: 'authored', 'ai'"),
    ('title = "x"\npuzzles = ["map"]\nbackend = "tpu"\n',
     "backend: 'tpu' is not allowed; use one of: 'auto', 'sim', 'gpu'"),
    ('title = "x"\npuzzles = ["map", "mapp"]\n', "w.toml: puzzles #2: no puzzle 'mapp'; allowed: map, zip,"),
    ('title = "x"\npuzzles = ["map", "map"]\n', "puzzles #2: 'map' is listed twice (first as #1); list each puzzle once"),
    ('title = "x"\npuzzles = []\n', "puzzles: the list is empty"),
    ('title = "x"\npuzzles = "map"\n', "puzzles: must be a list, not 'map'"),
    ('title = "x"\npuzzles = ["map"]\nask_name = "yes"\n', "ask_name: must be true or false, not 'yes'"),
    ('title = "x"\npuzzles = ["map"]\nfacilitator_sees_code = 1\n',
     "facilitator_sees_code: must be true or false, not 1"),
    ('title = "x"\npuzzles = ["map"]\nhints = "ai"\n',
     "ai.model: missing; hints = \"ai\" needs [ai] model and api_base"),
    ('title = "x"\npuzzles = ["map"]\nhints = "ai"\n[ai]\nmodel = "openai/gpt-4o-mini"\n'
     'api_base = "https://api.openai.com/v1"\n', "ai.api_base: 'https://api.openai.com/v1' is not on this machine or"),
    ('title = "x"\npuzzles = ["map"]\nhints = "ai"\n[ai]\nmodel = "m"\napi_base = "http://127.0.0.1:1"\n'
     'api_key = "sk-1"\n', "ai.api_key: keys are never kept in files"),
    ('title = "x"\npuzzles = ["map"]\n[ai]\nmodel = "m"\n', "ai: only used with hints = \"ai\""),
    ('title = "x"\npuzzles = [\n', "w.toml: not valid TOML"),
])
def test_mistakes_name_the_file_the_key_and_what_is_allowed(tmp_path, catalog, text, wording):
    assert wording in error(tmp_path, catalog, text)


def test_a_missing_file_says_how_to_make_one(tmp_path, catalog):
    with pytest.raises(WorkshopError, match=r"no such workshop file .*gpu-tutor workshop init"):
        load_workshop(tmp_path / "nope.toml", catalog)


def test_authored_hints_mean_no_model_at_all(tmp_path, catalog):
    settings = workshop(tmp_path, catalog, 'title = "x"\npuzzles = ["map"]\n').ai_settings()
    assert settings.model is None and settings.unavailable() is not None


def test_ai_hints_go_only_to_the_local_endpoint_offline(tmp_path, catalog):
    w = workshop(tmp_path, catalog, 'title = "x"\npuzzles = ["map"]\nhints = "ai"\n[ai]\n'
                                    'model = "ollama_chat/qwen2.5-coder:7b"\napi_base = "http://10.0.0.5:11434"\n')
    settings = w.ai_settings()
    assert settings.offline and settings.local_endpoint and settings.unavailable() is None
    assert not settings.full_code_hints


def test_a_gpu_workshop_on_a_laptop_without_one_falls_back_to_the_simulator_and_says_so(tmp_path, catalog):
    w = workshop(tmp_path, catalog, 'title = "x"\npuzzles = ["map"]\nbackend = "gpu"\n')
    assert w.backend_here(gpu_present=True) == ("gpu", None)
    backend, notice = w.backend_here(gpu_present=False)
    assert backend == "sim" and "this machine has none: using the simulator" in notice


def test_the_solution_policies():
    assert reference_refusal("always", solved=False) is None
    assert reference_refusal("after-solving", solved=True) is None
    assert reference_refusal("after-solving", solved=False) == "The reference opens once you have solved this puzzle."
    assert reference_refusal("never", solved=True) == \
        "Your facilitator has turned reference solutions off for this workshop."


def gpu_tutor(*args, env=None, cwd=None):
    env = {**os.environ, "GPU_TUTOR_NO_GPU": "1", **(env or {})}
    return run_cli(*args, env=env, cwd=cwd or ROOT)


def test_workshop_init_writes_a_file_that_check_accepts_and_never_overwrites(tmp_path):
    path = tmp_path / "w.toml"
    done = gpu_tutor("workshop", "init", str(path))
    assert done.returncode == 0 and path.read_text() == EXAMPLE
    done = gpu_tutor("workshop", "check", str(path))
    assert done.returncode == 0, done.stderr
    assert "OK" in done.stdout and " 1. map" in done.stdout and "authored only (no network)" in done.stdout
    again = gpu_tutor("workshop", "init", str(path))
    assert again.returncode == 2 and "exists" in again.stderr


def test_whether_the_facilitator_sees_code_is_off_unless_the_file_says_so_and_check_says_which(tmp_path, catalog):
    assert not workshop(tmp_path, catalog, 'title = "x"\npuzzles = ["map"]\n').facilitator_sees_code
    assert "# facilitator_sees_code = false" in EXAMPLE
    assert not workshop(tmp_path, catalog, EXAMPLE).facilitator_sees_code
    assert workshop(tmp_path, catalog, 'title = "x"\npuzzles = ["map"]\nfacilitator_sees_code = true\n') \
        .facilitator_sees_code
    done = gpu_tutor("workshop", "check", str(tmp_path / "w.toml"))
    assert "code:      the facilitator may read learners' code in `gpu-tutor room`" in done.stdout
    (tmp_path / "w.toml").write_text('title = "x"\npuzzles = ["map"]\n')
    done = gpu_tutor("workshop", "check", str(tmp_path / "w.toml"))
    assert "code:      learners' own; `gpu-tutor room` shows none (facilitator_sees_code = true allows it)" \
        in done.stdout


def test_a_bad_workshop_file_stops_the_cli_with_one_line_and_status_2(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text('title = "x"\npuzzles = ["nope"]\n')
    for args, env in ((["--workshop", str(path), "export", "--out", str(tmp_path / "e.json")], {}),
                      (["export", "--out", str(tmp_path / "e.json")], {"GPU_TUTOR_WORKSHOP": str(path)})):
        done = gpu_tutor(*args, env={"GPU_TUTOR_DATA": str(tmp_path / "data"), **env})
        assert done.returncode == 2
        assert done.stderr.startswith(f"gpu-tutor: {path}: puzzles #1: no puzzle 'nope'")
        assert "Traceback" not in done.stderr


def test_the_workshop_export_report_and_queue_modules_import_no_textual_numba_or_litellm():
    code = ("import sys, tutor.workshop.config, tutor.workshop.cli, tutor.workshop.learner, "
            "tutor.workshop.export, tutor.workshop.report, tutor.engine.process.gpulock\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'numba', 'litellm')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


def test_a_5000_deep_array_in_a_workshop_file_is_one_line_naming_the_file_not_a_traceback(tmp_path, catalog):
    text = 'title = "x"\npuzzles = ' + "[" * 5000 + "]" * 5000 + "\n"
    assert error(tmp_path, catalog, text) == (f"{tmp_path / 'w.toml'}: not valid TOML: arrays or tables are nested "
                                              "too deeply (thousands of levels) to be read; write the values out flat")
    done = gpu_tutor("workshop", "check", str(tmp_path / "w.toml"))
    assert done.returncode == 2 and "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_title_that_would_drive_the_learners_terminals_is_refused_and_shown_escaped(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text('title = "\\u001b]0;pwned\\u0007\\u001b[2JGPU club"\npuzzles = ["map"]\n')
    done = gpu_tutor("workshop", "check", str(path))  # today: "title:     " then the raw escapes
    assert done.returncode == 2 and "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stderr
    assert done.stderr == (f"gpu-tutor: {path}: title: '\\x1b]0;pwned\\x07\\x1b[2JGPU club' holds control "
                           "characters; use letters, digits, spaces and punctuation\n")


def test_a_pipe_given_as_the_workshop_file_is_refused_at_once(tmp_path, catalog):
    os.mkfifo(tmp_path / "w.toml")
    with pytest.raises(WorkshopError, match="w.toml: cannot be read: is a named pipe"):
        load_workshop(tmp_path / "w.toml", catalog)


def test_workshop_check_numbers_puzzles_from_1_in_its_listing_and_in_its_errors(tmp_path):
    """The listing said ` 2. zip` and an error in the same place said `puzzles[1]`."""
    path = tmp_path / "w.toml"
    path.write_text('title = "x"\npuzzles = ["map", "zip"]\n')
    assert " 2. zip" in gpu_tutor("workshop", "check", str(path)).stdout
    path.write_text('title = "x"\npuzzles = ["map", "zipp"]\n')
    done = gpu_tutor("workshop", "check", str(path))
    assert done.returncode == 2 and f"{path}: puzzles #2: no puzzle 'zipp'" in done.stderr


def test_workshop_check_lines_up_titles_after_ids_longer_than_20_characters(tmp_path, catalog):
    path = tmp_path / "w.toml"
    path.write_text('title = "x"\npuzzles = ["map", "perf_reduce_sequential", "perf_transpose_shared"]\n')
    listed = [line for line in gpu_tutor("workshop", "check", str(path)).stdout.splitlines()
              if line.startswith("   ") and ". " in line]
    assert len(listed) == 3
    starts = {line.index(catalog.get(pid).title) for line, pid in
              zip(listed, ["map", "perf_reduce_sequential", "perf_transpose_shared"])}
    assert len(starts) == 1, listed


def test_a_host_name_for_a_workshops_model_server_asks_for_its_ip_address(tmp_path, catalog):
    """README calls `gpu-box` a server of your own (it is: it gets no key); a workshop is offline, and
    a host name needs DNS. It said `gpu-box` was "not on this machine or the local network"."""
    said = error(tmp_path, catalog, 'title = "x"\npuzzles = ["map"]\nhints = "ai"\n[ai]\nmodel = "m"\n'
                                    'api_base = "http://gpu-box:8000/v1"\n')
    assert "not on this machine or the local network" not in said
    assert "ai.api_base: 'http://gpu-box:8000/v1' names your server by a host name, which takes a DNS lookup" in said
    assert "give its IP address instead" in said
    readme = (ROOT / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| `hints` |"))
    assert "`gpu-box` would need DNS" in row and "IP address" in row  # README says the same
