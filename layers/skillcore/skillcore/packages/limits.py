"""The package format's limits (docs/packages.md "Limits"). A package travels base64-encoded inside a JSON body
of at most 64 KiB (api/http.py MAX_BODY_BYTES), so the zip itself stays under MAX_PACKAGE_BYTES."""

from __future__ import annotations

MAX_PACKAGE_BYTES = 45_000  # the zip: base64 of it (60,000 characters) and a signature fit one request body
MAX_ENTRIES = 64  # entries in the zip, directories included
MAX_FILES = 48  # files in the package
MAX_FILE_BYTES = 64 * 1024  # one file, uncompressed
MAX_TOTAL_BYTES = 256 * 1024  # every file, uncompressed
MAX_RATIO = 40  # uncompressed / compressed, per file (over 1 KiB) and for the whole package
RATIO_FLOOR_BYTES = 1024  # files smaller than this are not held to the ratio (tiny files compress oddly)
MAX_PATH_CHARS = 160
MAX_DEPTH = 3  # folder levels below the skill's folder: evals/x.json is depth 1
MAX_EVAL_CASES = 50  # over all the files of evals/
MAX_SIGNATURE_BYTES = 1024
