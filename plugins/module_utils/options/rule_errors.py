# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One error type per caller for the checks of ``option_rules``.

The modules' helpers (side options, mpirun lines, the MPI agent, quarantine) each raise an error of their own
(a subclass of ``OptionError``) so that their callers catch one type; ``raised_as`` runs a check and gives its
``OptionError`` that type, with the same message.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError


def raised_as(error, check, *args, **kwargs):
    """``check(*args, **kwargs)``; an ``OptionError`` it raises comes out as ``error`` (same message), one that
    already is an ``error`` as it is."""
    try:
        return check(*args, **kwargs)
    except error:
        raise
    except OptionError as exc:
        raise error(str(exc))
