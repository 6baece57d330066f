"""Make the repository importable as ansible_collections.clusterops.commcheck.

The repository root is the collection root; tests import it through a
symlink in .build/collections (the same path ANSIBLE_COLLECTIONS_PATH uses).
"""
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIONS = os.path.join(REPO, ".build", "collections")
LINK = os.path.join(COLLECTIONS, "ansible_collections", "clusterops", "commcheck")

if not os.path.lexists(LINK):
    os.makedirs(os.path.dirname(LINK), exist_ok=True)
    try:
        os.symlink(os.path.relpath(REPO, os.path.dirname(LINK)), LINK)
    except FileExistsError:
        pass
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)
os.environ.setdefault("ANSIBLE_COLLECTIONS_PATH", COLLECTIONS)
