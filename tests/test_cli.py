"""The headless CLI: exit codes, one JSON object, plain-words text."""

import json

import pytest
from cli_run import run_cli


def gpu_tutor(*args):
    proc = run_cli(*args, env={**__import__("os").environ, "GPU_TUTOR_NO_GPU": "1"})
    return proc.returncode, proc.stdout, proc.stderr


def test_list_json_has_both_tracks():
    code, out, _ = gpu_tutor("list", "--json")
    data = json.loads(out)
    assert code == 0
    tracks = {t["id"]: [p["id"] for p in t["puzzles"]] for t in data["tracks"]}
    assert tracks["classic"][0] == "map" and len(tracks["classic"]) == 14
    assert len(tracks["advanced"]) >= 8


def test_check_passing_reference_exits_0(kernel_file, catalog):
    path = kernel_file(catalog.get("dot").reference)
    code, out, _ = gpu_tutor("check", "dot", str(path), "--seed", "3")
    assert code == 0 and "dot on sim: PASSED" in out


def test_check_json_is_exactly_one_object_with_the_contract_keys(kernel_file, catalog):
    path = kernel_file(catalog.get("map").starter)
    code, out, _ = gpu_tutor("check", "map", str(path), "--json", "--seed", "5")
    assert code == 1
    data = json.loads(out)  # one object, nothing else on stdout
    assert set(data) >= {"puzzle", "backend", "passed", "configs", "failures"}
    assert data["passed"] is False and data["backend"] == "sim"
    f = data["failures"][0]
    assert f["kind"] == "wrong_output" and f["array"] == "out" and "message" in f


def test_race_is_reported_in_plain_words(kernel_file):
    path = kernel_file("""import numba
from numba import cuda

TPB = 8


@cuda.jit
def kernel(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    cache[t] = a[i] * b[i] if i < size else 0
    if t == 0:
        acc = 0.0
        for k in range(TPB):
            acc += cache[k]
        out[0] = acc
""")
    code, out, _ = gpu_tutor("check", "dot", str(path), "--seed", "1")
    assert code == 1
    assert "data race" in out and "no barrier between them" in out and "line 12" in out


@pytest.mark.parametrize("args,needle", [
    (("check", "nope", "x.py"), "unknown puzzle 'nope'"),
    (("check", "map", "/no/such/file.py"), "no such file"),
])
def test_usage_errors_exit_2_with_one_line(args, needle):
    code, out, err = gpu_tutor(*args)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1 and out == ""


def test_trace_draws_phases_and_cells(kernel_file, catalog):
    path = kernel_file(catalog.get("dot").reference)
    code, out, _ = gpu_tutor("trace", "dot", str(path), "--seed", "2")
    assert code == 0
    assert "block (0,), phase 0 (ends at the barrier on line" in out
    assert "block (0,), phase 1" in out and "wrote out[0]" in out
    assert "shared 'cache' of block (0,)" in out


def test_show_starter_prints_the_file():
    code, out, _ = gpu_tutor("show", "map", "--starter")
    assert code == 0 and "FILL ME IN" in out and "def kernel(out, a)" in out


def test_no_arguments_orients_the_learner():
    code, out, _ = gpu_tutor()
    assert code == 0 and "gpu-tutor show map" in out and "backend: sim" in out


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_the_optimisers_explanation_and_code_from_the_model_are_printed_escaped(tmp_path):
    import os

    from loopback_llm import ChatServer

    from tutor.coach.tasks import load_task

    task = load_task("reduce_sum")
    start = tmp_path / "naive.py"
    start.write_text(task.source("naive"))
    expert = task.source("expert").replace("\n", "\n# \x1b]0;pwned\x07\n", 1)  # a comment in its code, too
    reply = f"Here it is.\n```python\n{expert}```\n\n## Why it is faster\none atomic per block \x1b]0;pwned\x07\x1b[2J"
    (tmp_path / "none.toml").write_text("")
    env = {**os.environ, "OPENAI_API_KEY": "sk-loopback", "GPU_TUTOR_DATA": str(tmp_path / "data"),
           "GPU_TUTOR_CONFIG": str(tmp_path / "none.toml"), "GPU_TUTOR_NO_GPU": "1"}
    with ChatServer([reply]) as server:
        done = run_cli("optimise", "reduce_sum", str(start), "--model", "openai/tiny", "--api-base", server.url,
                       "--rounds", "1", "--backend", "sim", env=env)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout
    assert "one atomic per block \\x1b]0;pwned\\x07\\x1b[2J" in done.stdout
    assert "+# \\x1b]0;pwned\\x07" in done.stdout  # the diff


