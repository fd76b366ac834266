"""``python -m hpcrail ...`` is the ``hpcrail`` command (useful without the console script)."""
from hpcrail.cli import main

main()
