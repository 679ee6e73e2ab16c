"""Atomic writes of small files (JSON, CSV): a temporary name in the same directory, then a rename."""

import json
import os
import uuid
from pathlib import Path


def write_text_atomic(path, text):
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one, never a part.

    Raises
    ------
    OSError
        If the directory is not writable or the disk is full; the temporary file is removed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json_atomic(path, obj):
    """Write ``obj`` as indented JSON, atomically (see :func:`write_text_atomic`)."""
    write_text_atomic(path, json.dumps(obj, indent=2) + "\n")
