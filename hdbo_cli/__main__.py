"""``python -m hdbo_cli ARGS`` is ``hdbo ARGS``."""

from .cli import main

raise SystemExit(main())