def test_what_a_kernel_prints_and_the_errors_it_raises_reach_the_terminal_escaped(kernel_file):
    """Escaped today's main: a kernel's print and its error message (which quotes the code) went
    to the terminal raw, so a file could set the window title or clear the screen."""
    path = kernel_file("from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n"
                       "    if i == 0:\n        print('\\x1b]0;pwned\\x07\\x1b[2J')\n"
                       "        raise ValueError('\\x1b]8;;https://evil.example\\x1b\\\\here')\n    out[i] = a[i] + 10\n")
    code, out, _ = gpu_tutor("check", "map", str(path), "--backend", "sim")
    assert code == 1 and "\x1b" not in out and "\x07" not in out
    assert "\\x1b]0;pwned\\x07\\x1b[2J" in out and "\\x1b]8;;https://evil.example" in out


def _optimise(tmp_path, server, *flags, config=""):
    """`gpu-tutor optimise reduce_sum` against a loopback server, with no key in the environment."""
    import os

    from tutor.coach.tasks import load_task

    start = tmp_path / "naive.py"
    start.write_text(load_task("reduce_sum").source("naive"))
    settings = tmp_path / "config.toml"
    settings.write_text(config)
    env = {**os.environ, "GPU_TUTOR_DATA": str(tmp_path / "data"), "GPU_TUTOR_CONFIG": str(settings),
           "GPU_TUTOR_NO_GPU": "1"}
    env.pop("OPENAI_API_KEY", None)
    return run_cli("optimise", "reduce_sum", str(start), "--model", "openai/tiny", "--api-base", server.url,
                   "--backend", "sim", *flags, env=env)


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_the_optimisers_rounds_default_comes_from_the_ai_settings_and_the_flag_overrides_it(tmp_path):
    from loopback_llm import ChatServer

    with ChatServer(["no code here"] * 5) as server:
        done = _optimise(tmp_path, server, config="[ai]\noptimise_rounds = 2\noptimise_wall_time = \"1h\"\n")
    assert done.returncode == 1, done.stderr  # no verified candidate
    assert "stopped (rounds: every round of the budget was spent) after 2 round(s)" in done.stdout and len(server.requests) == 2
    assert "round 1: asking openai/tiny ... (1h 00m of 1h 00m wall time left)" in done.stderr
    with ChatServer(["no code here"] * 5) as server:
        done = _optimise(tmp_path, server, "--rounds", "1", config="[ai]\noptimise_rounds = 2\n")
    assert "stopped (rounds: every round of the budget was spent) after 1 round(s)" in done.stdout and len(server.requests) == 1


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_when_the_wall_time_runs_out_the_cli_says_so_and_how_to_give_it_more(tmp_path):
    from loopback_llm import ChatServer

    with ChatServer([("slow", 0.4, "I would use shared memory for the partial sums here")]) as server:
        done = _optimise(tmp_path, server, config="[ai]\noptimise_wall_time = \"2s\"\n")
    assert "stopped (time: the wall-time budget ran out) after 1 round(s)" in done.stdout, done.stdout + done.stderr
    assert done.stderr.endswith(
        "The wall-time budget of 2s ran out: it counts the model's replies and the verification, and a round that "
        "had begun ran to its end. Give it more with --budget 4s, or set optimise_wall_time = \"4s\" under [ai] in "
        f"{tmp_path / 'config.toml'}.\n")
    assert server.requests[0]["authorization"] == "Bearer sk-no-key-required"


def test_the_optimise_help_says_the_budget_is_wall_time():
    code, out, _ = gpu_tutor("optimise", "--help")
    assert code == 0
    assert "wall-clock time for the whole session, model replies and verification included" in " ".join(out.split())


@pytest.mark.parametrize("flags, message", [
    (("--budget", "0m"), "--budget must be more than 0 (e.g. --budget 30m)"),
    (("--rounds", "0"), "--rounds must be at least 1, not 0"),
])
def test_a_budget_that_cannot_run_is_a_usage_error_before_any_model_call(kernel_file, flags, message):
    from tutor.coach.tasks import load_task

    start = kernel_file(load_task("reduce_sum").source("naive"))
    code, out, err = gpu_tutor("optimise", "reduce_sum", str(start), "--model", "openai/tiny", "--api-base",
                               "http://127.0.0.1:9/v1", *flags)
    assert (code, out, err) == (2, "", f"gpu-tutor: {message}\n")


