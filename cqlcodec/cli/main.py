"""The parser and entry point of ``python -m cqlcodec`` (see :mod:`cqlcodec.cli`)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

import cqlcodec
from cqlcodec.cli import codec_commands, exits, table_commands
from cqlcodec.cli.codec_commands import UsageError


class CliParser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        sys.exit(exits.USAGE)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the tool (all subcommands)."""
    build = "compiled" if cqlcodec.COMPILED else "interpreted"
    parser = CliParser(
        prog="cqlcodec",
        description="Encode and decode CQL native-protocol values with cqlcodec; unload, "
                    "load and count whole tables.",
        epilog=f"Active build: {build}. Run 'cqlcodec COMMAND --help' for a command's "
               f"options.\n\n{exits.DESCRIPTION}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version",
                        version=f"cqlcodec {cqlcodec.__version__} ({build}, COMPILED={cqlcodec.COMPILED})")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CliParser)
    sub.required = True
    codec_commands.add_commands(sub)
    table_commands.add_commands(sub)
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
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return exits.OK
    except Exception as exc:  # never a traceback for bad input
        if os.environ.get("CQLCODEC_DEBUG"):
            raise
        return fail(f"{type(exc).__name__}: {exc}", getattr(args, "error_status", exits.USAGE))


def fail(message: str, status: int = exits.USAGE) -> int:
    """Prints ``cqlcodec: error: MESSAGE`` on one line on stderr; returns ``status``."""
    line = " ".join(message.split())
    sys.stderr.write(f"cqlcodec: error: {line}\n")
    return status
