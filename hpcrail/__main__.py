"""``python -m hpcrail ...`` is the ``hpcrail`` command (useful without the console script).

The SIGINT/SIGTERM handlers are installed before anything else is imported (typer, numba, the command's
modules take a second or more to import): a signal while the command starts exits with code 130 and
"interrupted (SIGNAL)", never with the signal's default action (:mod:`hpcrail.interrupt`)."""
from hpcrail.interrupt import install_entry_handlers


def main() -> None:
    """Entry point of the ``hpcrail`` console script and of ``python -m hpcrail``."""
    install_entry_handlers()
    from hpcrail.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
