"""The ``prefix-exec`` command (``python -m prefix_exec`` too).

``score``, ``convert`` and ``site`` run the Rust CLI in this process (``prefix_exec._native``):
the same subcommands, flags, output and exit codes as the native binary. ``view`` is Python's
own (:mod:`prefix_exec._view`). ``site`` is given the app packaged with the wheel unless
``--app`` is passed, so it works with no source tree.
"""

from __future__ import annotations

import signal
import sys
from typing import NoReturn, Optional, Sequence

VIEW_HELP = """
The Python package adds:
  view     Open the web app on 127.0.0.1 with rollout files and folders preloaded
           (prefix-exec view --help)
"""


def run(argv: Sequence[str]) -> int:
    """Runs ``prefix-exec`` with ``argv`` (without the program's name); returns the exit code."""
    from . import _native, app_dir

    args = list(argv)
    if args and args[0] == "view":
        from ._view import main as view

        return view(args[1:])
    if args and args[0] == "site" and not any(a == "--app" or a.startswith("--app=") for a in args):
        app = app_dir()
        if app is not None:
            args[1:1] = ["--app", app]
    sys.stdout.flush()
    sys.stderr.flush()
    code = _native.run_cli(["prefix-exec", *args])
    if code == 0 and args in (["--help"], ["-h"], ["help"]):
        sys.stdout.write(VIEW_HELP)
    return code


def main(argv: Optional[Sequence[str]] = None) -> NoReturn:
    """The console script's entry point."""
    # The Rust code runs with the GIL released, where Python's own SIGINT handler could only set
    # a flag; the default action ends the process at once, as Ctrl-C ends the native binary.
    if argv is None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(run(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
