"""The ``toolweave`` command line (docs/guides/cli.md): exit 2 on bad input, 130 on Ctrl-C (X1)."""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import logging
import os
import shlex
import sys
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from toolweave.cli import eval as cli_eval
from toolweave.cli import ingest as cli_ingest

if TYPE_CHECKING:
    from toolweave.cli.session import Session, Turn
    from toolweave.tools.texts import Texts

# Only the standard library above (and the eval and ingest parsers): ``--help`` and usage
# errors answer without loading LangGraph; each command imports what it needs when it runs.

PROG = "toolweave"
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_FAILED = 1
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE (13), as a shell reports it
DATABASE_URL_ENV = "TOOLWEAVE_DATABASE_URL"
DOMAIN_ENV = "TOOLWEAVE_DOMAIN"  # the default --domain (N2), as toolweave.domains.DOMAIN_ENV
CHAT_EXIT_WORDS = frozenset({"exit", "quit", ":q"})


class UsageError(Exception):
    """Raised instead of argparse's print-usage-and-exit, so that errors stay one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


VERBOSE_HELP = (
    "also show the developer lines (routing, gatekeeper, task numbers), log details, "
    "and name the exception of an error"
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = _Parser(prog=PROG, description="Tool orchestration for RAG chatbots on LangGraph.")
    parser.add_argument("-v", "--verbose", action="store_true", help=VERBOSE_HELP)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    domain, store, request = (_Parser(add_help=False) for _ in range(3))
    # fmt: off
    domain.add_argument("--domain", default=os.environ.get(DOMAIN_ENV, "").strip() or None,
        help=f"domain to use (default: ${DOMAIN_ENV}, else the only one installed; with "
        "several and none named, the command lists them and exits with 2)")
    store.add_argument(
        "--data-dir", help="where threads and documents are stored (default: user data dir)")
    store.add_argument("--database-url", metavar="URL",
        default=os.environ.get(DATABASE_URL_ENV, "").strip() or None,
        help="database of threads, and with postgresql:// of ingested documents too "
        f"(default: ${DATABASE_URL_ENV}, else SQLite under the data dir)")
    request.add_argument("--system", action="append", default=[], metavar="S",
        help="system filter of the request; repeat for several")
    request.add_argument("--thread", metavar="ID", help="conversation to continue or start")
    request.add_argument("--user-data", metavar="JSON",
        help="the person's data for the tools' gates and the tools (T4, N3): a JSON object "
        '(\'{"member_id": "..."}\') or @FILE holding one; never stored with the thread '
        "nor logged (X4), so give it again with a reply")
    request.add_argument("--run-timeout", type=float, metavar="S",
        help="seconds one message may take in all, every model call and retry included "
        "(default ten request timeouts: 600 s); past it the run stops and --thread finishes it")
    ask = commands.add_parser("ask", parents=[domain, store, request], help="answer one question")
    ask.add_argument("message", nargs="?",
        help='the question ("-" reads it from standard input); may be left out with --thread '
        "to finish a run that stopped mid-way")
    ask.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    commands.add_parser(
        "chat", parents=[domain, store, request], help="interactive conversation on a thread")
    commands.add_parser("tools", parents=[domain, store], help="list the domain's tools")
    commands.add_parser("domains", parents=[store], help="list the available domains")
    explain = commands.add_parser(
        "explain", parents=[store], help="why each tool did or did not run on a thread")
    explain.add_argument("thread", metavar="THREAD", help="the thread id")
    explain.add_argument("--domain", help="accepted as the reply hint writes it (N2); a "
        "thread is read whatever its domain")
    explain.add_argument(
        "--tool", metavar="NAME", help="only the entries about this tool: why it did (not) run")
    # fmt: on
    cli_ingest.add_parser(commands, parents=[store])
    cli_eval.add_parser(commands, parents=[domain, store])
    for command in commands.choices.values():  # also after the command: `toolweave ask -v`
        command.add_argument(
            "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=VERBOSE_HELP
        )
    return parser


def _print(lines: Sequence[str], out: TextIO) -> None:
    for line in lines:
        print(line, file=out)


def _load(args: argparse.Namespace) -> Any:
    """The domain and its tools; a ``--system`` no tool names is a usage error (exit 2)."""
    from toolweave.domains import load_domain
    from toolweave.tools.eligibility import check_systems

    bundle = load_domain(args.domain, data_dir=args.data_dir, database_url=args.database_url)
    check_systems(getattr(args, "system", ()), bundle[1])
    return bundle


JSON_KINDS = {list: "an array", str: "a string", bool: "a boolean", int: "a number"}
"""What ``json.loads`` gave (a float: a number), in JSON's words, for ``--user-data``'s error."""
USER_DATA_EXAMPLE = '--user-data \'{"member_id": "..."}\' or --user-data @FILE'


def _user_data_text(raw: str) -> str:
    """``--user-data``'s JSON: the value itself, or ``@FILE``'s contents."""
    from pathlib import Path

    from toolweave.state.errors import InvalidRequestError

    if not raw.startswith("@"):
        return raw
    path = Path(raw[1:]).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise InvalidRequestError(f"--user-data: cannot read {path}: {why}") from None


def _user_data(args: argparse.Namespace) -> dict[str, Any] | None:
    """``--user-data`` checked before anything runs (N3, X5); the error never quotes it (X4)."""
    from toolweave.graph.validation import parse_user_data
    from toolweave.state.errors import InvalidRequestError

    raw = getattr(args, "user_data", None)
    if raw is None:
        return None
    try:
        value = json.loads(_user_data_text(raw))
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise InvalidRequestError(
            f"--user-data is not valid JSON ({exc.msg} at {where}); give {USER_DATA_EXAMPLE}"
        ) from None
    if not isinstance(value, dict):
        kind = "null" if value is None else JSON_KINDS.get(type(value), "a number")
        raise InvalidRequestError(
            f"--user-data must be a JSON object, not {kind}; give {USER_DATA_EXAMPLE}"
        )
    return parse_user_data(value)


NO_MESSAGE = "give a message (or --thread ID of a thread whose run stopped mid-way)"


def _language(text: str | None, default: str, own: Any = None) -> str:
    """The language of ``text`` as the graph's detector guesses it, else ``default``."""
    from toolweave.tools.language import detect_language

    return (detect_language(text, own).lang if text else None) or default


