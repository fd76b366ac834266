"""CLI command modules; each imports ``hpcrail.cli.app`` and registers its commands."""
