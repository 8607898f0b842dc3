"""The parser and entry point of ``python -m cqlcodec`` (see :mod:`cqlcodec.cli`)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, Final, NoReturn

import cqlcodec
from cqlcodec.cli import codec_commands, copy_command, diff_command, exits, table_commands
from cqlcodec.cli.codec_commands import UsageError

UNRECOGNIZED: Final = "unrecognized arguments: "


class CliParser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2, and no abbreviated long options
    (``--password`` must never be taken for ``--password-env``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        if message.startswith(UNRECOGNIZED):  # option names only: a word may be a secret
            words = message[len(UNRECOGNIZED):].split()
            shown = [w.partition("=")[0] for w in words if w.startswith("-")]
            hidden = len(words) - len(shown)
            message = UNRECOGNIZED + " ".join(shown) + (
                f" (and {hidden} other word{'s' if hidden > 1 else ''})" if hidden else "")
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        sys.exit(exits.USAGE)


def version_line() -> str:
    """``cqlcodec 0.1.0 (compiled, COMPILED=True; v5 CRC32: zlib-ng)``: the version, the
    active build and which library checks protocol v5's CRC32 (zlib-ng, or the
    standard library's zlib without it)."""
    from cqlcodec.connection.checksums import crc32_provider

    build = "compiled" if cqlcodec.COMPILED else "interpreted"
    return (f"cqlcodec {cqlcodec.__version__} ({build}, COMPILED={cqlcodec.COMPILED}; "
            f"v5 CRC32: {crc32_provider()})")


class VersionAction(argparse.Action):
    """``--version``: prints :func:`version_line` (computed only when asked) and exits."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        sys.stdout.write(version_line() + "\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the tool (all subcommands)."""
    build = "compiled" if cqlcodec.COMPILED else "interpreted"
    parser = CliParser(
        prog="cqlcodec",
        description="Encode and decode CQL native-protocol values with cqlcodec; unload, "
                    "load, count and copy whole tables.",
        epilog=f"Active build: {build}. Run 'cqlcodec COMMAND --help' for a command's "
               f"options.\n\n{exits.DESCRIPTION}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=VersionAction, nargs=0,
                        help="show the version, the build and the CRC32 in use, and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CliParser)
    sub.required = True
    codec_commands.add_commands(sub)
    table_commands.add_commands(sub)
    copy_command.add_command(sub)
    diff_command.add_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m cqlcodec`` and the ``cqlcodec`` script; returns the
    exit status (:mod:`cqlcodec.cli.exits`)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
        return status
    except UsageError as exc:
        return fail(str(exc))
    except table_commands.TableCommandError as exc:
        return fail(str(exc), exc.status)
    except cqlcodec.CodecError as exc:
        return fail(str(exc), getattr(args, "error_status", exits.USAGE))
    except KeyboardInterrupt:
        sys.stderr.write("\ncqlcodec: interrupted\n")
        return exits.INTERRUPTED
    except BrokenPipeError:  # e.g. piped into head: stop quietly, as a shell tool would
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return exits.BROKEN_PIPE
    except Exception as exc:  # never a traceback for bad input
        if os.environ.get("CQLCODEC_DEBUG"):
            raise
        return fail(f"{type(exc).__name__}: {exc}", getattr(args, "error_status", exits.USAGE))


def fail(message: str, status: int = exits.USAGE) -> int:
    """Prints ``cqlcodec: error: MESSAGE`` on one line on stderr; returns ``status``."""
    line = " ".join(message.split())
    sys.stderr.write(f"cqlcodec: error: {line}\n")
    return status
