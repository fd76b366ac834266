"""CLI commands registered on :data:`hpcrail.cli.app` by feature modules."""
