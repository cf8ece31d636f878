"""The commands that talk to a model: `hint` (streamed, through the leak guard, else authored),
`doctor` (what model is configured, and one tiny request) and `config` (the settings file).

Together because they share the [ai] settings (and main()'s --model/--api-base/--offline options);
the hint machinery and the model client (so litellm) are imported inside each command, so no other
command pays for them.
"""

from __future__ import annotations

import os
import sys

from ..engine.runner import Runner
from tutor.textsafe import terminal_safe
from .inputs import UsageError, read_inputs


def cmd_hint(args) -> int:
    from tutor.ai.config import settings_for

    puzzle, source, filename = read_inputs(args)
    settings = settings_for(args)
    if args.level == 4 and not args.again:
        raise UsageError("--level 4 asks for the full code: ask again with --level 4 --again if you are sure")
    with Runner("sim", session=args.session) as runner:  # one child: the learner's check, then the leak guard's
        return _hint_with(runner, args, puzzle, source, filename, settings)


def _hint_with(runner, args, puzzle, source, filename, settings) -> int:
    from tutor.ai.hints import HintLog, SimChecker, ask_hint, authored_hint, failure_context, level_name
    from tutor.store import default_root

    result = runner.check(puzzle.id, source, filename, keep_traces=True, compile=False)
    if result.verdict.passed:
        print(f"{puzzle.id}: your kernel already passes every config; no hint needed.")
        return 0
    shown = [h for h in (authored_hint(puzzle, n) for n in range(1, min(args.level, 4))) if h]
    reason = settings.unavailable()
    if reason is None:
        print(f"Hint {args.level} ({level_name(args.level)}) from {settings.model}:", file=sys.stderr)
    streamed = []
    progress = sys.stderr.isatty()

    def on_text(text):  # the whole reply, once the leak guard passed it; the model's words are shown, never obeyed
        streamed.append(text)
        sys.stdout.write(terminal_safe(text))
        sys.stdout.flush()

    def on_progress(received):  # nothing of a reply shows before the guard has judged it whole
        if progress:
            sys.stderr.write(f"\r  receiving the hint ({received} characters), checked before it is shown ...")
            sys.stderr.flush()

    def on_status(text):
        if progress:
            sys.stderr.write("\n")
        sys.stderr.write(f"[{terminal_safe(text)}]\n")
        sys.stderr.flush()

    with SimChecker(puzzle.id, runner=runner) as passes:
        outcome = ask_hint(puzzle, args.level, source, failure_context(result), shown, settings, passes=passes,
                           on_text=on_text, on_status=on_status, on_progress=on_progress,
                           log=HintLog(default_root() / "ai-hints.jsonl"))
    if progress and reason is None:
        sys.stderr.write("\n")
    if outcome.source == "ai":
        print()
        print(f"[{outcome.usage.text()}]", file=sys.stderr)
    else:
        if streamed:
            print()
        if outcome.note:
            print(terminal_safe(outcome.note), file=sys.stderr)
        print(f"Hint {min(args.level, 3)} ({level_name(min(args.level, 3))}): {terminal_safe(outcome.text)}")
    return 0


def cmd_doctor(args) -> int:
    from tutor.ai.config import config_path, settings_for
    from tutor.ai.llm import AIError, complete

    settings = settings_for(args)
    path = config_path()
    print(f"settings file: {path} ({'found' if path.is_file() else 'not there: defaults'})")
    print(f"model:    {settings.model or '(none)'}")
    print(f"api_base: {settings.api_base or '(the provider default)'}"
          + (" (local)" if settings.local_endpoint else ""))
    print(f"offline:  {'yes' if settings.offline else 'no'}")
    print(f"full-code hints: {'allowed' if settings.full_code_hints else 'not allowed'}")
    known = [v for v in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY",
                         "GROQ_API_KEY", "OPENROUTER_API_KEY", "HOSTED_VLLM_API_KEY") if os.environ.get(v)]
    if settings.api_key_env:
        state = "set" if os.environ.get(settings.api_key_env) else "NOT set"
        print(f"key:      from ${settings.api_key_env} ({state})")
    else:
        print(f"keys in the environment: {', '.join(known) if known else 'none of the usual variables'}")
    if not settings.model:  # the settings' own reason sends the learner here, to `doctor`: say what to do
        where = "edit the settings file above" if path.is_file() else \
            "`gpu-tutor config --init` writes a commented settings file"
        print("AI hints: off: no model is configured. Name one with --model (and --api-base for a server of "
              f"your own), or {where} and set `model` under [ai]. Authored hints work without a model.")
        return 1
    reason = settings.unavailable()
    if reason:
        print(f"AI hints: off: {reason}. Authored hints work without a model.")
        return 1
    print("asking for one word ...", flush=True)
    messages = [{"role": "user", "content": "Reply with the single word: ready"}]
    try:
        stream = complete(settings, messages, max_tokens=8)
    except AIError as e:
        print(f"FAILED ({e.kind}): {terminal_safe(e.message)}")
        return 1
    print(terminal_safe(f"OK: {settings.model} answered {stream.text.strip()[:40]!r} ({stream.usage.text()})"))
    return 0


def cmd_config(args) -> int:
    from tutor.ai.config import EXAMPLE, config_path, load_settings

    if args.check:
        return cmd_doctor(args)
    path = config_path()
    if args.init:
        if path.exists():
            raise UsageError(f"{path} exists; edit it, or remove it first")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(EXAMPLE, encoding="utf-8")
        print(f"wrote {path}")
        return 0
    settings = load_settings()
    print(f"settings file: {path} ({'found' if path.is_file() else 'not there'})")
    print(f"model = {settings.model!r}, api_base = {settings.api_base!r}, offline = {settings.offline}, "
          f"full_code_hints = {settings.full_code_hints}")
    return 0