def _session(
    args: argparse.Namespace, domain: Any, tools: Any, user_data: Any, persistent: bool
) -> Session:
    """The session of ``ask`` and ``chat``: stored under the data directory when ``persistent``."""
    from toolweave.cli.session import Session
    from toolweave.persistence import data_dir
    from toolweave.state.errors import InvalidRequestError

    if args.run_timeout is not None and not args.run_timeout > 0:
        raise InvalidRequestError("--run-timeout must be positive")
    return Session(
        domain, tools, data_dir=data_dir(args.data_dir) if persistent else None,
        database_url=args.database_url, verbose=args.verbose, run_timeout=args.run_timeout,
        user_data=user_data,
    )  # fmt: skip


def cmd_ask(args: argparse.Namespace, out: TextIO) -> int:
    """``toolweave ask``: answer one question (a one-off run that asks back is kept, Q2)."""
    from toolweave.cli.session import validate_message
    from toolweave.state.documents import as_sentences, as_sources
    from toolweave.state.errors import InvalidRequestError

    message = sys.stdin.read() if args.message == "-" else args.message
    if message is None and args.thread is None:
        raise InvalidRequestError(NO_MESSAGE)
    if message is not None:
        validate_message(message)
    user_data = _user_data(args)
    persistent = args.thread is not None
    thread_id = args.thread if persistent else uuid.uuid4().hex
    domain, tools = _load(args)
    with _session(args, domain, tools, user_data, persistent) as session:
        interrupted = persistent and _interrupted(session, thread_id)
        if interrupted and session.repeats_stopped_question(message, thread_id=thread_id):
            message = None  # S5: finishing the stopped run answers it; asked anew, it acts again
        if message is None and not interrupted:
            raise InvalidRequestError(NO_MESSAGE)
        if args.json:
            finished = session.finish_interrupted(thread_id=thread_id) if interrupted else None
            turn = finished
            if message is not None:
                turn = session.turn(message, thread_id=thread_id, systems=args.system)
            assert turn is not None  # no message: only the interrupted run
            _keep_if_paused(session, turn, thread_id, args, persistent)
            values = turn.values
            said = [s for s in as_sentences(values.get("answer_sentences")) if s.supported]
            sentences = [
                s.model_dump(mode="json", include={"text", "sources", "quotes"}) for s in said
            ]
            earlier = None if finished is None else {
                "answer": finished.values.get("answer"),
                "pending_question": finished.pending_question,
                "pending_choices": finished.pending_choices,
            }  # fmt: skip
            payload = {
                "answer": values.get("answer"),
                "sources": [s.model_dump(mode="json") for s in as_sources(values.get("sources"))],
                "sentences": sentences,
                "activated": list(values.get("activated") or []),
                "llm_calls": values.get("llm_calls", 0), "thread_id": thread_id,
                "assistant": session.assistant.label, "pending_question": turn.pending_question,
                "pending_choices": turn.pending_choices, "finished_interrupted_run": earlier,
            }  # fmt: skip
            print(json.dumps(payload, ensure_ascii=False, indent=2), file=out)
            return 0
        lang = _language(message, domain.default_language, session.own)
        print(_assistant_line(session, lang), file=out)
        if interrupted:
            _print_finish(session, thread_id, domain.default_language, out, _place(args))
        if message is not None:
            turn = session.turn(message, thread_id=thread_id, systems=args.system, out=out)
            _keep_if_paused(session, turn, thread_id, args, persistent)
            gave = getattr(args, "user_data", None) is not None
            _print_outcome(
                turn, "reply_hint", thread_id, out, domain=domain.name, user_data=gave,
                place=_place(args), texts=domain.texts,
            )  # fmt: skip
    return 0


