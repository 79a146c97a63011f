"""CLI subcommands. Each module exposes ``register(subparsers)``; ``benchsmith.cli`` wires them."""