def _gpu_tutor_with_data(data, *args):
    import os

    env = {**os.environ, "GPU_TUTOR_NO_GPU": "1", "GPU_TUTOR_DATA": str(data)}
    proc = run_cli(*args, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def _some_progress(data):
    from tutor.store import Store

    store = Store(data)
    store.record_open("map")
    store.record_run("map", passed=False)
    store.record_run("map", passed=True)
    store.record_open("zip")
    store.record_run("zip", passed=False)
    store.record_run("zip", passed=False)


def test_list_shows_what_the_learner_solved_and_tried(tmp_path):
    """`list` showed titles only: a learner could not see where they stood."""
    _some_progress(tmp_path / "data")
    code, out, err = _gpu_tutor_with_data(tmp_path / "data", "list")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "Classic puzzles (1 of 14 solved)"
    row = {line.split()[1]: line for line in lines if line.startswith("  ")}
    assert row["map"] == "   1. map                    solved  Map"  # ids padded to the longest, 22
    assert row["zip"] == "   2. zip                    tried   Zip"
    assert row["guard"] == "   3. guard                          Guard"  # not started
    assert any(line.startswith("Advanced techniques (0 of ") for line in lines)
    assert all(len(line) <= 80 for line in lines)


def test_list_json_carries_each_puzzles_progress(tmp_path):
    _some_progress(tmp_path / "data")
    code, out, _ = _gpu_tutor_with_data(tmp_path / "data", "list", "--json")
    assert code == 0
    data = json.loads(out)
    classic = next(t for t in data["tracks"] if t["id"] == "classic")
    puzzles = {p["id"]: p for p in classic["puzzles"]}
    assert classic["solved"] == 1
    assert puzzles["map"]["status"] == "solved" and puzzles["map"]["progress"]["solved"] is True
    assert puzzles["map"]["progress"]["attempts"] == 2 and puzzles["map"]["progress"]["solved_at"]
    assert puzzles["zip"]["status"] == "attempted" and puzzles["zip"]["progress"]["attempts"] == 2
    assert puzzles["guard"]["status"] == "not started" and puzzles["guard"]["progress"]["attempts"] == 0


def test_list_with_no_progress_yet_says_none_solved(tmp_path):
    code, out, _ = _gpu_tutor_with_data(tmp_path / "fresh", "list")
    assert code == 0 and out.splitlines()[0] == "Classic puzzles (0 of 14 solved)"
    assert not (tmp_path / "fresh").exists()  # reading progress writes nothing


def test_trace_wraps_a_threads_accesses_under_a_hanging_indent(kernel_file):
    """One thread's sixteen reads were one line of some 600 characters."""
    path = kernel_file("from numba import cuda\n\nTPB = 8\n\n\n@cuda.jit\ndef kernel(out, a, b, size):\n"
                       "    if cuda.threadIdx.x == 0:\n        total = 0.0\n        for k in range(size):\n"
                       "            total += a[k] * b[k]\n        out[0] = total\n")
    code, out, _ = gpu_tutor("trace", "dot", str(path), "--seed", "1")
    assert code == 1
    lines = out.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("  thread (0,): read a[0] = "))
    assert all(len(line) <= 80 for line in lines[:start + 8])
    indent = " " * len("  thread (0,): ")
    following = lines[start + 1:start + 6]
    assert all(line.startswith(indent + "read ") for line in following), following
    assert lines[start].endswith(";") and "... 5 more" in " ".join(lines[start:start + 8])


