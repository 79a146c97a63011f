"""``python -m benchsmith`` and the ``benchsmith`` program (its console script)."""

from benchsmith.core.program_exit import exit_without_teardown


def run() -> None:
    """Run the command line, then exit without the interpreter's teardown."""
    from benchsmith.cli import main

    exit_without_teardown(main())


if __name__ == "__main__":
    run()