def _keep_if_paused(
    session: Session, turn: Turn, thread_id: str, args: argparse.Namespace, persistent: bool
) -> None:
    """A one-off run that paused on a question: keep its thread so the user can reply."""
    if persistent or turn.pending_question is None:
        return
    from toolweave.cli.session import keep_thread
    from toolweave.persistence import data_dir

    directory = data_dir(args.data_dir)
    keep_thread(session.checkpointer, thread_id, data_dir=directory, database_url=args.database_url)


def _interrupted(session: Session, thread_id: str) -> bool:
    from toolweave.graph.threads import ThreadStatusKind

    return session.status(thread_id).kind is ThreadStatusKind.INTERRUPTED_MID_RUN


def _place(args: argparse.Namespace) -> str:
    """The options that found this command's threads, for the reply hint (N1, Q2).

    ``--data-dir`` as given, ``--database-url URL`` (never the URL itself, X4); ``""``
    when the environment or the default place gives them.
    """
    data_dir = getattr(args, "data_dir", None)
    place = f" --data-dir {shlex.quote(str(data_dir))}" if data_dir else ""
    return place + (" --database-url URL" if getattr(args, "database_url", None) else "")


def _print_finish(
    session: Session, thread_id: str, default_lang: str, out: TextIO, place: str = ""
) -> None:
    """Q5: finish the interrupted run on the thread and show its answer (or its question)."""
    from toolweave.tools.texts import text_for

    question = session.status(thread_id).question
    lang = _language(question, default_lang, session.own)
    key = "finishing" if question else "finishing_unknown"  # the latter names no question
    said = text_for(key, lang, session.texts, thread=thread_id, question=f'"{question}"')
    print(said, file=out)
    turn = session.finish_interrupted(thread_id=thread_id, out=out)
    _print_outcome(
        turn, "reply_hint", thread_id, out, domain=session.domain_name, place=place,
        texts=session.texts,
    )  # fmt: skip


def _print_outcome(
    turn: Turn,
    hint: str,
    thread_id: str,
    out: TextIO,
    *,
    domain: str,
    user_data: bool = False,
    place: str = "",
    texts: Texts | None = None,
) -> None:
    """After a streamed turn: its question and how to reply (N2, N3), or its sources."""
    from toolweave.cli import render
    from toolweave.state.graph_state import message_of
    from toolweave.tools.texts import text_for

    values = turn.values
    lang = message.user_lang if (message := message_of(values)) else None
    if turn.pending_question is None:
        sources, sentences = values.get("sources"), values.get("answer_sentences")
        _print(render.source_lines(sources, lang or "en", sentences, texts), out)
    else:
        _print(render.question_lines(turn.pending_question, turn.pending_choices), out)
    # T4: a reply whose tool's gate refused its user data (given or forgotten) is said to be
    # refused; else the tool that asked silently did not go on and the documents answered
    if tools := render.refused_on_reply(turn.events, turn.asked_by):
        print(text_for("reply_refused", lang, texts, tools=", ".join(tools)), file=out)
    if turn.pending_question is not None:
        more = place + (" --user-data '...'" if user_data else "")
        print(text_for(hint, lang, texts, thread=thread_id, domain=domain, more=more), file=out)


