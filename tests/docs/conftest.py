"""The checks of the built site run in ``nox -s docs`` only (which sets CQLCODEC_DOCS_SITE).

Elsewhere (the ``tests`` sessions) they are not collected at all, rather than skipped in
every session; the pages' examples (test_doc_examples.py) run everywhere.
"""

from __future__ import annotations

import os

collect_ignore = [] if os.environ.get("CQLCODEC_DOCS_SITE") else [
    "test_doc_reference.py", "test_doc_browser.py"]
