"""How the command line talks to the user about itself: one-line usage errors, conventional
metavars in ``--help``, and deprecated option spellings kept as hidden aliases.

- Usage errors (unknown option, missing option, bad choice, bad or out-of-range value) print
  ``ragdiag: error: --k: 'abc' is not a valid integer (see 'ragdiag correlate --help')`` on one
  stderr line and exit 2, like every other ragdiag error — never a boxed panel.
- ``--help`` is click's plain help in panels (:mod:`ragdiag.cli.help_format`; the app sets
  ``rich_markup_mode=None``): every option declares its metavar (TEXT, INTEGER, FLOAT, PATH or
  ``[a|b]``; flags none), an option name and its metavar are never wrapped or cut at any width,
  the help text wraps at spaces beside or under them.
- An old spelling (``index build --out``) is rewritten to its new name before parsing, with one
  ``ragdiag: note: --out is deprecated here, use --out-dir`` line on stderr.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Optional

import typer

if TYPE_CHECKING:  # the typer the lock file pins (0.29) vendors click as typer._click
    from typer._click.exceptions import BadParameter, ClickException, NoSuchOption, UsageError
    from typer.exceptions import Abort
else:
    try:  # recent typers vendor click as typer._click
        from typer._click.exceptions import BadParameter, ClickException, NoSuchOption, UsageError
        from typer.exceptions import Abort
    except ImportError:  # pragma: no cover - typer on top of click
        from click.exceptions import Abort, BadParameter, ClickException, NoSuchOption, UsageError

from ragdiag.cli.aliases import DEPRECATED

# typer's pydantic-style conversion messages → click's wording
_REWORDINGS: tuple[tuple[str, str], ...] = (
    (r"^(?:Value error, )?Input should be a valid integer.*$", "is not a valid integer"),
    (r"^(?:Value error, )?Input should be a valid number.*$", "is not a valid number"),
    (r"^(?:Value error, )?Input should be a valid boolean.*$", "is not a valid boolean"),
    (r"^(?:Value error, )?Input should be greater than or equal to (\S+)$", r"is out of range: must be ≥ \1"),
    (r"^(?:Value error, )?Input should be greater than (\S+)$", r"is out of range: must be > \1"),
    (r"^(?:Value error, )?Input should be less than or equal to (\S+)$", r"is out of range: must be ≤ \1"),
    (r"^(?:Value error, )?Input should be less than (\S+)$", r"is out of range: must be < \1"),
    (r"^(?:Value error, )?'[^']*' is not one of (.*?)\.?$", r"is not one of \1"),
    (r"^'[^']*' is not a valid (integer|float|integer range|float range)\.?$", r"is not a valid \1"),
    (r"^'?[^']*'? is not in the range (.*?)\.?$", r"is out of range: must be \1"),
)


def _flag_of(err: BadParameter) -> Optional[str]:
    param = getattr(err, "param", None)
    if param is not None and getattr(param, "opts", None):
        longs = [opt for opt in param.opts if opt.startswith("--")]
        return (longs or param.opts)[0]
    hint = getattr(err, "param_hint", None)
    if isinstance(hint, str):
        return hint.strip("'\"")
    if hint:
        return str(list(hint)[0]).strip("'\"")
    return None


def _value_given(args: Sequence[str], flag: str) -> Optional[str]:
    """The last value the user passed for ``flag`` (``--k abc`` or ``--k=abc``)."""
    value = None
    for i, token in enumerate(args):
        if token == "--":
            break
        if token == flag and i + 1 < len(args):
            value = args[i + 1]
        elif token.startswith(flag + "="):
            value = token[len(flag) + 1:]
    return value


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:1].isupper() and not text[1:2].isupper() else text


def _setting_source(err: BadParameter, args: Sequence[str], flag: Optional[str]) -> Optional[tuple[str, str, str]]:
    """(where, value, value as shown) when the bad value came from a ``RAGDIAG_*`` variable or the
    settings file, not a flag."""
    from ragdiag.io.settings import env_value, shown_env_value, value_source

    envvar = getattr(getattr(err, "param", None), "envvar", None)
    if not isinstance(envvar, str) or (flag and _value_given(args, flag) is not None):
        return None
    where, value = value_source(envvar), env_value(envvar)
    return None if where is None or value is None else (where, value, shown_env_value(envvar))


def _setting_line(source: tuple[str, str, str], message: str, flag: Optional[str], hint: str) -> str:
    """A bad setting named by its variable (or file and key), its value quoted unless it looks like a key."""
    where, value, shown = source
    for pattern, replacement in _REWORDINGS:
        if re.match(pattern, message):
            message = re.sub(pattern, replacement, message)
            break
    else:
        message = _lower_first(message).replace(value, "…") if value else _lower_first(message)
    fills = f" (it sets {flag}; fix it, or give {flag})" if flag else ""
    return f"{where}: {shown} {message}{fills}{hint}"


def usage_line(err: ClickException, args: Sequence[str], command: str = "ragdiag") -> str:
    """One line for a usage error: what is wrong, with which flag, and where help is
    (``command`` names the help to see when the error carries no context)."""
    ctx = getattr(err, "ctx", None)
    hint = f" (see '{ctx.command_path if ctx is not None else command} --help')"
    if isinstance(err, BadParameter) and type(err).__name__ != "MissingParameter":
        flag = _flag_of(err)
        message = str(err.message).strip().rstrip(".")
        message = message.replace("\n", " ")
        source = _setting_source(err, args, flag)
        if source is not None:
            return _setting_line(source, message, flag, hint)
        for pattern, replacement in _REWORDINGS:
            if re.match(pattern, message):
                value = _value_given(args, flag) if flag else None
                reworded = re.sub(pattern, replacement, message)
                message = f"{value!r} {reworded}" if value is not None else reworded
                break
        else:
            message = _lower_first(message)
        if flag and flag in message:  # the library already named it
            return f"{message}{hint}"
        return f"{flag}: {message}{hint}" if flag else f"{message}{hint}"
    if isinstance(err, NoSuchOption):
        message = f"no such option: {err.option_name}"
        if err.possibilities:
            message += f" (did you mean {', '.join(sorted(err.possibilities))}?)"
        return message + hint
    message = " ".join(err.format_message().split()).rstrip(".")
    return _lower_first(message) + hint


# ---------------------------------------------------------------- deprecated spellings


def _command_path(root: Any, args: Sequence[str]) -> tuple[tuple[str, ...], int]:
    """The subcommand names at the start of ``args`` (e.g. ("index", "build")) and how many tokens they take."""
    path: list[str] = []
    node = root
    for token in args:
        commands = getattr(node, "commands", None)
        if not commands or token not in commands:
            break
        path.append(token)
        node = commands[token]
    return tuple(path), len(path)


def rewrite_deprecated(root: Any, args: list[str], warn: Callable[[str], None]) -> list[str]:
    """Replace deprecated option spellings of the invoked command by their new names."""
    path, start = _command_path(root, args)
    table = DEPRECATED.get(" ".join(path))
    if not table:
        return args
    out = list(args[:start])
    noted: set[str] = set()
    i = start
    while i < len(args):
        token = args[i]
        if token == "--":
            out.extend(args[i:])
            break
        name, eq, inline = token.partition("=")
        renamed = table.get(name)
        if isinstance(renamed, tuple):  # a flag that became an option value
            if name not in noted:
                warn(f"ragdiag: note: {name} is deprecated here, use {' '.join(renamed)}")
                noted.add(name)
            out.extend(renamed)
            i += 1
            continue
        if renamed is not None:
            value = inline if eq else (args[i + 1] if i + 1 < len(args) else None)
            new = renamed(value) if callable(renamed) else renamed
            if new is not None and new != name:
                if name not in noted:
                    warn(f"ragdiag: note: {name} is deprecated here, use {new}")
                    noted.add(name)
                token = f"{new}={inline}" if eq else new
        out.append(token)
        i += 1
    return out


# ---------------------------------------------------------------- the command list of a group's help


def _commands_under(command: Any) -> Iterable[Any]:
    yield command
    for sub in (getattr(command, "commands", None) or {}).values():
        yield from _commands_under(sub)


def whole_short_help(root: Any) -> None:
    """A group's command list shows each command's first sentence whole (wrapped by click), not
    click's 45-character cut ending in "..."."""
    for command in _commands_under(root):
        for sub in (getattr(command, "commands", None) or {}).values():
            if sub.short_help or not sub.help:
                continue
            paragraph = " ".join(sub.help.split("\n\n")[0].split())
            sentence = re.split(r"(?<=[.;])\s", paragraph, maxsplit=1)[0]
            sub.short_help = sentence.rstrip(".;")


def main_one_line(super_main: Callable[..., Any], root: Any, args: Optional[Sequence[str]], **kwargs: Any) -> None:
    """Run the root command: deprecated spellings rewritten, usage errors on one line, exit code."""
    argv = list(sys.argv[1:] if args is None else args)
    argv = rewrite_deprecated(root, argv, lambda line: typer.echo(line, err=True))
    try:
        rv = super_main(args=argv, standalone_mode=False, **kwargs)
    except ClickException as err:
        if type(err).__name__ == "NoArgsIsHelpError":  # the help was the answer
            if err.format_message().strip():
                typer.echo(err.format_message(), err=True)
            sys.exit(err.exit_code)
        command = " ".join(["ragdiag", *_command_path(root, argv)[0]])
        typer.echo(f"ragdiag: error: {usage_line(err, argv, command)}", err=True)
        sys.exit(err.exit_code if isinstance(err, UsageError) else 2)
    except Abort:
        typer.echo("ragdiag: error: aborted", err=True)
        sys.exit(1)
    sys.exit(rv if isinstance(rv, int) else 0)
