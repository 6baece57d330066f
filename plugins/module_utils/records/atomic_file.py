# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One way to write a file whole: a reader sees the old file or the new one, never half of it."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import tempfile


def write_atomic(path, text, mode=0o644):
    """Write ``text`` to ``path`` through a temporary file in the same directory, fsync, then rename.

    ``text``: a string, or an iterable of the strings the file's text joins (each written as it comes; one that
    raises leaves no file and the old one as it was)."""
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            if isinstance(text, str):
                handle.write(text)
            else:
                for piece in text:
                    handle.write(piece)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