def test_profile_counts_sectors_and_conflicts_by_line(tmp_path, catalog):
    kernel = tmp_path / "t.py"
    kernel.write_text(catalog.get("transpose").reference)
    done = run_cli("profile", "transpose", kernel, "--json", env={**__import__("os").environ, "GPU_TUTOR_NO_GPU": "1"})
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["passed"] and out["configs"][0]["metrics"]["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 2
    text = run_cli("profile", "transpose", kernel).stdout
    assert "lines by cost:" in text and "sectors/request" in text and "not modelled" in text
    assert run_cli("profile", "transpose", tmp_path / "missing.py").returncode == 2


def test_profile_models_occupancy_and_the_memory_bound_for_a_named_device(tmp_path, catalog):
    kernel = tmp_path / "m.py"
    kernel.write_text(catalog.get("matmul_tiled").reference)
    done = run_cli("profile", "matmul_tiled", kernel, "--json", "--device", "h200")
    config = json.loads(done.stdout)["configs"][0]
    assert config["occupancy"]["shared_per_block"] > 0 and config["memory_bound"]["seconds"] > 0
    assert "registers are unknown" in run_cli("profile", "matmul_tiled", kernel).stdout
    assert run_cli("profile", "matmul_tiled", kernel, "--device", "h100").returncode == 2


def test_profile_line_shows_which_lanes_touched_which_banks(tmp_path, catalog):
    kernel = tmp_path / "m.py"
    kernel.write_text(catalog.get("matmul_tiled").reference)
    out = run_cli("profile", "matmul_tiled", kernel, "--line", "46").stdout
    assert "shared load of a_tile" in out and "2 wavefronts" in out and "2 different words" in out


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_profile_of_a_coaching_task_counts_each_kernel_at_the_scored_shape_with_its_modelled_time(tmp_path):
    naive = run_cli("profile", "reduce_sum", "kernels/reduce_sum/naive.py", "--json")
    assert naive.returncode == 0, naive.stderr
    out = json.loads(naive.stdout)
    assert out["passed"] and len(out["kernels"]) == 2 and out["modelled_s"] > 0
    adds = out["kernels"][1]["metrics"]
    assert adds["atomics"] == 20011 and adds["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 626
    expert = json.loads(run_cli("profile", "reduce_sum", "kernels/reduce_sum/expert.py", "--json").stdout)
    assert expert["modelled_s"] < out["modelled_s"]
    text = run_cli("profile", "reduce_sum", "kernels/reduce_sum/naive.py").stdout
    assert "launch 2 (add_all) at shape (20011,)" in text and "modelled H200 time" in text
    assert "not a measurement" in text


def test_a_childs_forged_counters_are_dropped_not_shown():
    from tutor.coach.verify import _counted

    good = {"lines": [{"line": 3, "space": "global", "op": "ld", "array": "x", "requests": 1, "sectors": 4,
                       "ideal_sectors": 4, "wavefronts": 0, "lanes": 32, "same_address": 0}], "notes": []}
    assert _counted([good])[0]["metrics"]["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 4
    for bad in ({**good, "lines": [{**good["lines"][0], "sectors": "4; rm -rf"}]}, {"lines": "no"}, 7):
        assert _counted([bad]) is None
    assert _counted("nope") is None and _counted([good] * 65) is None


@pytest.mark.parametrize("with_progress", [False, True])
def test_list_lines_up_every_title_after_ids_longer_than_20_characters(tmp_path, catalog, with_progress):
    """`perf_reduce_sequential` (22 characters) pushed its title two columns right of the others."""
    if with_progress:
        _some_progress(tmp_path / "data")
    code, out, _ = _gpu_tutor_with_data(tmp_path / "data", "list")
    rows = [line for line in out.splitlines() if line.startswith("  ")]
    assert code == 0 and len(rows) == len(catalog.ids()) and any("perf_reduce_sequential" in r for r in rows)
    starts = {row.index(catalog.get(row.split()[1]).title, len(row.split()[1]) + 6) for row in rows}
    assert len(starts) == 1, rows


def test_doctor_without_a_model_says_what_to_do_not_to_run_doctor(tmp_path):
    env = {k: v for k, v in __import__("os").environ.items() if k != "GPU_TUTOR_CONFIG"}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), GPU_TUTOR_DATA=str(tmp_path / "data"))
    done = run_cli("doctor", env=env)  # no settings file where the platform keeps them
    assert done.returncode == 1 and "no model is configured" in done.stdout, done.stdout + done.stderr
    assert "gpu-tutor doctor" not in done.stdout  # it said "`gpu-tutor doctor` helps", to doctor's own reader
    assert "--model" in done.stdout and "`gpu-tutor config --init` writes a commented settings file" in done.stdout
    (tmp_path / "config.toml").write_text("[ai]\n")
    done = run_cli("doctor", env={**env, "GPU_TUTOR_CONFIG": str(tmp_path / "config.toml")})
    assert done.returncode == 1 and "gpu-tutor doctor" not in done.stdout
    assert "edit the settings file above and set `model` under [ai]" in done.stdout


def test_counters_say_1_request_and_1_sector_not_1_requests():
    from tutor.engine.analysis.counters import summary_text

    metrics = {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 1, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 1,
               "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": 2, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 8,
               "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 1}
    text = summary_text({"metrics": metrics, "lines": []}, [])
    assert "global loads: 1 request, 1 sector," in text and "global stores: 2 requests, 8 sectors," in text
    assert "shared loads: 1 bank conflict" in text and "shared stores: 0 bank conflicts" in text