def _assistant_line(session: Session, lang: str) -> str:
    """The first line: which model answers, in the question's language."""
    from toolweave.llm.offline import OfflineAssistant
    from toolweave.tools.texts import text_for

    if isinstance(session.assistant, OfflineAssistant):
        return text_for("offline", lang, session.texts)
    label = session.assistant.label
    article = "the " if label[:1].islower() and lang == "en" else ""
    return text_for("assistant", lang, session.texts, label=article + label)


def cmd_chat(args: argparse.Namespace, out: TextIO) -> int:
    """``toolweave chat``: a conversation on one persisted thread until EOF or ``exit``."""
    from toolweave.cli.session import validate_message
    from toolweave.state.errors import InvalidRequestError
    from toolweave.tools.texts import text_for

    thread_id = args.thread or uuid.uuid4().hex
    user_data = _user_data(args)
    domain, tools = _load(args)
    lang = domain.default_language  # nothing asked yet: the domain's language
    with _session(args, domain, tools, user_data, persistent=True) as session:
        print(_assistant_line(session, lang), file=out)
        more = _place(args) + (" --user-data '...'" if user_data else "")  # never the data (X4)
        hint = text_for(
            "chat_thread", lang, domain.texts, thread=thread_id, domain=domain.name, more=more
        )
        print(hint, file=out)
        print(text_for("chat_leave", lang, domain.texts), file=out)
        if _interrupted(session, thread_id):
            _print_finish(session, thread_id, lang, out, _place(args))
        while True:
            try:
                line = input(text_for("prompt", lang, domain.texts))
            except EOFError:
                print(file=out)
                return 0
            if line.strip().lower() in CHAT_EXIT_WORDS:
                return 0
            if not line.strip():
                continue
            try:
                validate_message(line)
            except InvalidRequestError as exc:
                print(f"{PROG}: error: {exc}", file=sys.stderr)
                continue
            turn = session.turn(line, thread_id=thread_id, systems=args.system, out=out)
            _print_outcome(
                turn, "chat_reply_hint", thread_id, out, domain=session.domain_name,
                texts=session.texts,
            )  # fmt: skip


def cmd_tools(args: argparse.Namespace, out: TextIO) -> int:
    """``toolweave tools``: the domain's registered tools as a table."""
    from toolweave.cli import render
    from toolweave.tools.registry import ToolRegistry

    domain, tools = _load(args)
    registry = ToolRegistry(tools)
    print(f"domain {domain.name}: {len(registry)} tools", file=out)
    _print(render.tools_table(registry, default_retrieval=domain.default_retrieval_tool), out)
    return 0


def cmd_domains(args: argparse.Namespace, out: TextIO) -> int:
    """``toolweave domains``: the names :func:`load_domain` accepts."""
    from toolweave.cli import render
    from toolweave.domains import available_domains, broken_plugins, hidden_documents

    where = {"data_dir": args.data_dir, "database_url": args.database_url}
    _print(available_domains(**where), out)
    hidden = [render.HIDDEN_DOCUMENTS.format(name=name) for name in hidden_documents(**where)]
    for line in [*render.broken_plugin_lines(broken_plugins(), verbose=args.verbose), *hidden]:
        print(f"{PROG}: {line}", file=sys.stderr)
    return 0


def cmd_explain(args: argparse.Namespace, out: TextIO) -> int:
    """``toolweave explain THREAD``: the latest run's ledger as a tree (L1)."""
    from toolweave.cli import render
    from toolweave.cli.session import read_thread
    from toolweave.persistence import data_dir
    from toolweave.run_ledger import explain
    from toolweave.state.graph_state import message_of

    values, status = read_thread(data_dir(args.data_dir), args.thread, args.database_url)
    if args.tool is not None:
        _print(render.tool_lines(args.thread, args.tool, explain(values, tool=args.tool)), out)
        return 0
    print(f"thread {args.thread} (latest message)", file=out)
    print(f"status: {status.describe}", file=out)
    tree = render.ledger_tree(
        explain(values),
        offered=list(message.offered) if (message := message_of(values)) else [],
        question=message.question if message else None,
        answer=None if values.get("answer") is None else "\n".join(render.answer_lines(values)),
    )
    _print(tree, out)
    return 0


COMMANDS = {
    "ask": cmd_ask, "chat": cmd_chat, "tools": cmd_tools, "domains": cmd_domains,
    "explain": cmd_explain, "ingest": cli_ingest.cmd_ingest, "eval": cli_eval.cmd_eval,
}  # fmt: skip


