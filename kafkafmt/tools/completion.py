"""``kafkafmt completion bash|zsh``: a shell completion script generated from the command line's own parsers
(shtab), so that it names every verb, option and choice the parsers have, and nothing they lack."""
from __future__ import annotations

from . import add_format


def register(sub) -> None:
    p = sub.add_parser(
        "completion", help="print a bash or zsh completion script for kafkafmt",
        description="Print a shell completion script generated from kafkafmt's parsers (every verb, option and "
                    "choice). bash: `kafkafmt completion bash > ~/.local/share/bash-completion/completions/kafkafmt` "
                    "(or `source <(kafkafmt completion bash)` in ~/.bashrc); zsh: `kafkafmt completion zsh > "
                    "\"${fpath[1]}/_kafkafmt\"`, then a new shell.")
    p.add_argument("shell", choices=("bash", "zsh"), help="the shell to complete in")
    add_format(p, ("table",))
    p.set_defaults(func=run)


def script(shell: str) -> str:
    """The completion script for ``shell`` (``bash`` or ``zsh``)."""
    import shtab

    from ..cli import make_parser
    return shtab.complete(make_parser(), shell=shell)


def run(args) -> int:
    print(script(args.shell))
    return 0