START_UP_IMPORTS: dict[str, tuple[str, ...]] = {
    command: ("toolweave.cli.session", "toolweave.cli.render", "toolweave.domains")
    for command in ("ask", "chat", "explain")
}
"""What a command imports before it runs, loaded by :func:`_start_up` (issue 16 item 4)."""


def _start_up(command: str) -> None:
    """Import what ``command`` needs with the collector off, then ``gc.freeze`` it (no garbage)."""
    modules = START_UP_IMPORTS.get(command, ())
    if not modules or all(name in sys.modules for name in modules) or not gc.isenabled():
        return
    gc.disable()
    try:
        for name in modules:
            importlib.import_module(name)
    except ImportError:  # the command imports it again and reports the failure in one line
        pass
    finally:
        gc.freeze()
        gc.enable()


@contextmanager
def _logging_to_stderr(verbose: bool) -> Iterator[None]:
    """Log to stderr while a command runs: errors only, or everything from INFO with -v."""
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{PROG}: %(levelname)s: %(name)s: %(message)s"))
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO if verbose else logging.ERROR)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit code.

    Args:
        argv: The arguments after the program name; ``None`` reads ``sys.argv``.

    Returns:
        0 on success, 2 on bad input (one line on stderr, X1), 130 on Ctrl-C,
        1 when a model or database failed or something unexpected happened.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    _start_up(args.command)
    from toolweave.state.errors import USER_ERRORS, ToolweaveError
    from toolweave.state.secrets import redact

    try:
        with _logging_to_stderr(args.verbose):
            if getattr(args, "database_url", None):  # every command: a database that is down
                from toolweave.persistence import require_reachable

                require_reachable(args.database_url)
            return COMMANDS[args.command](args, sys.stdout)
    except BrokenPipeError:
        return _pipe_closed()
    except ToolweaveError as exc:
        _print([redact(line) for line in _error_lines(exc, verbose=args.verbose)], sys.stderr)
        return EXIT_USAGE if isinstance(exc, USER_ERRORS) else EXIT_FAILED  # else an outage
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        if args.verbose:
            raise
        print(redact(f"{PROG}: error: {_unexpected(exc)}{DETAILS_HINT}"), file=sys.stderr)
        return EXIT_FAILED


def _unexpected(exc: BaseException) -> str:
    """One line in words about an error toolweave did not expect, no class name (X2)."""
    text = _without_class_names(" ".join(str(exc).split()), exc)
    if text:
        return f"unexpected error: {text}; a bug: please report it"
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = "" if tb is None else f" in {tb.tb_frame.f_globals.get('__name__', '?')}"
    return f"unexpected error{where}, a bug: please report it"


DETAILS_HINT = " (run with -v for details)"


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it, outermost first (bounded: a chain may loop)."""
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found and len(found) < 16:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _without_class_names(text: str, exc: BaseException) -> str:
    """``text`` without the names of the exception classes in ``exc``'s chain (X2)."""
    import re

    names = {cls.__name__ for error in _chain(exc) for cls in type(error).__mro__}
    names -= {"object", "BaseException"}
    if not names:
        return text
    alternatives = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    text = re.sub(rf"\s*\((?:{alternatives})\)", "", text)  # "... serves (AssertionError)"
    text = re.sub(rf"\b(?:{alternatives}): ", "", text)  # "(LlmBrokenReplyError: the ..."
    text = re.sub(rf"\((?:{alternatives})\b", "(", text)
    return " ".join(text.split())


def _error_lines(exc: BaseException, *, verbose: bool) -> list[str]:
    """One line in words (X1, X2); ``-v`` adds each cause's class and a model error's text (X4)."""
    from toolweave.llm.errors import LlmError

    text = " ".join(str(exc).split())
    if not verbose:
        plain = _without_class_names(text, exc)
        return [f"{PROG}: error: {plain}" + (DETAILS_HINT if plain != text else "")]
    lines = [f"{PROG}: error: {text} ({type(exc).__name__})"]
    for cause in _chain(exc)[1:]:
        kind = type(cause)
        detail = " ".join(str(cause).split()) if isinstance(cause, LlmError) else ""
        name = (
            kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        )
        lines.append(f"{PROG}:   caused by {name}" + (f": {detail}" if detail else ""))
    return lines


def _pipe_closed() -> int:
    """The reader of stdout left (``... | head``): drop what is buffered and end as SIGPIPE."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is no real file (tests capture it): nothing to flush
        pass
    return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
